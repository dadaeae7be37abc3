import { MatrixError } from "../../domain/errors.js";
import { clientRoute, queryBool, queryInt, queryString } from "../http.js";
import { getRelations } from "../../domain/relations/get-relations.js";
import { getThreads } from "../../domain/relations/threads.js";
import { timestampToEvent } from "../../domain/rooms/timestamp-to-event.js";
function dirParam(c, fallback) {
    const dir = queryString(c, "dir") ?? fallback;
    if (dir === undefined)
        throw new MatrixError("M_MISSING_PARAM", "Missing dir query parameter", 400);
    if (dir !== "b" && dir !== "f")
        throw new MatrixError("M_INVALID_PARAM", "dir must be b or f", 400);
    return dir;
}
export function relationRoutes(app, s) {
    for (const path of ["/rooms/:roomId/relations/:eventId", "/rooms/:roomId/relations/:eventId/:relType", "/rooms/:roomId/relations/:eventId/:relType/:eventType"]) {
        clientRoute(app, s, {
            method: "GET", path, auth: "token", versions: ["v1"],
            handler: (c) => getRelations(s, c.requester, c.params.roomId, c.params.eventId, {
                relType: c.params.relType,
                eventType: c.params.eventType,
                from: queryString(c, "from"),
                to: queryString(c, "to"),
                dir: dirParam(c, "b"),
                limit: queryInt(c, "limit", { min: 0 }),
                recurse: queryBool(c, "recurse"),
            }),
        });
    }
    clientRoute(app, s, {
        method: "GET", path: "/rooms/:roomId/threads", auth: "token", versions: ["v1"],
        handler: (c) => {
            const include = queryString(c, "include") ?? "all";
            if (include !== "all" && include !== "participated")
                throw new MatrixError("M_INVALID_PARAM", "include must be all or participated", 400);
            return getThreads(s, c.requester, c.params.roomId, { include, from: queryString(c, "from"), limit: queryInt(c, "limit", { min: 1 }) });
        },
    });
    clientRoute(app, s, {
        method: "GET", path: "/rooms/:roomId/timestamp_to_event", auth: "token", versions: ["v1"],
        handler: (c) => {
            const ts = queryInt(c, "ts", { required: true, min: 0 });
            return timestampToEvent(s, c.requester, c.params.roomId, ts, dirParam(c));
        },
    });
}
