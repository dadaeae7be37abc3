import { backfillForServer } from "../../domain/federation/backfill.js";
import { MatrixError } from "../../domain/errors.js";
import { queryInt } from "../http.js";
import { federationRoute } from "./route.js";
/** Every value of a repeated query parameter (at least one). */
function queryList(c, name) {
    const v = c.query[name];
    const list = (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((x) => x !== "");
    if (list.length === 0)
        throw new MatrixError("M_MISSING_PARAM", `Missing ${name} query parameter`, 400);
    return list;
}
export function federationBackfillRoutes(app, s) {
    federationRoute(app, s, {
        method: "GET", path: "/backfill/:roomId", auth: "signed",
        handler: (c) => {
            const limit = queryInt(c, "limit", { min: 0 });
            if (limit === undefined)
                throw new MatrixError("M_MISSING_PARAM", "Missing limit query parameter", 400);
            return backfillForServer(s, c.origin, c.params.roomId, queryList(c, "v"), limit);
        },
    });
}
