import { federationProfileQuery } from "../../domain/profile/profile.js";
import { federationDirectoryQuery } from "../../domain/federation/directory-query.js";
import { queryString } from "../http.js";
import { federationRoute } from "./route.js";
export function federationQueryRoutes(app, s) {
    federationRoute(app, s, {
        method: "GET", path: "/query/profile", auth: "signed",
        handler: (c) => federationProfileQuery(s, queryString(c, "user_id", true), queryString(c, "field")),
    });
    federationRoute(app, s, {
        method: "GET", path: "/query/directory", auth: "signed",
        handler: (c) => federationDirectoryQuery(s, queryString(c, "room_alias", true)),
    });
}
