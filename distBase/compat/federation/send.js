import { receiveTransaction } from "../../domain/federation/transaction.js";
import { federationRoute } from "./route.js";
export function federationSendRoutes(app, s) {
    federationRoute(app, s, {
        method: "PUT", path: "/send/:txnId", auth: "signed",
        handler: (c) => receiveTransaction(s, c.origin, c.params.txnId, c.body()),
    });
}
