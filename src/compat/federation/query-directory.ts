// GET /_matrix/federation/v1/query/directory (signed): the room and servers of one of our aliases.
// Spec: Server-Server API "Querying for information".
// LEAD: a stand-in until fed-sender's query.ts serves this route: keep one on merge.
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { queryString } from "../http.ts";
import { federationRoute } from "./route.ts";
import { serveDirectoryQuery } from "../../domain/federation/membership/remote-alias.ts";

export function federationDirectoryQueryRoutes(app: FastifyInstance, s: Services): void {
  federationRoute(app, s, { method: "GET", path: "/query/directory", auth: "signed", handler: (c) => serveDirectoryQuery(s, queryString(c, "room_alias", true)) });
}
