// REST routes of account validity (Synapse's account_validity endpoints): the renewal link's page
// (GET /account_validity/renew?token=, also under /_synapse/client/), a renewal mail on request (POST /account_validity/send_mail,
// open to expired accounts), and the admin API's POST /v1/account_validity/validity.
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { adminRoute, clientRoute, queryString, route, type AuthedCall, type Call } from "../http.ts";
import { adminSetAccountValidity, renewAccount, sendRenewalMail } from "../../domain/accounts/account-validity.ts";

const VERSIONS = ["r0", "v1", "v3", "unstable"];

export function accountValidityRoutes(app: FastifyInstance, s: Services): void {
  const renew = async (c: Call) => {
    const page = await renewAccount(s, queryString(c, "token"));
    return c.reply.code(page.status).type("text/html; charset=utf-8").send(page.html);
  };
  clientRoute(app, s, { method: "GET", path: "/account_validity/renew", auth: "none", versions: VERSIONS, handler: renew });
  route(app, s, ["/_synapse/client/account_validity/renew"], { method: "GET", path: "", auth: "none", handler: renew });

  clientRoute<AuthedCall>(app, s, {
    method: "POST", path: "/account_validity/send_mail", auth: "token", allowExpired: true, versions: VERSIONS,
    handler: async (c) => { await sendRenewalMail(s, c.requester); return {}; },
  });

  adminRoute<AuthedCall>(app, s, {
    method: "POST", path: "/account_validity/validity", auth: "token", op: "admin",
    handler: (c) => adminSetAccountValidity(s, c.requester, c.body()),
  });
}
