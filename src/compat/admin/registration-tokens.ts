// REST routes for the registration tokens admin API (Synapse admin API "Registration Tokens"):
// /_synapse/admin/v1/registration_tokens[/new|/{token}] and the /_impl/admin/v1 twin; server admins only.
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { adminRoute, queryBool, type AuthedCall } from "../http.ts";
import {
  createRegistrationToken,
  deleteRegistrationToken,
  getRegistrationToken,
  listRegistrationTokens,
  updateRegistrationToken,
} from "../../domain/admin/registration-tokens.ts";

export function registrationTokenRoutes(app: FastifyInstance, s: Services): void {
  adminRoute<AuthedCall>(app, s, {
    method: "GET", path: "/registration_tokens", auth: "token", op: "admin",
    handler: async (c) => ({ registration_tokens: await listRegistrationTokens(s, c.requester, queryBool(c, "valid")) }),
  });

  adminRoute<AuthedCall>(app, s, {
    method: "POST", path: "/registration_tokens/new", auth: "token", op: "admin",
    handler: (c) => createRegistrationToken(s, c.requester, c.bodyOrEmpty()),
  });

  adminRoute<AuthedCall>(app, s, {
    method: "GET", path: "/registration_tokens/:token", auth: "token", op: "admin",
    handler: (c) => getRegistrationToken(s, c.requester, c.params.token!),
  });

  adminRoute<AuthedCall>(app, s, {
    method: "PUT", path: "/registration_tokens/:token", auth: "token", op: "admin",
    handler: (c) => updateRegistrationToken(s, c.requester, c.params.token!, c.bodyOrEmpty()),
  });

  adminRoute<AuthedCall>(app, s, {
    method: "DELETE", path: "/registration_tokens/:token", auth: "token", op: "admin",
    handler: async (c) => { await deleteRegistrationToken(s, c.requester, c.params.token!); return {}; },
  });
}
