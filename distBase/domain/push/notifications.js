// GET /notifications (spec: Client-Server API "Listing Notifications"): the events the user was notified
// about, newest first, `from` a token of this list (a stream position), `limit` (default 50, at most 100),
// `only=highlight`; each with its actions, the event as the user may see it, `read` (a receipt of theirs
// is at or after it, in its thread or unthreaded) and when the notification was made.
import { MatrixError } from "../errors.js";
import { requireNotGuest } from "../accounts/guest-access.js";
import { serializeEvents } from "../rooms/serialize.js";
export function parseNotificationsQuery(q) {
    if (q.from !== undefined && !/^\d{1,16}$/.test(q.from))
        throw new MatrixError("M_INVALID_PARAM", "Invalid from token", 400);
    if (q.only !== undefined && q.only !== "highlight")
        throw new MatrixError("M_INVALID_PARAM", "only must be highlight", 400);
    return { before: q.from !== undefined ? Number(q.from) : undefined, limit: Math.min(Math.max(q.limit ?? 50, 1), 100), onlyHighlight: q.only === "highlight" };
}
export async function getNotifications(s, r, q) {
    requireNotGuest(r, "notifications");
    const rows = await s.push.notifications.list(r.userId, { before: q.before, limit: q.limit + 1, onlyHighlight: q.onlyHighlight });
    const page = rows.slice(0, q.limit);
    const stored = await s.rooms.events.getMany(page.map((n) => n.eventId));
    const kept = page.filter((n) => stored.has(n.eventId));
    const versions = new Map();
    const rendered = await serializeEvents(s, r, async (roomId) => versions.get(roomId) ?? (await s.rooms.store.getRoom(roomId))?.roomVersion ?? "1", kept.map((n) => stored.get(n.eventId)), { omitRoomId: false });
    const read = await s.push.notifications.readUpTo(r.userId, [...new Set(kept.map((n) => n.roomId))]);
    const notifications = kept.map((n, i) => {
        const upTo = read.get(n.roomId);
        const isRead = Math.max(upTo?.get("") ?? 0, upTo?.get(n.threadId) ?? 0) >= n.streamOrdering;
        return { actions: JSON.parse(n.actions), event: rendered[i], read: isRead, room_id: n.roomId, ts: n.ts };
    });
    return rows.length > q.limit ? { notifications, next_token: String(page[page.length - 1].streamOrdering) } : { notifications };
}
