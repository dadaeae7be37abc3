// GET /capabilities (guests allowed, as Synapse). Spec: Client-Server API "Capabilities negotiation".
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { clientRoute, type AuthedCall } from "../http.ts";
import { capabilities } from "../../domain/server/capabilities.ts";

export function capabilityRoutes(app: FastifyInstance, s: Services): void {
  clientRoute<AuthedCall>(app, s, { method: "GET", path: "/capabilities", auth: "token", handler: (c) => capabilities(s, c.requester) });
}
