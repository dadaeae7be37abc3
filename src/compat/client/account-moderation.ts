// REST routes of account moderation (spec v1.18 "Server administration", MSC4323): GET/PUT
// /_matrix/client/v1/admin/suspend/{userId} `{suspended}` and /admin/lock/{userId} `{locked}`, also at
// MSC4323's unstable prefix (uk.timedout.msc4323) that clients released before v1.18 call. The domain's
// accounts/moderation.ts decides who may and what it does.
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { clientRoute, type AuthedCall } from "../http.ts";
import { getModerationFlag, setModerationFlag, type ModerationFlag } from "../../domain/accounts/moderation.ts";

export function accountModerationRoutes(app: FastifyInstance, s: Services): void {
  const routes: [string, ModerationFlag][] = [["suspend", "suspended"], ["lock", "locked"]];
  for (const [path, flag] of routes) {
    for (const [prefix, versions] of [["/admin", ["v1"]], ["/uk.timedout.msc4323/admin", ["unstable"]]] as const) {
      clientRoute<AuthedCall>(app, s, {
        method: "GET", path: `${prefix}/${path}/:userId`, auth: "token", versions: [...versions],
        handler: async (c) => ({ [flag]: await getModerationFlag(s, c.requester, c.params.userId!, flag) }),
      });
      clientRoute<AuthedCall>(app, s, {
        method: "PUT", path: `${prefix}/${path}/:userId`, auth: "token", versions: [...versions],
        handler: async (c) => ({ [flag]: await setModerationFlag(s, c.requester, c.params.userId!, flag, c.body()[flag]) }),
      });
    }
  }
}
