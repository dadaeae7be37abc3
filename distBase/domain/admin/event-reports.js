// Listing event reports for server admins (Synapse admin API "Event Reports", GET
// /_synapse/admin/v1/event_reports): offset paging (`from`, `limit`, `next_token`, `total`), newest
// first unless dir=f, filtered by room_id and reporting user_id; each report with the room's name and
// canonical alias and the reported event's sender.
import { MatrixError } from "../errors.js";
import { RoomBatchReads } from "../store/rooms.js";
import { requireAdmin } from "./require-admin.js";
export async function listEventReports(s, requester, q) {
    requireAdmin(requester);
    const from = q.from ?? 0;
    const limit = q.limit ?? 100;
    if (from < 0)
        throw new MatrixError("M_INVALID_PARAM", "The from parameter must be a positive integer.", 400);
    if (limit < 0)
        throw new MatrixError("M_INVALID_PARAM", "The limit parameter must be a positive integer.", 400);
    const dir = q.dir ?? "b";
    if (dir !== "b" && dir !== "f")
        throw new MatrixError("M_INVALID_PARAM", "Unknown direction: " + dir, 400);
    const { reports, total } = await s.reports.list({ events: true, roomId: q.roomId, userId: q.userId, dir, offset: from, limit });
    const roomIds = [...new Set(reports.map((x) => x.roomId))];
    const state = await new RoomBatchReads(s.storage.sql).currentStateOfTypes(roomIds, ["m.room.name", "m.room.canonical_alias"]);
    const events = await s.rooms.events.getMany([
        ...reports.map((x) => x.eventId),
        ...[...state.values()].flatMap((m) => [...m.values()]),
    ]);
    const field = (roomId, type, key) => {
        const id = state.get(roomId)?.get(type);
        const v = id ? events.get(id)?.pdu.content[key] : undefined;
        return typeof v === "string" ? v : null;
    };
    const out = {
        event_reports: reports.map((x) => ({
            id: x.id,
            received_ts: x.receivedTs,
            room_id: x.roomId,
            name: field(x.roomId, "m.room.name", "name"),
            canonical_alias: field(x.roomId, "m.room.canonical_alias", "alias"),
            event_id: x.eventId,
            user_id: x.userId,
            sender: events.get(x.eventId)?.pdu.sender ?? null,
            reason: x.reason,
            score: x.score,
        })),
        total,
    };
    if (from + reports.length < total)
        out.next_token = from + reports.length;
    return out;
}
