// The rules server notices add to rooms and accounts (Synapse's): a server notices room is one its system
// user is joined to (only this server makes that user join, and only rooms it made for one user); the
// user it was made for may not reject the invite to it (M_CANNOT_LEAVE_SERVER_NOTICE_ROOM) though they may
// leave once joined; nobody may invite the system user, nor register its user id.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";

/** The system user's id, or undefined when server notices are off. */
export function serverNoticesUser(s: Services): string | undefined {
  return s.config.server_notices?.system_mxid;
}

export async function isServerNoticeRoom(s: Services, roomId: string): Promise<boolean> {
  const system = serverNoticesUser(s);
  return system !== undefined && (await s.rooms.store.membership(roomId, system))?.membership === "join";
}

/** Refuses the rejection of an invite to a server notices room (a leave while invited). */
export async function checkLeaveAllowed(s: Services, roomId: string, currentMembership: string | undefined): Promise<void> {
  if (currentMembership === "invite" && (await isServerNoticeRoom(s, roomId)))
    throw new MatrixError("M_CANNOT_LEAVE_SERVER_NOTICE_ROOM", "You cannot reject this invite", 403);
}

/** Refuses an invite of the system user (by a local user or another server). */
export function checkInviteTarget(s: Services, target: string): void {
  if (target === serverNoticesUser(s)) throw new MatrixError("M_FORBIDDEN", "Cannot invite this user", 403);
}

/** Refuses the registration of the system user's id. */
export function checkNotReserved(s: Services, userId: string): void {
  if (userId === serverNoticesUser(s)) throw new MatrixError("M_EXCLUSIVE", "This user ID is reserved.", 400);
}
