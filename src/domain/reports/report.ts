// Reporting content to the server admins: an event in a room the reporter is joined to (404 M_NOT_FOUND
// when the event is unknown or not visible to them, as Synapse), or a whole room (any user; 404 for an
// unknown room), or a user (MSC4260, below). `reason` is an optional string (required for rooms, may be
// blank); `score`, dropped from the spec in v1.14 but still sent by clients, is an integer from -100 to 0
// when present. With `experimental_features.msc4277_enabled` (spec v1.18, MSC4277, as Synapse's flag):
// an unknown or invisible event and an unknown room answer 200 like a kept report (nothing is kept), so
// a report tells nothing of what exists, and `score` (removed from the spec) is ignored, not checked.
// Spec: Client-Server API "Reporting content".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { readAccess } from "../rooms/read-access.ts";
import { filterVisible } from "../rooms/visibility.ts";
import { loadRoom } from "../rooms/room-cache.ts";
import { requireNotGuest } from "../accounts/guest-access.ts";
import { checkStorableText } from "../text.ts";
import { isValidUserId, parseUserId } from "../ids.ts";

function reasonOf(body: Record<string, unknown>, required: boolean): string | null {
  const reason = body.reason;
  if (reason === undefined || reason === null) {
    if (required) throw new MatrixError("M_MISSING_PARAM", "Missing reason", 400);
    return null;
  }
  if (typeof reason !== "string") throw new MatrixError("M_BAD_JSON", "reason must be a string", 400);
  return checkStorableText(reason, "reason");
}

function scoreOf(body: Record<string, unknown>): number | null {
  const score = body.score;
  if (score === undefined || score === null) return null;
  if (typeof score !== "number" || !Number.isInteger(score) || score < -100 || score > 0)
    throw new MatrixError("M_INVALID_PARAM", "score must be an integer between -100 and 0", 400);
  return score;
}

/** MSC4277's privacy rule: reports of what does not exist (or is not visible) answer as kept ones. */
const hidesExistence = (s: Services) => s.config.experimental_features.msc4277_enabled;

export async function reportEvent(s: Services, r: Requester, roomId: string, eventId: string, body: Record<string, unknown>): Promise<void> {
  requireNotGuest(r, "reportEvent");
  const reason = reasonOf(body, false);
  const score = hidesExistence(s) ? null : scoreOf(body);
  if (!(await reportableEvent(s, r, roomId, eventId))) {
    if (hidesExistence(s)) return;
    throw new MatrixError("M_NOT_FOUND", "The event was not found or you are not joined to the room.", 404);
  }
  await s.reports.add({ receivedTs: s.clock.now(), roomId, eventId, userId: r.userId, reason, score });
}

/** Whether the reporter is joined to the room and may see the event there. */
async function reportableEvent(s: Services, r: Requester, roomId: string, eventId: string): Promise<boolean> {
  const m = await s.rooms.store.membership(roomId, r.userId);
  if (m?.membership !== "join") return false;
  const access = await readAccess(s, r, roomId).catch(() => undefined);
  if (!access) return false;
  const e = await s.rooms.events.get(eventId);
  return !!e && e.roomId === roomId && (await filterVisible(s, r.userId, [e], access.membership, { keepIgnored: true })).length > 0;
}

/**
 * POST /users/{userId}/report (spec v1.14, MSC4260): `reason` a string (required, may be blank, at most
 * 1,000 characters). Recorded for a local account that exists; a remote or unknown user gets the same
 * 200 and nothing is kept (as Synapse: the answer does not tell whether the user exists, MSC4277).
 */
export async function reportUser(s: Services, r: Requester, userId: string, body: Record<string, unknown>): Promise<void> {
  requireNotGuest(r, "reportUser");
  if (!isValidUserId(userId)) throw new MatrixError("M_INVALID_PARAM", "Not a user ID", 400);
  const reason = reasonOf(body, true)!;
  if (reason.length > 1000) throw new MatrixError("M_BAD_JSON", "Reason must be less than 1000 characters", 400);
  if (parseUserId(userId).serverName !== s.config.server_name) return;
  if (!(await s.users.get(userId))) return;
  await s.reports.addUserReport({ receivedTs: s.clock.now(), targetUserId: userId, userId: r.userId, reason });
}

export async function reportRoom(s: Services, r: Requester, roomId: string, body: Record<string, unknown>): Promise<void> {
  requireNotGuest(r, "reportRoom");
  const reason = reasonOf(body, true);
  if (!(await loadRoom(s, roomId))) {
    if (hidesExistence(s)) return;
    throw new MatrixError("M_NOT_FOUND", "The room was not found.", 404);
  }
  await s.reports.add({ receivedTs: s.clock.now(), roomId, eventId: null, userId: r.userId, reason, score: null });
}
