// REST routes of push notifications (spec: Client-Server API "Push Notifications"): the push rules API
// (/pushrules/...), pushers (/pushers, /pushers/set) and the notifications list (/notifications).
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { clientRoute, queryInt, queryString, type AuthedCall } from "../http.ts";
import { deleteRule, getRule, getRuleAttr, getRuleset, putRule, setRuleAttr } from "../../domain/push/rules-api.ts";
import { getPushers, setPusher } from "../../domain/push/pushers.ts";
import { getNotifications, parseNotificationsQuery } from "../../domain/push/notifications.ts";

export function pushRoutes(app: FastifyInstance, s: Services): void {
  for (const path of ["/pushrules/", "/pushrules"])
    clientRoute<AuthedCall>(app, s, { method: "GET", path, auth: "user", handler: async (c) => ({ global: await getRuleset(s, c.requester.userId) }) });
  clientRoute<AuthedCall>(app, s, { method: "GET", path: "/pushrules/global/", auth: "user", handler: (c) => getRuleset(s, c.requester.userId) });
  clientRoute<AuthedCall>(app, s, {
    method: "GET", path: "/pushrules/global/:kind/:ruleId", auth: "user",
    handler: (c) => getRule(s, c.requester.userId, c.params.kind!, c.params.ruleId!),
  });
  clientRoute<AuthedCall>(app, s, {
    method: "PUT", path: "/pushrules/global/:kind/:ruleId", auth: "user",
    handler: async (c) => (await putRule(s, c.requester.userId, c.params.kind!, c.params.ruleId!, c.body(), { before: queryString(c, "before"), after: queryString(c, "after") }), {}),
  });
  clientRoute<AuthedCall>(app, s, {
    method: "DELETE", path: "/pushrules/global/:kind/:ruleId", auth: "user",
    handler: async (c) => (await deleteRule(s, c.requester.userId, c.params.kind!, c.params.ruleId!), {}),
  });
  clientRoute<AuthedCall>(app, s, {
    method: "GET", path: "/pushrules/global/:kind/:ruleId/:attr", auth: "user",
    handler: (c) => getRuleAttr(s, c.requester.userId, c.params.kind!, c.params.ruleId!, c.params.attr!),
  });
  clientRoute<AuthedCall>(app, s, {
    method: "PUT", path: "/pushrules/global/:kind/:ruleId/:attr", auth: "user",
    handler: async (c) => (await setRuleAttr(s, c.requester.userId, c.params.kind!, c.params.ruleId!, c.params.attr!, c.body()), {}),
  });
  clientRoute<AuthedCall>(app, s, { method: "GET", path: "/pushers", auth: "user", handler: (c) => getPushers(s, c.requester) });
  clientRoute<AuthedCall>(app, s, { method: "POST", path: "/pushers/set", auth: "user", handler: async (c) => (await setPusher(s, c.requester, c.body()), {}) });
  clientRoute<AuthedCall>(app, s, {
    method: "GET", path: "/notifications", auth: "user",
    handler: (c) => getNotifications(s, c.requester, parseNotificationsQuery({ from: queryString(c, "from"), limit: queryInt(c, "limit", { min: 0 }), only: queryString(c, "only") })),
  });
}
