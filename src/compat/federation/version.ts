// GET /_matrix/federation/v1/version: the implementation's name and version, unauthenticated as in Synapse.
// Spec: Server-Server API "Server implementation".
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { SERVER_SOFTWARE } from "../../domain/server/version.ts";
import { federationRoute } from "./route.ts";

export function federationVersionRoutes(app: FastifyInstance, s: Services): void {
  federationRoute(app, s, { method: "GET", path: "/version", auth: "none", handler: () => ({ server: { ...SERVER_SOFTWARE } }) });
}
