// The push rules API's operations (spec: Client-Server API "Push Rules: API"): read the ruleset or one
// rule (or its enabled/actions), add or replace a user rule with before/after ordering, delete it, and
// set enabled/actions of any rule (server-default ones included). Writes for one user are serialized,
// check everything before writing (bad input leaves the ruleset unchanged), move the push_rules stream,
// drop the user's compiled rules and wake their syncs (m.push_rules in account_data).
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { requireNotGuest } from "../accounts/guest-access.ts";
import { defaultRuleFeatures, defaultRules, masterRule } from "./default-rules.ts";
import { findRule } from "./ruleset.ts";
import { checkActions, checkUserRuleId, parseKind, parseRuleBody, POSTCONTENT, type PushRuleInput, type PushRuleJson, type RuleAttrChange, type RuleKind, type Ruleset } from "./rule-types.ts";

const notFound = () => new MatrixError("M_NOT_FOUND", "The push rule was not found.", 404);

/** The user's ruleset ({global: ...} is built by the caller). */
export async function getRuleset(s: Services, userId: string): Promise<Ruleset> {
  return (await s.push.rules.of(userId)).json;
}

/** GET /pushrules/: the requester's ruleset. */
export async function getOwnRuleset(s: Services, r: Requester): Promise<Ruleset> {
  requireNotGuest(r, "pushRules");
  return getRuleset(s, r.userId);
}

export async function getRule(s: Services, r: Requester, kind: string, ruleId: string): Promise<PushRuleJson> {
  const rule = findRule(await getOwnRuleset(s, r), parseKind(kind), ruleId);
  if (!rule) throw notFound();
  return rule;
}

/** GET .../{ruleId}/{attr}: `enabled` or `actions` (other attributes are not part of the API). */
export async function getRuleAttr(s: Services, r: Requester, kind: string, ruleId: string, attr: string): Promise<Record<string, unknown>> {
  if (attr !== "enabled" && attr !== "actions") throw new MatrixError("M_UNRECOGNIZED", "Unrecognised push rule attribute", 400);
  const rule = await getRule(s, r, kind, ruleId);
  return attr === "enabled" ? { enabled: rule.enabled } : { actions: rule.actions };
}

/** Whether `ruleId` is one of the user's server-default rules of `kind` here (an experimental one only with its flag). */
function isDefaultRule(s: Services, userId: string, kind: RuleKind, ruleId: string): boolean {
  return [masterRule(), ...defaultRules(userId, defaultRuleFeatures(s.config))].some((rule) => rule.kind === kind && rule.rule_id === ruleId);
}

async function changed(s: Services, userId: string, position: number): Promise<void> {
  s.push.rules.drop(userId);
  s.rooms.notifier.notify({ stream: "push_rules", position, userIds: [userId] });
  // Several processes: answered once the others were told (their cached rulesets are dropped by then).
  await s.replication?.delivered();
}

function lane<T>(s: Services, userId: string, fn: () => Promise<T>): Promise<T> {
  return s.rooms.lanes.run(`push_rules ${userId}`, fn);
}

/** PUT /pushrules/global/{kind}/{ruleId}[?before=|after=]: adds or replaces a user rule. */
export async function putRule(s: Services, r: Requester, kindText: string, ruleId: string, body: PushRuleInput, rel: { before?: string; after?: string }): Promise<void> {
  requireNotGuest(r, "pushRules");
  const userId = r.userId;
  if (kindText === POSTCONTENT) throw new MatrixError("M_INVALID_PARAM", "user-defined rules using `postcontent` are not accepted", 400);
  const kind = parseKind(kindText);
  checkUserRuleId(ruleId);
  const parts = parseRuleBody(kind, body);
  await lane(s, userId, async () => {
    const own = (await s.push.rules.store.rules(userId)).filter((r) => r.kind === kind).sort((a, b) => a.position - b.position);
    const existing = own.find((r) => r.ruleId === ruleId);
    const others = own.filter((r) => r.ruleId !== ruleId).map((r) => r.ruleId);
    const anchor = rel.before ?? rel.after;
    let order: string[];
    if (anchor !== undefined) {
      const at = others.indexOf(anchor);
      if (at < 0) throw new MatrixError("M_UNKNOWN", `before/after rule not found: ${anchor}`, 400);
      order = [...others];
      order.splice(rel.before !== undefined ? at : at + 1, 0, ruleId);
    } else if (existing) order = own.map((r) => r.ruleId);
    else order = [ruleId, ...others];
    const position = await s.push.rules.store.change(userId, async (tx) => {
      await s.push.rules.store.upsertRule(tx, userId, {
        kind,
        ruleId,
        position: order.indexOf(ruleId),
        conditions: parts.conditions ? JSON.stringify(parts.conditions) : null,
        pattern: parts.pattern ?? null,
        actions: JSON.stringify(parts.actions),
      });
      for (const [i, id] of order.entries()) if (id !== ruleId && own.find((r) => r.ruleId === id)?.position !== i) await s.push.rules.store.setPosition(tx, userId, kind, id, i);
    });
    await changed(s, userId, position);
  });
}

export async function deleteRule(s: Services, r: Requester, kindText: string, ruleId: string): Promise<void> {
  requireNotGuest(r, "pushRules");
  const userId = r.userId;
  const kind = parseKind(kindText);
  if (isDefaultRule(s, userId, kind, ruleId)) throw new MatrixError("M_INVALID_PARAM", "Server-default rules cannot be deleted", 400);
  await lane(s, userId, async () => {
    const own = await s.push.rules.store.rules(userId);
    if (!own.some((r) => r.kind === kind && r.ruleId === ruleId)) throw notFound();
    const position = await s.push.rules.store.change(userId, async (tx) => void (await s.push.rules.store.deleteRule(tx, userId, kind, ruleId)));
    await changed(s, userId, position);
  });
}

/** PUT .../{ruleId}/enabled or /actions, for user rules and server-default rules alike. */
export async function setRuleAttr(s: Services, r: Requester, kindText: string, ruleId: string, attr: RuleAttrChange): Promise<void> {
  requireNotGuest(r, "pushRules");
  const userId = r.userId;
  const kind: RuleKind = parseKind(kindText);
  let change: { enabled?: boolean; actions?: string };
  if (attr.attr === "enabled") {
    if (typeof attr.enabled !== "boolean") throw new MatrixError("M_INVALID_PARAM", "enabled must be a boolean", 400);
    change = { enabled: attr.enabled };
  } else change = { actions: JSON.stringify(checkActions(attr.actions)) };
  await lane(s, userId, async () => {
    const isDefault = isDefaultRule(s, userId, kind, ruleId);
    if (!isDefault && !(await s.push.rules.store.rules(userId)).some((r) => r.kind === kind && r.ruleId === ruleId)) throw notFound();
    const position = await s.push.rules.store.change(userId, (tx) =>
      isDefault ? s.push.rules.store.setOverride(tx, userId, kind, ruleId, change) : s.push.rules.store.setRuleAttr(tx, userId, kind, ruleId, change),
    );
    await changed(s, userId, position);
  });
}
