// REST routes of the server notices admin API (Synapse admin API "Server Notices"): POST
// /send_server_notice and PUT /send_server_notice/{txnId} under /_synapse/admin/v1 and /_impl/admin/v1.
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { adminRoute, type AuthedCall } from "../http.ts";
import { sendServerNotice } from "../../domain/admin/server-notices.ts";

export function serverNoticeRoutes(app: FastifyInstance, s: Services): void {
  adminRoute<AuthedCall>(app, s, { method: "POST", path: "/send_server_notice", auth: "token", op: "admin", handler: (c) => sendServerNotice(s, c.requester, () => c.body()) });
  adminRoute<AuthedCall>(app, s, {
    method: "PUT", path: "/send_server_notice/:txnId", auth: "token", op: "admin",
    handler: (c) => sendServerNotice(s, c.requester, () => c.body(), c.params.txnId),
  });
}
