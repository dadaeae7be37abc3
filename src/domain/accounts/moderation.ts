// Account moderation: locking (MSC3939, spec v1.12) and suspension (MSC3823, spec v1.13), and who may set
// them (spec v1.18 "Server administration": GET/PUT /_matrix/client/v1/admin/{lock,suspend}/{userId}, the
// `m.account_moderation` capability; Synapse's admin API sets the same flags). A locked account's every
// request but logging out answers 401 M_USER_LOCKED with soft_logout (authenticate.ts), and it cannot log
// in. A suspended account may read, leave rooms and redact its own events; it may not send other events,
// join, knock, invite, ban, create rooms, upload media or change its profile: 403 M_USER_SUSPENDED (the
// checks below, called by those operations). Changes drop the account's cached token lookups at once.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "./requester.ts";
import { localUserId } from "../admin/users.ts";
import { invalidateUserTokens } from "./authenticate.ts";

export const lockedError = () => new MatrixError("M_USER_LOCKED", "User account has been locked", 401, { soft_logout: true });
const suspended = (what: string) => new MatrixError("M_USER_SUSPENDED", `${what} while account is suspended is not allowed`, 403);

/** Refuses `what` (sending messages, joining rooms ...) to a suspended requester. */
export function requireNotSuspended(r: Pick<Requester, "suspended">, what: string): void {
  if (r.suspended) throw suspended(what);
}

/** A suspended requester may change only its own membership to leave (leave, kick, unban), as Synapse. */
export function requireMembershipAllowed(r: Pick<Requester, "suspended">, membership: string): void {
  if (r.suspended && membership !== "leave") throw suspended("Changing membership");
}

/** A suspended requester may redact only its own events. */
export async function requireRedactionAllowed(s: Services, r: Pick<Requester, "suspended" | "userId">, eventId: string): Promise<void> {
  if (!r.suspended) return;
  const target = await s.rooms.events.get(eventId);
  if (target && target.pdu.sender !== r.userId) throw new MatrixError("M_USER_SUSPENDED", "You can only redact your own events while account is suspended", 403);
}

export type ModerationFlag = "locked" | "suspended";

/** The target of a moderation request, checked as the spec says: a local, existing, active account. */
async function moderationTarget(s: Services, r: Requester, userId: string): Promise<void> {
  if (!r.isAdmin) throw new MatrixError("M_FORBIDDEN", "Requesting user is not a server administrator", 403);
  localUserId(s, userId, "moderate");
  const user = await s.users.get(userId);
  if (!user || user.deactivated) throw new MatrixError("M_NOT_FOUND", "User not found", 404);
  if (user.isAdmin && userId !== r.userId) throw new MatrixError("M_FORBIDDEN", "The target user is a server administrator", 403);
}

/** GET /admin/{lock,suspend}/{userId}: the flag of a local account (server admins only). */
export async function getModerationFlag(s: Services, r: Requester, userId: string, flag: ModerationFlag): Promise<boolean> {
  await moderationTarget(s, r, userId);
  const user = (await s.users.get(userId))!;
  return flag === "locked" ? user.locked : user.suspended;
}

/** Sets a flag: the admin API's (PUT /admin/{lock,suspend}/{userId}); never on oneself. */
export async function setModerationFlag(s: Services, r: Requester, userId: string, flag: ModerationFlag, value: unknown): Promise<boolean> {
  await moderationTarget(s, r, userId);
  if (typeof value !== "boolean") throw new MatrixError("M_BAD_JSON", `${flag} must be a boolean`, 400);
  if (userId === r.userId) throw new MatrixError("M_FORBIDDEN", `You cannot change your own ${flag} status`, 403);
  await writeModerationFlag(s, userId, flag, value);
  return value;
}

/** Writes a flag (also for Synapse's admin API, which checks its own rules) and drops cached token lookups. */
export async function writeModerationFlag(s: Services, userId: string, flag: ModerationFlag, value: boolean): Promise<void> {
  await s.users.setModerationFlag(userId, flag, value);
  await invalidateUserTokens(s, userId);
}

/** `m.account_moderation` for /capabilities: present for server admins only (the spec: omitted when both would be false). */
export function accountModerationCapability(r: Requester): { suspend: boolean; lock: boolean } | undefined {
  return r.isAdmin ? { suspend: true, lock: true } : undefined;
}
