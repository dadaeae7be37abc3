// Push rule evaluation (spec: Client-Server API "Push Rules", "Conditions", "Actions"): a user's ruleset
// compiled once into predicates, then run against events. Conditions that do not depend on who is
// evaluating (the event's type, a room member count, the sender's power ...) are decided once per event
// and ruleset; per user only the rules that depend on them are checked (mentions, display name, user
// name, MSC4306's thread subscription). Users without changes to the defaults share one compiled ruleset.
// Unknown condition kinds never match; `dont_notify` and `coalesce` are dropped from the actions.
import type { Pdu } from "../events/types.ts";
import { LEGACY_MENTION_RULES, localpartOf } from "./default-rules.ts";
import { containsWords, globMatchesWhole, globMatchesWords, splitDottedPath, valueAtPath } from "./matchers.ts";
import { MEMBER_COUNT_IS, RULE_KINDS, THREAD_SUBSCRIPTION_CONDITION, outcomeOf, type PushAction, type PushCondition, type PushRuleJson, type RuleKind, type Ruleset } from "./rule-types.ts";

/** One event as push rules see it, with per-event caches. */
export class PushEvent {
  private readonly paths = new Map<string, { found: boolean; value: unknown }>();
  readonly templates = new Map<CompiledRuleset, Template>();
  readonly body: string | undefined;
  readonly bodyLower: string | undefined;
  readonly hasMentions: boolean;
  /**
   * MSC4306: the local users subscribed to the event's thread — set (by the push indexer) only for an
   * event in a thread and with msc4306_enabled; while unset the thread_subscription condition never matches.
   */
  threadSubscribers: ReadonlySet<string> | undefined;

  constructor(
    readonly pdu: Pdu,
    /** Joined members of the room (room_member_count). */
    readonly memberCount: number,
    /** The sender's power level, and the level a `notifications` key requires. */
    readonly senderLevel: number,
    readonly notificationLevel: (key: string) => number,
  ) {
    const content = pdu.content as Record<string, unknown>;
    this.body = typeof content.body === "string" ? content.body : undefined;
    this.bodyLower = this.body?.toLowerCase();
    this.hasMentions = Object.prototype.hasOwnProperty.call(content, "m.mentions");
  }

  get(path: string): { found: boolean; value: unknown } {
    let v = this.paths.get(path);
    if (!v) this.paths.set(path, (v = valueAtPath(this.pdu, splitDottedPath(path))));
    return v;
  }
}

/** Who the rules are evaluated for. */
export interface PushUser {
  userId: string;
  /** Their display name in the room (contains_display_name). */
  displayName: string | undefined;
}

type EventTest = (e: PushEvent) => boolean;
type UserTest = (e: PushEvent, u: PushUser) => boolean;

export interface CompiledRule {
  kind: RuleKind;
  ruleId: string;
  legacyMention: boolean;
  independent: EventTest[];
  dependent: UserTest[];
  /** Actions without the legacy dont_notify / coalesce. */
  actions: PushAction[];
  notify: boolean;
  highlight: boolean;
  /** Identifies the outcome (same actions, same key). */
  key: string;
}

interface Template {
  candidates: CompiledRule[];
  terminal: CompiledRule | undefined;
}

const NEVER: EventTest = () => false;

