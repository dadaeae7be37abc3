// GET /versions (optional authentication: a token, if sent, must be valid; spec: "API Standards") and
// MatrixRTC's GET /unstable/org.matrix.msc4143/rtc/transports (MSC4143, as Synapse serves it).
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { versionsResponse } from "../../domain/server/versions.ts";
import { BRANDS, clientRoute, route, type AuthedCall } from "../http.ts";
import { rtcTransports } from "../../domain/server/client-discovery.ts";

export function serverInfoRoutes(app: FastifyInstance, s: Services): void {
  route(app, s, BRANDS.map((b) => `/${b}/client/versions`), { method: "GET", path: "", auth: "optional", handler: () => versionsResponse(s.config) });
  clientRoute<AuthedCall>(app, s, {
    method: "GET", path: "/org.matrix.msc4143/rtc/transports", auth: "token", op: "rtcTransports", versions: ["unstable"],
    handler: (c) => rtcTransports(s, c.requester),
  });
}
