import { MatrixError } from "../errors.js";
import { fedPath } from "../../federation/client.js";
import { FederationError } from "../../federation/errors.js";
import { isPlainObject } from "../events/types.js";
import { pdusForServer, roomForServer } from "./server-visibility.js";
import { missingEventsWalk } from "./dag-walk.js";
/** Most events served per request (Synapse's cap). */
const MAX_SERVED = 20;
/** Most ids accepted in earliest_events / latest_events. */
const MAX_EARLIEST = 1000;
const MAX_LATEST = 100;
/** Events asked for when fetching, and most accepted from an answer. */
export const FETCH_LIMIT = 10;
const MAX_ACCEPTED = 20;
function idList(body, field, max) {
    const v = body[field];
    if (v === undefined)
        throw new MatrixError("M_MISSING_PARAM", `Missing ${field}`, 400);
    if (!Array.isArray(v) || !v.every((x) => typeof x === "string"))
        throw new MatrixError("M_BAD_JSON", `${field} must be a list of event ids`, 400);
    if (v.length > max)
        throw new MatrixError("M_BAD_JSON", `${field} has more than ${max} entries`, 400);
    return v;
}
function integer(body, field, fallback) {
    const v = body[field];
    if (v === undefined)
        return fallback;
    if (typeof v !== "number" || !Number.isSafeInteger(v))
        throw new MatrixError("M_BAD_JSON", `${field} must be an integer`, 400);
    return v;
}
/** The request body, checked (M_BAD_JSON / M_MISSING_PARAM). */
export function parseMissingEventsRequest(body) {
    return {
        earliest: idList(body, "earliest_events", MAX_EARLIEST),
        latest: idList(body, "latest_events", MAX_LATEST),
        limit: Math.max(0, Math.min(integer(body, "limit", 10), MAX_SERVED)),
        minDepth: integer(body, "min_depth", 0),
    };
}
/** Serves /get_missing_events to `origin` (404 unknown room, 403 when it has no member in it). */
export async function missingEventsForServer(s, origin, roomId, req) {
    const room = await roomForServer(s, roomId, origin, { allowPartialState: true });
    const events = await missingEventsWalk(s, room, req.earliest, req.latest, req.limit, req.minDepth);
    return { events: await pdusForServer(s, origin, room, events) };
}
/**
 * Asks the fetcher's server for the events before `pdu` that this server lacks: those after `earliest`
 * (our forward extremities and the prev_events we have), above `minDepth`. Returns the answer's events
 * (untrusted JSON, at most 20; `pdu` itself left out).
 */
export async function fetchMissingEvents(fetcher, pdu, earliest, minDepth) {
    const roomId = fetcher.room.roomId;
    const answer = await fetcher.post(fedPath `/_matrix/federation/v1/get_missing_events/${roomId}`, { earliest_events: [...new Set(earliest)], latest_events: [pdu.eventId], limit: FETCH_LIMIT, min_depth: minDepth }, 4 * 1024 * 1024);
    const list = isPlainObject(answer) ? answer["events"] : undefined;
    if (!Array.isArray(list))
        throw new FederationError("invalid_response", fetcher.server, "no events list");
    return list.slice(0, MAX_ACCEPTED);
}
