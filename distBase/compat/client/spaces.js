import { clientRoute, queryBool, queryInt, queryString } from "../http.js";
import { getHierarchy } from "../../domain/spaces/hierarchy.js";
export function spaceRoutes(app, s) {
    clientRoute(app, s, {
        method: "GET", path: "/rooms/:roomId/hierarchy", auth: "token", versions: ["v1"],
        handler: (c) => getHierarchy(s, c.requester, c.params.roomId, {
            suggestedOnly: queryBool(c, "suggested_only"),
            maxDepth: queryInt(c, "max_depth"),
            limit: queryInt(c, "limit"),
            from: queryString(c, "from"),
        }),
    });
}
