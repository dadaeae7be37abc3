// REST routes for accounts and sessions: login, register, logout, refresh, whoami, password change,
// deactivation, login tokens. Spec: Client-Server API "Client Authentication", "Account registration
// and management". Each route parses, calls one domain operation, and shapes the JSON.
import type { FastifyInstance } from "fastify";
import { MatrixError } from "../../domain/errors.ts";
import type { Services } from "../../domain/services.ts";
import { clientRoute, queryString, type AuthedCall, type Call } from "../http.ts";
import { login, loginFlows } from "../../domain/accounts/login.ts";
import { register, registrationTokenValid, usernameAvailable } from "../../domain/accounts/register.ts";
import { logout, logoutAll } from "../../domain/accounts/logout.ts";
import { refresh } from "../../domain/accounts/refresh.ts";
import { changePassword } from "../../domain/accounts/change-password.ts";
import { deactivateOwnAccount } from "../../domain/accounts/deactivate.ts";
import { getLoginToken } from "../../domain/accounts/login-token.ts";
import { resetPasswordByEmail } from "../../domain/threepids/password-reset.ts";
import type { UiaRequest } from "../../domain/uia/uia.ts";

const uiaRequest = (c: Call): UiaRequest => ({ path: c.req.originalUrl, method: c.req.method, body: c.bodyOrEmpty(), clientIp: c.clientIp });

export function accountRoutes(app: FastifyInstance, s: Services): void {
  clientRoute(app, s, { method: "GET", path: "/login", auth: "none", handler: () => ({ flows: loginFlows(s) }) });

  clientRoute(app, s, {
    method: "POST", path: "/login", auth: "none",
    handler: (c) => login(s, { body: c.body(), clientIp: c.clientIp, bearerToken: c.bearerToken }),
  });

  clientRoute(app, s, {
    method: "POST", path: "/register", auth: "none",
    handler: (c) => {
      const kind = queryString(c, "kind") ?? "user";
      const body = kind === "guest" ? c.bodyOrEmpty() : c.body();
      return register(s, { kind, body, path: c.req.originalUrl, method: c.req.method, clientIp: c.clientIp, bearerToken: c.bearerToken });
    },
  });

  clientRoute(app, s, {
    method: "GET", path: "/register/available", auth: "none",
    handler: async (c) => {
      await usernameAvailable(s, queryString(c, "username", true), c.clientIp);
      return { available: true };
    },
  });

  clientRoute(app, s, {
    method: "GET", path: "/register/m.login.registration_token/validity", auth: "none", versions: ["v1"],
    handler: async (c) => ({ valid: await registrationTokenValid(s, queryString(c, "token", true), c.clientIp) }),
  });

  clientRoute<AuthedCall>(app, s, { method: "POST", path: "/logout", auth: "token", allowExpired: true, allowLocked: true, handler: async (c) => { await logout(s, c.requester); return {}; } });
  clientRoute<AuthedCall>(app, s, { method: "POST", path: "/logout/all", auth: "token", allowExpired: true, allowLocked: true, handler: async (c) => { await logoutAll(s, c.requester); return {}; } });

  clientRoute(app, s, {
    method: "POST", path: "/refresh", auth: "none", versions: ["v1", "v3"],
    handler: (c) => {
      const token = c.body().refresh_token;
      if (token === undefined) throw new MatrixError("M_MISSING_PARAM", "Missing refresh_token", 400);
      if (typeof token !== "string") throw new MatrixError("M_BAD_JSON", "refresh_token must be a string");
      return refresh(s, token);
    },
  });

  clientRoute<AuthedCall>(app, s, {
    method: "GET", path: "/account/whoami", auth: "token",
    handler: ({ requester: r }) => ({ user_id: r.userId, is_guest: r.isGuest, ...(r.deviceId ? { device_id: r.deviceId } : {}) }),
  });

  // Signed in: a password change; without a token: a reset proven by a validated e-mail address.
  clientRoute(app, s, {
    method: "POST", path: "/account/password", auth: "optional",
    handler: async (c) => {
      const req = { ...uiaRequest(c), body: c.body() };
      await (c.requester ? changePassword(s, c.requester, req) : resetPasswordByEmail(s, req));
      return {};
    },
  });

  clientRoute<AuthedCall>(app, s, {
    method: "POST", path: "/account/deactivate", auth: "token",
    handler: (c) => deactivateOwnAccount(s, c.requester, uiaRequest(c)),
  });

  clientRoute<AuthedCall>(app, s, {
    method: "POST", path: "/login/get_token", auth: "token", versions: ["v1"],
    handler: (c) => getLoginToken(s, c.requester, uiaRequest(c)),
  });
}
