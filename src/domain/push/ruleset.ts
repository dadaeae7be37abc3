// A user's whole push ruleset in the client format (GET /pushrules/, the m.push_rules account data event):
// `.m.rule.master`, then per kind the user's own rules (by position) before the server-default rules of
// that kind with the user's enabled/actions changes applied. Every rule carries `default`. As Synapse,
// the set always has MSC4306's `postcontent` kind, holding its rules only with msc4306_enabled.
// Spec: Client-Server API "Push Rules", "Predefined Rules".
import type { StoredOverride, StoredPushRule } from "../store/push-rules.ts";
import { defaultRules, masterRule, type DefaultRule, type DefaultRuleFeatures } from "./default-rules.ts";
import { RULE_KINDS, type PushRuleJson, type RuleKind, type Ruleset } from "./rule-types.ts";

function fromDefault(d: DefaultRule, o: StoredOverride | undefined): PushRuleJson {
  const rule: PushRuleJson = {
    rule_id: d.rule_id,
    default: true,
    enabled: o?.enabled ?? d.enabled,
    actions: o?.actions ? JSON.parse(o.actions) : d.actions,
  };
  if (d.conditions) rule.conditions = d.conditions;
  if (d.pattern !== undefined) rule.pattern = d.pattern;
  return rule;
}

function fromStored(r: StoredPushRule): PushRuleJson {
  const rule: PushRuleJson = { rule_id: r.ruleId, default: false, enabled: r.enabled, actions: JSON.parse(r.actions) };
  if (r.conditions !== null) rule.conditions = JSON.parse(r.conditions);
  if (r.pattern !== null) rule.pattern = r.pattern;
  return rule;
}

export function buildRuleset(userId: string, stored: StoredPushRule[], overrides: StoredOverride[], features?: DefaultRuleFeatures): Ruleset {
  const set = Object.fromEntries(RULE_KINDS.map((k) => [k, [] as PushRuleJson[]])) as Ruleset;
  const over = new Map(overrides.map((o) => [`${o.kind}\u0000${o.ruleId}`, o]));
  const o = (d: DefaultRule) => over.get(`${d.kind}\u0000${d.rule_id}`);
  const master = masterRule();
  set.override.push(fromDefault(master, o(master)));
  const own = [...stored].sort((a, b) => a.position - b.position);
  for (const r of own) if ((RULE_KINDS as readonly string[]).includes(r.kind)) set[r.kind as RuleKind].push(fromStored(r));
  for (const d of defaultRules(userId, features)) set[d.kind].push(fromDefault(d, o(d)));
  return set;
}

/** The rule `ruleId` of `kind` in a ruleset, if present. */
export function findRule(set: Ruleset, kind: RuleKind, ruleId: string): PushRuleJson | undefined {
  return set[kind].find((r) => r.rule_id === ruleId);
}
