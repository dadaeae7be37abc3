// PUT /_matrix/federation/v1/send/{txnId} (signed): a transaction of PDUs and EDUs from another server.
// Spec: Server-Server API "Transactions".
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { receiveTransaction } from "../../domain/federation/transaction.ts";
import { federationRoute } from "./route.ts";

export function federationSendRoutes(app: FastifyInstance, s: Services): void {
  federationRoute(app, s, {
    method: "PUT", path: "/send/:txnId", auth: "signed",
    handler: (c) => receiveTransaction(s, c.origin, c.params.txnId!, c.body()),
  });
}
