// REST route of simplified sliding sync (MSC4186): POST /_matrix/client/unstable/org.matrix.simplified_msc3575/sync
// with `pos`, `timeout` and `set_presence` in the query and the request in the body, as Synapse serves it
// (on by default); the domain's src/domain/sync/sliding-sync.ts answers it.
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { clientRoute, queryInt, queryString, type AuthedCall } from "../http.ts";
import { slidingSync } from "../../domain/sync/sliding-sync.ts";
import { clientGone } from "./sync.ts";

export function slidingSyncRoutes(app: FastifyInstance, s: Services): void {
  clientRoute<AuthedCall>(app, s, {
    method: "POST", path: "/org.matrix.simplified_msc3575/sync", auth: "token", versions: ["unstable"],
    handler: (c) =>
      slidingSync(s, c.requester, {
        pos: queryString(c, "pos"),
        timeoutMs: queryInt(c, "timeout", { min: 0 }),
        setPresence: queryString(c, "set_presence"),
        body: c.bodyOrEmpty(),
        cancel: clientGone(c),
      }),
  });
}
