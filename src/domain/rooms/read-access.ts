// Who may read a room and up to where: members read everything their history visibility allows; a user
// who left (or was kicked or banned) reads up to that moment; anyone reads a world_readable room.
// Spec: Client-Server API "Room membership" reads, "History visibility".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { currentStateEvent, loadRoom, type RoomSnapshot } from "./room-cache.ts";

/** The refusal of a read of a room the requester may not see (or that does not exist: the same answer). */
export function roomNotVisible(): MatrixError {
  return new MatrixError("M_FORBIDDEN", "You are not in this room (or it does not exist)", 403);
}

export interface ReadAccess {
  room: RoomSnapshot;
  /** The requester's current membership (undefined: none). */
  membership: string | undefined;
  /** Highest stream position readable (their leave event for former members); undefined: all. */
  upTo: number | undefined;
  /** The state group to show as "current" state (the one at their leave, for former members). */
  stateGroup: number | undefined;
  /** A server admin reading through the admin API: every event is shown, history visibility aside. */
  everything?: boolean;
}

/** The requester's membership row as read-access needs it (null: none). */
export type KnownMembership = { membership: string; forgotten: boolean; eventId: string; streamOrdering: number } | null;

/**
 * `known`: the requester's membership when the caller already holds it (a live reader takes it from
 * sync's in-memory memberships, kept current at every commit); otherwise it is read from storage.
 */
export async function readAccess(s: Services, r: Requester, roomId: string, known?: KnownMembership): Promise<ReadAccess> {
  const room = await loadRoom(s, roomId);
  if (!room) throw roomNotVisible();
  const m = known !== undefined ? (known ?? undefined) : await s.rooms.store.membership(roomId, r.userId);
  if (m?.membership === "join") return { room, membership: "join", upTo: undefined, stateGroup: room.stateGroup };
  const hv = await currentStateEvent(s, room, "m.room.history_visibility");
  if (hv?.content.history_visibility === "world_readable") return { room, membership: m?.membership, upTo: undefined, stateGroup: room.stateGroup };
  // A forgotten room's history is no longer retrievable (spec: POST /rooms/{roomId}/forget).
  if (m && !m.forgotten && (m.membership === "leave" || m.membership === "ban")) {
    const leave = await s.rooms.events.get(m.eventId);
    return { room, membership: m.membership, upTo: m.streamOrdering, stateGroup: leave?.stateGroup ?? undefined };
  }
  throw new MatrixError("M_FORBIDDEN", "You are not in this room", 403);
}
