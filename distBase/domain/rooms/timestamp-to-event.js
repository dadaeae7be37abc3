// GET /rooms/{roomId}/timestamp_to_event: the event closest to a timestamp, at or after it (dir f) or
// at or before it (dir b), among those the caller may see (read access and history visibility); 404
// M_NOT_FOUND when there is none. Only this server's copy of the room is searched (no federation yet).
// Spec: Client-Server API "GET /_matrix/client/v1/rooms/{roomId}/timestamp_to_event".
import { MatrixError } from "../errors.js";
import { readAccess } from "./read-access.js";
import { filterVisible } from "./visibility.js";
const BATCH = 50;
const MAX_SCANNED = 5000;
export async function timestampToEvent(s, r, roomId, ts, dir) {
    const access = await readAccess(s, r, roomId);
    for (let offset = 0; offset < MAX_SCANNED; offset += BATCH) {
        const page = await s.rooms.events.byTimestamp(roomId, ts, dir, BATCH, offset);
        const readable = page.filter((e) => access.upTo === undefined || e.streamOrdering <= access.upTo);
        const [found] = await filterVisible(s, r.userId, readable, access.membership);
        if (found)
            return { event_id: found.eventId, origin_server_ts: found.pdu.origin_server_ts };
        if (page.length < BATCH)
            break;
    }
    throw new MatrixError("M_NOT_FOUND", `Unable to find event ${dir === "f" ? "after" : "before"} ${ts} in room ${roomId}`, 404);
}