/** Compiles a condition of a user's own rule (no user-dependent parameters except contains_display_name). */
function compileCondition(c: PushCondition): { event?: EventTest; user?: UserTest } {
  switch (c.kind) {
    case "event_match": {
      const { key, pattern } = c as { key: string; pattern: string };
      if (key === "content.body") return { event: (e) => e.body !== undefined && globMatchesWords(pattern, e.body, e.bodyLower) };
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
          const v = e.get(key!);
          return v.found && v.value === value;
        },
      };
    }
    case "event_property_contains": {
      const { key, value } = c;
      return {
        event: (e) => {
          const v = e.get(key!).value;
          return Array.isArray(v) && v.some((x) => x === value);
        },
      };
    }
    case "contains_display_name":
      return { user: (e, u) => e.body !== undefined && u.displayName !== undefined && containsWords(u.displayName, e.body, e.bodyLower) };
    case "room_member_count": {
      const m = MEMBER_COUNT_IS.exec(c.is ?? "");
      if (!m) return { event: NEVER };
      const n = Number(m[2]);
      const op = m[1] ?? "==";
      return { event: (e) => (op === "==" ? e.memberCount === n : op === "<" ? e.memberCount < n : op === ">" ? e.memberCount > n : op === "<=" ? e.memberCount <= n : e.memberCount >= n) };
    }
    case "sender_notification_permission": {
      const key = c.key!;
      return { event: (e) => e.senderLevel >= e.notificationLevel(key) };
    }
    case THREAD_SUBSCRIPTION_CONDITION: {
      if (typeof c.subscribed !== "boolean") return { event: NEVER };
      const subscribed = c.subscribed;
      return { event: (e) => e.threadSubscribers !== undefined, user: (e, u) => e.threadSubscribers!.has(u.userId) === subscribed };
    }
    default:
      return { event: NEVER };
  }
}

/**
 * The conditions of the server-default rules whose parameter is the evaluating user, compiled against
 * the user evaluated instead of a fixed value (so every user shares one compiled default ruleset).
 */
const USER_CONDITIONS: Record<string, (c: PushCondition, i: number) => UserTest | undefined> = {
  ".m.rule.invite_for_me": (_c, i) => (i === 2 ? (e, u) => e.pdu.state_key === u.userId : undefined),
  ".m.rule.is_user_mention": () => (e, u) => {
    const v = e.get("content.m\\.mentions.user_ids").value;
    return Array.isArray(v) && v.includes(u.userId);
  },
  ".m.rule.contains_user_name": () => (e, u) => e.body !== undefined && globMatchesWords(localpartOf(u.userId), e.body, e.bodyLower),
};

function compileRule(kind: RuleKind, rule: PushRuleJson): CompiledRule {
  const independent: EventTest[] = [];
  const dependent: UserTest[] = [];
  const add = (c: { event?: EventTest; user?: UserTest }) => {
    if (c.event) independent.push(c.event);
    if (c.user) dependent.push(c.user);
  };
  const byUser = rule.default ? USER_CONDITIONS[rule.rule_id] : undefined;
  if (kind === "content") {
    const user = byUser?.({ kind: "event_match" }, 0);
    if (user) dependent.push(user);
    else add(compileCondition({ kind: "event_match", key: "content.body", pattern: rule.pattern ?? "" }));
  } else if (kind === "room") add({ event: (e) => e.pdu.room_id === rule.rule_id });
  else if (kind === "sender") add({ event: (e) => e.pdu.sender === rule.rule_id });
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
  readonly rules: CompiledRule[];
  /** Whether an enabled rule asks about thread subscriptions (only then are a thread's subscribers read). */
  readonly usesThreadSubscriptions: boolean;

  constructor(set: Ruleset) {
    this.rules = RULE_KINDS.flatMap((k) => (set[k] ?? []).filter((r) => r.enabled).map((r) => compileRule(k, r)));
    this.usesThreadSubscriptions = RULE_KINDS.some((k) => (set[k] ?? []).some((r) => r.enabled && r.conditions?.some((c) => c.kind === THREAD_SUBSCRIPTION_CONDITION)));
  }

  private template(e: PushEvent): Template {
    let t = e.templates.get(this);
    if (t) return t;
    const candidates: CompiledRule[] = [];
    let terminal: CompiledRule | undefined;
    for (const r of this.rules) {
      if (r.legacyMention && e.hasMentions) continue;
      if (!r.independent.every((test) => test(e))) continue;
      if (r.dependent.length > 0) candidates.push(r);
      else {
        terminal = r;
        break;
      }
    }
    e.templates.set(this, (t = { candidates, terminal }));
    return t;
  }

  /** The rule that decides the event for `u` (the first that matches), or undefined when none does. */
  evaluate(e: PushEvent, u: PushUser): CompiledRule | undefined {
    const t = this.template(e);
    for (const r of t.candidates) if (r.dependent.every((test) => test(e, u))) return r;
    return t.terminal;
  }
}
