// REST routes for shared-secret registration (Synapse admin API "Shared-Secret Registration"):
// GET and POST /_synapse/admin/v1/register (and /_impl/admin/v1/register). No access token: the HMAC
// keyed by registration_shared_secret is the credential.
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { adminRoute } from "../http.ts";
import { newRegistrationNonce, registerWithSharedSecret } from "../../domain/admin/shared-secret-registration.ts";

export function sharedSecretRegistrationRoutes(app: FastifyInstance, s: Services): void {
  adminRoute(app, s, { method: "GET", path: "/register", auth: "none", handler: () => newRegistrationNonce(s) });
  adminRoute(app, s, { method: "POST", path: "/register", auth: "none", handler: (c) => registerWithSharedSecret(s, c.body()) });
}
