import { federationPublicRooms, publicRoomsBody } from "../../domain/directory/public-rooms.js";
import { queryBool, queryInt, queryString } from "../http.js";
import { federationHierarchy } from "../../domain/spaces/federation-hierarchy.js";
import { federationRoute } from "./route.js";
export function federationDirectoryRoutes(app, s) {
    federationRoute(app, s, {
        method: "GET", path: "/publicRooms", auth: "signed",
        handler: (c) => federationPublicRooms(s, { limit: queryInt(c, "limit", { min: 0 }), since: queryString(c, "since") }),
    });
    federationRoute(app, s, { method: "POST", path: "/publicRooms", auth: "signed", handler: (c) => federationPublicRooms(s, publicRoomsBody(c.body())) });
    federationRoute(app, s, {
        method: "GET", path: "/hierarchy/:roomId", auth: "signed",
        handler: (c) => federationHierarchy(s, c.origin, c.params.roomId, queryBool(c, "suggested_only") ?? false),
    });
}
