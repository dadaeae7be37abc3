import { clientRoute, queryInt, queryString } from "../http.js";
import { deleteRule, getOwnRuleset, getRule, getRuleAttr, putRule, setRuleAttr } from "../../domain/push/rules-api.js";
import { getPushers, setPusher } from "../../domain/push/pushers.js";
import { getNotifications, parseNotificationsQuery } from "../../domain/push/notifications.js";
export function pushRoutes(app, s) {
    for (const path of ["/pushrules/", "/pushrules"])
        clientRoute(app, s, { method: "GET", path, auth: "token", op: "pushRules", handler: async (c) => ({ global: await getOwnRuleset(s, c.requester) }) });
    clientRoute(app, s, { method: "GET", path: "/pushrules/global/", auth: "token", op: "pushRules", handler: (c) => getOwnRuleset(s, c.requester) });
    clientRoute(app, s, {
        method: "GET", path: "/pushrules/global/:kind/:ruleId", auth: "token", op: "pushRules",
        handler: (c) => getRule(s, c.requester, c.params.kind, c.params.ruleId),
    });
    clientRoute(app, s, {
        method: "PUT", path: "/pushrules/global/:kind/:ruleId", auth: "token", op: "pushRules",
        handler: async (c) => (await putRule(s, c.requester, c.params.kind, c.params.ruleId, c.body(), { before: queryString(c, "before"), after: queryString(c, "after") }), {}),
    });
    clientRoute(app, s, {
        method: "DELETE", path: "/pushrules/global/:kind/:ruleId", auth: "token", op: "pushRules",
        handler: async (c) => (await deleteRule(s, c.requester, c.params.kind, c.params.ruleId), {}),
    });
    clientRoute(app, s, {
        method: "GET", path: "/pushrules/global/:kind/:ruleId/:attr", auth: "token", op: "pushRules",
        handler: (c) => getRuleAttr(s, c.requester, c.params.kind, c.params.ruleId, c.params.attr),
    });
    clientRoute(app, s, {
        method: "PUT", path: "/pushrules/global/:kind/:ruleId/:attr", auth: "token", op: "pushRules",
        handler: async (c) => (await setRuleAttr(s, c.requester, c.params.kind, c.params.ruleId, c.params.attr, c.body()), {}),
    });
    clientRoute(app, s, { method: "GET", path: "/pushers", auth: "token", op: "pushers", handler: (c) => getPushers(s, c.requester) });
    clientRoute(app, s, { method: "POST", path: "/pushers/set", auth: "token", op: "pushers", handler: async (c) => (await setPusher(s, c.requester, c.body()), {}) });
    clientRoute(app, s, {
        method: "GET", path: "/notifications", auth: "token", op: "notifications",
        handler: (c) => getNotifications(s, c.requester, parseNotificationsQuery({ from: queryString(c, "from"), limit: queryInt(c, "limit", { min: 0 }), only: queryString(c, "only") })),
    });
}
