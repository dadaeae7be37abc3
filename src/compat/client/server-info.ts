// GET /versions (optional authentication: a token, if sent, must be valid). Spec: "API Standards".
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { versionsResponse } from "../../domain/server/versions.ts";
import { BRANDS, route } from "../http.ts";

export function serverInfoRoutes(app: FastifyInstance, s: Services): void {
  route(app, s, BRANDS.map((b) => `/${b}/client/versions`), { method: "GET", path: "", auth: "optional", handler: () => versionsResponse(s.config) });
}
