// Federation queries (signed): GET /_matrix/federation/v1/query/profile and /query/directory.
// Spec: Server-Server API "Querying for information".
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { federationProfileQuery } from "../../domain/profile/profile.ts";
import { federationDirectoryQuery } from "../../domain/federation/directory-query.ts";
import { queryString } from "../http.ts";
import { federationRoute } from "./route.ts";

export function federationQueryRoutes(app: FastifyInstance, s: Services): void {
  federationRoute(app, s, {
    method: "GET", path: "/query/profile", auth: "signed",
    handler: (c) => federationProfileQuery(s, queryString(c, "user_id", true), queryString(c, "field")),
  });
  federationRoute(app, s, {
    method: "GET", path: "/query/directory", auth: "signed",
    handler: (c) => federationDirectoryQuery(s, queryString(c, "room_alias", true)),
  });
}
