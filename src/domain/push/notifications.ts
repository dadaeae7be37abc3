// GET /notifications (spec: Client-Server API "Listing Notifications"): the events the user was notified
// about, newest first, `from` a token of this list (a stream position), `limit` (default 50, at most 100),
// `only=highlight`; each with its actions, the event as the user may see it, `read` (a receipt of theirs
// is at or after it, in its thread or unthreaded), when the notification was made, and `profile_tag`:
// always present, as Synapse sends it (clients and test suites look for the key), and null: it names the
// profile tag of the rule that matched, and no rule has one (device-scoped rule sets are long gone).
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { requireNotGuest } from "../accounts/guest-access.ts";
import type { Requester } from "../accounts/requester.ts";
import { serializeEvents } from "../rooms/serialize.ts";
import type { ClientEvent } from "../events/format.ts";

export interface NotificationsPage {
  notifications: { actions: unknown[]; event: ClientEvent; profile_tag: string | null; read: boolean; room_id: string; ts: number }[];
  next_token?: string;
}

export function parseNotificationsQuery(q: { from?: string; limit?: number; only?: string }): { before?: number; limit: number; onlyHighlight: boolean } {
  if (q.from !== undefined && !/^\d{1,16}$/.test(q.from)) throw new MatrixError("M_INVALID_PARAM", "Invalid from token", 400);
  if (q.only !== undefined && q.only !== "highlight") throw new MatrixError("M_INVALID_PARAM", "only must be highlight", 400);
  return { before: q.from !== undefined ? Number(q.from) : undefined, limit: Math.min(Math.max(q.limit ?? 50, 1), 100), onlyHighlight: q.only === "highlight" };
}

export async function getNotifications(s: Services, r: Requester, q: { before?: number; limit: number; onlyHighlight: boolean }): Promise<NotificationsPage> {
  requireNotGuest(r, "notifications");
  const rows = await s.push.notifications.list(r.userId, { before: q.before, limit: q.limit + 1, onlyHighlight: q.onlyHighlight });
  const page = rows.slice(0, q.limit);
  const stored = await s.rooms.events.getMany(page.map((n) => n.eventId));
  const kept = page.filter((n) => stored.has(n.eventId));
  const versions = new Map<string, string>();
  const rendered = await serializeEvents(s, r, async (roomId) => versions.get(roomId) ?? (await s.rooms.store.getRoom(roomId))?.roomVersion ?? "1", kept.map((n) => stored.get(n.eventId)!), { omitRoomId: false });
  const read = await s.push.notifications.readUpTo(r.userId, [...new Set(kept.map((n) => n.roomId))]);
  const notifications = kept.map((n, i) => {
    const upTo = read.get(n.roomId);
    const isRead = Math.max(upTo?.get("") ?? 0, upTo?.get(n.threadId) ?? 0) >= n.streamOrdering;
    return { actions: JSON.parse(n.actions) as unknown[], event: rendered[i]!, profile_tag: null, read: isRead, room_id: n.roomId, ts: n.ts };
  });
  return rows.length > q.limit ? { notifications, next_token: String(page[page.length - 1]!.streamOrdering) } : { notifications };
}
