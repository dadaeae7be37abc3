import { defaultRules, masterRule } from "./default-rules.js";
import { RULE_KINDS } from "./rule-types.js";
function fromDefault(d, o) {
    const rule = {
        rule_id: d.rule_id,
        default: true,
        enabled: o?.enabled ?? d.enabled,
        actions: o?.actions ? JSON.parse(o.actions) : d.actions,
    };
    if (d.conditions)
        rule.conditions = d.conditions;
    if (d.pattern !== undefined)
        rule.pattern = d.pattern;
    return rule;
}
function fromStored(r) {
    const rule = { rule_id: r.ruleId, default: false, enabled: r.enabled, actions: JSON.parse(r.actions) };
    if (r.conditions !== null)
        rule.conditions = JSON.parse(r.conditions);
    if (r.pattern !== null)
        rule.pattern = r.pattern;
    return rule;
}
export function buildRuleset(userId, stored, overrides) {
    const set = Object.fromEntries(RULE_KINDS.map((k) => [k, []]));
    const over = new Map(overrides.map((o) => [`${o.kind}\u0000${o.ruleId}`, o]));
    const o = (d) => over.get(`${d.kind}\u0000${d.rule_id}`);
    const master = masterRule();
    set.override.push(fromDefault(master, o(master)));
    const own = [...stored].sort((a, b) => a.position - b.position);
    for (const r of own)
        if (RULE_KINDS.includes(r.kind))
            set[r.kind].push(fromStored(r));
    for (const d of defaultRules(userId))
        set[d.kind].push(fromDefault(d, o(d)));
    return set;
}
/** The rule `ruleId` of `kind` in a ruleset, if present. */
export function findRule(set, kind, ruleId) {
    return set[kind].find((r) => r.rule_id === ruleId);
}
