// The shapes of push rules (spec: Client-Server API "Push Rules", definitions/push_rule.yaml,
// push_condition.yaml) and the checks of what a client sends: rule kinds, rule ids, conditions and
// actions, each failing with 400 M_INVALID_PARAM and a message that names the bad part.
import { MatrixError } from "../errors.ts";
import { isPlainObject } from "../events/types.ts";

/**
 * Rule kinds in the order they are checked. `postcontent` is MSC4306's (as Synapse): checked after the
 * content rules, holding only the server-default thread-subscription rules (with msc4306_enabled);
 * clients may not add rules to it.
 */
export const RULE_KINDS = ["override", "content", "postcontent", "room", "sender", "underride"] as const;
export type RuleKind = (typeof RULE_KINDS)[number];

export type PushAction = string | { set_tweak: string; value?: unknown; [k: string]: unknown };

export interface PushCondition {
  kind: string;
  key?: string;
  pattern?: string;
  is?: string;
  value?: string | number | boolean | null;
  [k: string]: unknown;
}

/** A rule in the client format (GET /pushrules, m.push_rules). */
export interface PushRuleJson {
  rule_id: string;
  default: boolean;
  enabled: boolean;
  actions: PushAction[];
  conditions?: PushCondition[];
  pattern?: string;
}

export type Ruleset = Record<RuleKind, PushRuleJson[]>;

const invalid = (msg: string) => new MatrixError("M_INVALID_PARAM", msg, 400);

/** MSC4306's kind (see RULE_KINDS). */
export const POSTCONTENT = "postcontent";

/** MSC4306's condition: whether the user is subscribed to the event's thread (never matches outside one). */
export const THREAD_SUBSCRIPTION_CONDITION = "io.element.msc4306.thread_subscription";

export function parseKind(kind: string): RuleKind {
  if (!(RULE_KINDS as readonly string[]).includes(kind)) throw invalid(`Unknown push rule kind: ${kind}`);
  return kind as RuleKind;
}

/** The `room_member_count` comparison: an optional operator and a decimal integer. */
export const MEMBER_COUNT_IS = /^(==|<=|>=|<|>)?([0-9]+)$/;

const isScalar = (v: unknown) => v === null || typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isSafeInteger(v));

/**
 * Checks one condition. Unknown kinds are accepted (the spec says they never match); the known kinds
 * must carry their parameters with the right types.
 */
export function checkCondition(c: unknown, where: string): PushCondition {
  if (!isPlainObject(c)) throw invalid(`${where} must be an object`);
  if (typeof c.kind !== "string" || c.kind === "") throw invalid(`${where}.kind must be a string`);
  const str = (k: string) => {
    if (typeof c[k] !== "string") throw invalid(`${where}.${k} must be a string for ${c.kind}`);
  };
  switch (c.kind) {
    case "event_match":
      str("key");
      str("pattern");
      break;
    case "event_property_is":
    case "event_property_contains":
      str("key");
      if (!("value" in c) || !isScalar(c.value)) throw invalid(`${where}.value must be a string, an integer, a boolean or null`);
      break;
    case "room_member_count":
      str("is");
      if (!MEMBER_COUNT_IS.test(c.is as string)) throw invalid(`${where}.is must be an integer optionally prefixed by ==, <, >, <= or >=`);
      break;
    case "sender_notification_permission":
      str("key");
      break;
    case THREAD_SUBSCRIPTION_CONDITION:
      if (typeof c.subscribed !== "boolean") throw invalid(`${where}.subscribed must be a boolean for ${c.kind}`);
      break;
  }
  return c as PushCondition;
}

/** Checks an actions list: "notify", the legacy "dont_notify" / "coalesce", or {set_tweak, value?}. */
export function checkActions(actions: unknown): PushAction[] {
  if (!Array.isArray(actions)) throw invalid("actions must be a list");
  actions.forEach((a, i) => {
    if (a === "notify" || a === "dont_notify" || a === "coalesce") return;
    if (isPlainObject(a) && typeof a.set_tweak === "string" && a.set_tweak !== "") return;
    throw invalid(`actions[${i}] is not a known action: ${JSON.stringify(a)}`);
  });
  return actions as PushAction[];
}

/** Refuses rule ids reserved for server-default rules or containing path separators. */
export function checkUserRuleId(ruleId: string): void {
  if (ruleId === "") throw invalid("The rule ID must not be empty");
  if (ruleId.startsWith(".")) throw invalid("Rule IDs starting with '.' are reserved for server-default rules");
  if (ruleId.includes("/") || ruleId.includes("\\")) throw invalid("Rule IDs may not contain slashes or backslashes");
}

/**
 * A user rule as either face sends it (REST: the PUT body's `actions`, `conditions`, `pattern`; GraphQL:
 * PushRuleInput): the values are JSON still to check, by parseRuleBody.
 */
export interface PushRuleInput {
  actions?: unknown;
  conditions?: unknown;
  pattern?: unknown;
}

/** A change of one attribute of a rule (PUT .../{ruleId}/enabled or /actions), its value still to check. */
export type RuleAttrChange = { attr: "enabled"; enabled: unknown } | { attr: "actions"; actions: unknown };

/** The REST body of PUT .../{ruleId}/{attr} as a RuleAttrChange: `enabled` or `actions`, else 400 M_UNRECOGNIZED. */
export function ruleAttrChangeOf(attr: string, body: () => Record<string, unknown>): RuleAttrChange {
  if (attr === "enabled") return { attr, enabled: body().enabled };
  if (attr === "actions") return { attr, actions: body().actions };
  throw new MatrixError("M_UNRECOGNIZED", "Unrecognised push rule attribute", 400);
}

/** The parts of a user rule a PUT gives, per kind (room and sender rules take their id as pattern). */
export function parseRuleBody(kind: RuleKind, body: PushRuleInput): { conditions?: PushCondition[]; pattern?: string; actions: PushAction[] } {
  if (body.actions === undefined) throw invalid("The rule has no actions");
  const actions = checkActions(body.actions);
  if (kind === "override" || kind === "underride") {
    const list = body.conditions ?? [];
    if (!Array.isArray(list)) throw invalid("conditions must be a list");
    return { conditions: list.map((c, i) => checkCondition(c, `conditions[${i}]`)), actions };
  }
  if (kind === "content") {
    if (typeof body.pattern !== "string") throw invalid("A content rule needs a pattern string");
    return { pattern: body.pattern, actions };
  }
  return { actions };
}

/** Tweaks of an action list (`value` absent means true, as the spec says for highlight). */
export function tweaksOf(actions: readonly PushAction[]): Record<string, unknown> {
  const tweaks: Record<string, unknown> = {};
  for (const a of actions) if (typeof a === "object" && a !== null && typeof a.set_tweak === "string") tweaks[a.set_tweak] = "value" in a ? a.value : true;
  return tweaks;
}

/** Whether these actions notify, and highlight (the legacy dont_notify / coalesce are ignored). */
export function outcomeOf(actions: readonly PushAction[]): { notify: boolean; highlight: boolean } {
  return { notify: actions.includes("notify"), highlight: Boolean(tweaksOf(actions).highlight) };
}
