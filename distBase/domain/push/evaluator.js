import { LEGACY_MENTION_RULES, localpartOf } from "./default-rules.js";
import { containsWords, globMatchesWhole, globMatchesWords, splitDottedPath, valueAtPath } from "./matchers.js";
import { MEMBER_COUNT_IS, RULE_KINDS, outcomeOf } from "./rule-types.js";
/** One event as push rules see it, with per-event caches. */
export class PushEvent {
    pdu;
    memberCount;
    senderLevel;
    notificationLevel;
    paths = new Map();
    templates = new Map();
    body;
    bodyLower;
    hasMentions;
    constructor(pdu, 
    /** Joined members of the room (room_member_count). */
    memberCount, 
    /** The sender's power level, and the level a `notifications` key requires. */
    senderLevel, notificationLevel) {
        this.pdu = pdu;
        this.memberCount = memberCount;
        this.senderLevel = senderLevel;
        this.notificationLevel = notificationLevel;
        const content = pdu.content;
        this.body = typeof content.body === "string" ? content.body : undefined;
        this.bodyLower = this.body?.toLowerCase();
        this.hasMentions = Object.prototype.hasOwnProperty.call(content, "m.mentions");
    }
    get(path) {
        let v = this.paths.get(path);
        if (!v)
            this.paths.set(path, (v = valueAtPath(this.pdu, splitDottedPath(path))));
        return v;
    }
}
const NEVER = () => false;
/** Compiles a condition of a user's own rule (no user-dependent parameters except contains_display_name). */
function compileCondition(c) {
    switch (c.kind) {
        case "event_match": {
            const { key, pattern } = c;
            if (key === "content.body")
                return { event: (e) => e.body !== undefined && globMatchesWords(pattern, e.body, e.bodyLower) };
            return {
                event: (e) => {
                    const v = e.get(key);
                    return typeof v.value === "string" && globMatchesWhole(pattern, v.value);
                },
            };
        }
        case "event_property_is": {
            const { key, value } = c;
            return {
                event: (e) => {
                    const v = e.get(key);
                    return v.found && v.value === value;
                },
            };
        }
        case "event_property_contains": {
            const { key, value } = c;
            return {
                event: (e) => {
                    const v = e.get(key).value;
                    return Array.isArray(v) && v.some((x) => x === value);
                },
            };
        }
        case "contains_display_name":
            return { user: (e, u) => e.body !== undefined && u.displayName !== undefined && containsWords(u.displayName, e.body, e.bodyLower) };
        case "room_member_count": {
            const m = MEMBER_COUNT_IS.exec(c.is ?? "");
            if (!m)
                return { event: NEVER };
            const n = Number(m[2]);
            const op = m[1] ?? "==";
            return { event: (e) => (op === "==" ? e.memberCount === n : op === "<" ? e.memberCount < n : op === ">" ? e.memberCount > n : op === "<=" ? e.memberCount <= n : e.memberCount >= n) };
        }
        case "sender_notification_permission": {
            const key = c.key;
            return { event: (e) => e.senderLevel >= e.notificationLevel(key) };
        }
        default:
            return { event: NEVER };
    }
}
/**
 * The conditions of the server-default rules whose parameter is the evaluating user, compiled against
 * the user evaluated instead of a fixed value (so every user shares one compiled default ruleset).
 */
const USER_CONDITIONS = {
    ".m.rule.invite_for_me": (_c, i) => (i === 2 ? (e, u) => e.pdu.state_key === u.userId : undefined),
    ".m.rule.is_user_mention": () => (e, u) => {
        const v = e.get("content.m\\.mentions.user_ids").value;
        return Array.isArray(v) && v.includes(u.userId);
    },
    ".m.rule.contains_user_name": () => (e, u) => e.body !== undefined && globMatchesWords(localpartOf(u.userId), e.body, e.bodyLower),
};
function compileRule(kind, rule) {
    const independent = [];
    const dependent = [];
    const add = (c) => {
        if (c.event)
            independent.push(c.event);
        if (c.user)
            dependent.push(c.user);
    };
    const byUser = rule.default ? USER_CONDITIONS[rule.rule_id] : undefined;
    if (kind === "content") {
        const user = byUser?.({ kind: "event_match" }, 0);
        if (user)
            dependent.push(user);
        else
            add(compileCondition({ kind: "event_match", key: "content.body", pattern: rule.pattern ?? "" }));
    }
    else if (kind === "room")
        add({ event: (e) => e.pdu.room_id === rule.rule_id });
    else if (kind === "sender")
        add({ event: (e) => e.pdu.sender === rule.rule_id });
    else
        (rule.conditions ?? []).forEach((c, i) => {
            const user = byUser?.(c, i);
            add(user ? { user } : compileCondition(c));
        });
    const actions = rule.actions.filter((a) => a !== "dont_notify" && a !== "coalesce");
    const { notify, highlight } = outcomeOf(actions);
    return { kind, ruleId: rule.rule_id, legacyMention: rule.default && LEGACY_MENTION_RULES.has(rule.rule_id), independent, dependent, actions, notify, highlight, key: JSON.stringify(actions) };
}
/** A user's ruleset, compiled in evaluation order; enabled rules only. */
export class CompiledRuleset {
    rules;
    constructor(set) {
        this.rules = RULE_KINDS.flatMap((k) => set[k].filter((r) => r.enabled).map((r) => compileRule(k, r)));
    }
    template(e) {
        let t = e.templates.get(this);
        if (t)
            return t;
        const candidates = [];
        let terminal;
        for (const r of this.rules) {
            if (r.legacyMention && e.hasMentions)
                continue;
            if (!r.independent.every((test) => test(e)))
                continue;
            if (r.dependent.length > 0)
                candidates.push(r);
            else {
                terminal = r;
                break;
            }
        }
        e.templates.set(this, (t = { candidates, terminal }));
        return t;
    }
    /** The rule that decides the event for `u` (the first that matches), or undefined when none does. */
    evaluate(e, u) {
        const t = this.template(e);
        for (const r of t.candidates)
            if (r.dependent.every((test) => test(e, u)))
                return r;
        return t.terminal;
    }
}
