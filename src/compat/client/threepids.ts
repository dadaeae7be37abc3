// REST routes for an account's third-party identifiers: /account/3pid (list; deprecated add), add, bind,
// unbind, delete. Spec: Client-Server API "Adding Account Administrative Contact Information".
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { clientRoute, type AuthedCall } from "../http.ts";
import { addThreePid, addThreePidLegacy, bindThreePid, deleteThreePid, listThreePids, unbindThreePid } from "../../domain/accounts/threepids.ts";

export function threePidRoutes(app: FastifyInstance, s: Services): void {
  const op = "threePids" as const;
  // Also under /unstable, where Synapse serves them too (older clients call /unstable/account/3pid/bind).
  const versions = ["r0", "v3", "unstable"];
  clientRoute<AuthedCall>(app, s, { method: "GET", path: "/account/3pid", auth: "token", op, versions, handler: (c) => listThreePids(s, c.requester) });
  clientRoute<AuthedCall>(app, s, { method: "POST", path: "/account/3pid", auth: "token", op, versions, handler: (c) => addThreePidLegacy(s, c.requester, c.body()) });
  clientRoute<AuthedCall>(app, s, {
    method: "POST", path: "/account/3pid/add", auth: "token", op, versions,
    handler: (c) => addThreePid(s, c.requester, { path: c.req.originalUrl, method: c.req.method, body: c.body(), clientIp: c.clientIp }),
  });
  clientRoute<AuthedCall>(app, s, { method: "POST", path: "/account/3pid/bind", auth: "token", op, versions, handler: (c) => bindThreePid(s, c.requester, c.body()) });
  clientRoute<AuthedCall>(app, s, { method: "POST", path: "/account/3pid/unbind", auth: "token", op, versions, handler: (c) => unbindThreePid(s, c.requester, c.body()) });
  clientRoute<AuthedCall>(app, s, { method: "POST", path: "/account/3pid/delete", auth: "token", op, versions, handler: (c) => deleteThreePid(s, c.requester, c.body()) });
}
