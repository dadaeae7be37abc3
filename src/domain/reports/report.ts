// Reporting content to the server admins: an event in a room the reporter is joined to (404 M_NOT_FOUND
// when the event is unknown or not visible to them, as Synapse), or a whole room (any user; 404 for an
// unknown room), or a user (MSC4260, below). `reason` is an optional string (required for rooms, may be blank); `score`, dropped
// from the spec in v1.14 but still sent by clients, is an integer from -100 to 0 when present.
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

export async function reportEvent(s: Services, r: Requester, roomId: string, eventId: string, body: Record<string, unknown>): Promise<void> {
  requireNotGuest(r, "reportEvent");
  const reason = reasonOf(body, false);
  const score = scoreOf(body);
  const notFound = () => new MatrixError("M_NOT_FOUND", "The event was not found or you are not joined to the room.", 404);
  const m = await s.rooms.store.membership(roomId, r.userId);
  if (m?.membership !== "join") throw notFound();
  const access = await readAccess(s, r, roomId).catch(() => {
    throw notFound();
  });
  const e = await s.rooms.events.get(eventId);
  if (!e || e.roomId !== roomId || (await filterVisible(s, r.userId, [e], access.membership, { keepIgnored: true })).length === 0) throw notFound();
  await s.reports.add({ receivedTs: s.clock.now(), roomId, eventId, userId: r.userId, reason, score });
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
  if (!(await loadRoom(s, roomId))) throw new MatrixError("M_NOT_FOUND", "The room was not found.", 404);
  await s.reports.add({ receivedTs: s.clock.now(), roomId, eventId: null, userId: r.userId, reason, score: null });
}
