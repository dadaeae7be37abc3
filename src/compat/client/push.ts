// REST routes of push notifications (spec: Client-Server API "Push Notifications"): the push rules API
// (/pushrules/...), pushers (/pushers, /pushers/set) and the notifications list (/notifications).
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { clientRoute, queryInt, queryString, type AuthedCall } from "../http.ts";
import { deleteRulePath, readRulePath, writeRulePath, type RulePath } from "../../domain/push/rule-paths.ts";
import { getPushers, pusherInputOf, setPusher } from "../../domain/push/pushers.ts";
import { getNotifications, parseNotificationsQuery } from "../../domain/push/notifications.ts";

/** The path's segments after `pushrules/` (rule-paths.ts): one per path parameter the route has. */
const rulePath = (c: AuthedCall): RulePath => [c.params.scope ?? "", c.params.kind, c.params.ruleId, c.params.attr].filter((x): x is string => x !== undefined);

/** Every level of /pushrules/{scope}/{kind}/{ruleId}/{attr}: a parameter may be empty (a trailing slash). */
const LEVELS = ["/:scope", "/:scope/:kind", "/:scope/:kind/:ruleId", "/:scope/:kind/:ruleId/:attr"];

export function pushRoutes(app: FastifyInstance, s: Services): void {
  // `/pushrules` without its slash is no route (as Synapse: 404 M_UNRECOGNIZED).
  clientRoute<AuthedCall>(app, s, { method: "GET", path: "/pushrules/", auth: "token", op: "pushRules", handler: (c) => readRulePath(s, c.requester, [""]) });
  for (const level of LEVELS) {
    const path = `/pushrules${level}`;
    clientRoute<AuthedCall>(app, s, { method: "GET", path, auth: "token", op: "pushRules", handler: (c) => readRulePath(s, c.requester, rulePath(c)) });
    clientRoute<AuthedCall>(app, s, {
      method: "PUT", path, auth: "token", op: "pushRules",
      handler: async (c) => (await writeRulePath(s, c.requester, rulePath(c), () => c.body(), { before: queryString(c, "before"), after: queryString(c, "after") }), {}),
    });
    // Attributes are set, never deleted.
    if (level !== LEVELS[3]) clientRoute<AuthedCall>(app, s, { method: "DELETE", path, auth: "token", op: "pushRules", handler: async (c) => (await deleteRulePath(s, c.requester, rulePath(c)), {}) });
  }
  clientRoute<AuthedCall>(app, s, { method: "GET", path: "/pushers", auth: "token", op: "pushers", handler: (c) => getPushers(s, c.requester) });
  clientRoute<AuthedCall>(app, s, { method: "POST", path: "/pushers/set", auth: "token", op: "pushers", handler: async (c) => (await setPusher(s, c.requester, pusherInputOf(c.body())), {}) });
  clientRoute<AuthedCall>(app, s, {
    method: "GET", path: "/notifications", auth: "token", op: "notifications",
    handler: (c) => getNotifications(s, c.requester, parseNotificationsQuery({ from: queryString(c, "from"), limit: queryInt(c, "limit", { min: 0 }), only: queryString(c, "only") })),
  });
}
