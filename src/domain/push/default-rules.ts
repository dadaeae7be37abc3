// The server-default push rules, in the spec's order (Client-Server API "Predefined Rules"), for one
// user: the placeholders "[the user's Matrix ID]" / localpart are filled in. `.m.rule.master` comes before
// every user rule; the other defaults of a kind come after the user's rules of that kind. The legacy
// body-mention rules (contains_display_name, roomnotif, contains_user_name) are kept, as Synapse does,
// and skipped for events carrying `m.mentions` (evaluator.ts); spec v1.17 removed them (MSC4210), which
// Synapse's `experimental_features.msc4210_enabled` does, and Weft's alike. Experimental rules come with their flags:
// MSC4306's thread subscriptions, and MSC3930's poll rules (msc3381_polls_enabled) where Synapse puts them.
import type { PushAction, PushCondition, RuleKind } from "./rule-types.ts";

export interface DefaultRule {
  kind: RuleKind;
  rule_id: string;
  enabled: boolean;
  conditions?: PushCondition[];
  pattern?: string;
  actions: PushAction[];
}

const SOUND: PushAction = { set_tweak: "sound", value: "default" };
const HIGHLIGHT: PushAction = { set_tweak: "highlight" };
const match = (key: string, pattern: string): PushCondition => ({ kind: "event_match", key, pattern });

/** Rule ids whose matching is disabled for events that carry `content["m.mentions"]` (MSC3952, Synapse). */
export const LEGACY_MENTION_RULES = new Set([".m.rule.contains_display_name", ".m.rule.roomnotif", ".m.rule.contains_user_name"]);

/** The user's localpart ("@alice:example.org" → "alice"). */
export function localpartOf(userId: string): string {
  const colon = userId.indexOf(":");
  return userId.slice(1, colon < 0 ? undefined : colon);
}

/** `.m.rule.master`: always first, before the user's own override rules. */
export function masterRule(): DefaultRule {
  return { kind: "override", rule_id: ".m.rule.master", enabled: false, conditions: [], actions: [] };
}

/** Which experimental default rules a server has (Synapse's flags). */
export interface DefaultRuleFeatures {
  /** MSC4306's thread-subscription rules in the postcontent kind (experimental_features.msc4306_enabled). */
  msc4306: boolean;
  /** MSC3930's poll rules (experimental_features.msc3381_polls_enabled). */
  msc3930?: boolean;
  /** MSC4210: the legacy mention rules are gone (experimental_features.msc4210_enabled). */
  msc4210?: boolean;
}

/** The default-rule features of a server's configuration. */
export function defaultRuleFeatures(config: { experimental_features: { msc4306_enabled: boolean; msc3381_polls_enabled: boolean; msc4210_enabled: boolean } }): DefaultRuleFeatures {
  const x = config.experimental_features;
  return { msc4306: x.msc4306_enabled, msc3930: x.msc3381_polls_enabled, msc4210: x.msc4210_enabled };
}

const POLL_START = "org.matrix.msc3381.poll.start";
const POLL_END = "org.matrix.msc3381.poll.end";

/** MSC3930: poll responses never notify (the last override rule, as Synapse). */
function pollOverrideRules(): DefaultRule[] {
  return [{ kind: "override", rule_id: ".org.matrix.msc3930.rule.poll_response", enabled: true, conditions: [match("type", "org.matrix.msc3381.poll.response")], actions: [] }];
}

/** MSC3930: poll starts and ends notify, with sound in one-to-one rooms (the last underride rules, as Synapse). */
function pollUnderrideRules(): DefaultRule[] {
  const oneToOne = { kind: "room_member_count", is: "2" } as const;
  return [
    { kind: "underride", rule_id: ".org.matrix.msc3930.rule.poll_start_one_to_one", enabled: true, conditions: [oneToOne, match("type", POLL_START)], actions: ["notify", SOUND] },
    { kind: "underride", rule_id: ".org.matrix.msc3930.rule.poll_start", enabled: true, conditions: [match("type", POLL_START)], actions: ["notify"] },
    { kind: "underride", rule_id: ".org.matrix.msc3930.rule.poll_end_one_to_one", enabled: true, conditions: [oneToOne, match("type", POLL_END)], actions: ["notify", SOUND] },
    { kind: "underride", rule_id: ".org.matrix.msc3930.rule.poll_end", enabled: true, conditions: [match("type", POLL_END)], actions: ["notify"] },
  ];
}

/**
 * MSC4306's rules (Synapse's BASE_APPEND_POSTCONTENT_RULES, in its order): an event of a thread the user
 * is not subscribed to does not notify; one of a thread they are subscribed to notifies with sound.
 */
function threadSubscriptionRules(): DefaultRule[] {
  return [
    { kind: "postcontent", rule_id: ".io.element.msc4306.rule.unsubscribed_thread", enabled: true, conditions: [{ kind: "io.element.msc4306.thread_subscription", subscribed: false }], actions: [] },
    { kind: "postcontent", rule_id: ".io.element.msc4306.rule.subscribed_thread", enabled: true, conditions: [{ kind: "io.element.msc4306.thread_subscription", subscribed: true }], actions: ["notify", SOUND] },
  ];
}

/** The other default rules of the user, in the spec's order within each kind. */
export function defaultRules(userId: string, features: DefaultRuleFeatures = { msc4306: false }): DefaultRule[] {
  const rules = allDefaultRules(userId, features);
  return features.msc4210 ? rules.filter((r) => !LEGACY_MENTION_RULES.has(r.rule_id)) : rules;
}

function allDefaultRules(userId: string, features: DefaultRuleFeatures): DefaultRule[] {
  return [
    ...(features.msc4306 ? threadSubscriptionRules() : []),
    { kind: "override", rule_id: ".m.rule.suppress_notices", enabled: true, conditions: [match("content.msgtype", "m.notice")], actions: [] },
    {
      kind: "override",
      rule_id: ".m.rule.invite_for_me",
      enabled: true,
      conditions: [match("type", "m.room.member"), match("content.membership", "invite"), match("state_key", userId)],
      actions: ["notify", SOUND],
    },
    { kind: "override", rule_id: ".m.rule.member_event", enabled: true, conditions: [match("type", "m.room.member")], actions: [] },
    {
      kind: "override",
      rule_id: ".m.rule.is_user_mention",
      enabled: true,
      conditions: [{ kind: "event_property_contains", key: "content.m\\.mentions.user_ids", value: userId }],
      actions: ["notify", SOUND, HIGHLIGHT],
    },
    { kind: "override", rule_id: ".m.rule.contains_display_name", enabled: true, conditions: [{ kind: "contains_display_name" }], actions: ["notify", SOUND, HIGHLIGHT] },
    {
      kind: "override",
      rule_id: ".m.rule.is_room_mention",
      enabled: true,
      conditions: [{ kind: "event_property_is", key: "content.m\\.mentions.room", value: true }, { kind: "sender_notification_permission", key: "room" }],
      actions: ["notify", HIGHLIGHT],
    },
    {
      kind: "override",
      rule_id: ".m.rule.roomnotif",
      enabled: true,
      conditions: [{ kind: "sender_notification_permission", key: "room" }, match("content.body", "@room")],
      actions: ["notify", HIGHLIGHT],
    },
    { kind: "override", rule_id: ".m.rule.tombstone", enabled: true, conditions: [match("type", "m.room.tombstone"), match("state_key", "")], actions: ["notify", HIGHLIGHT] },
    { kind: "override", rule_id: ".m.rule.reaction", enabled: true, conditions: [match("type", "m.reaction")], actions: [] },
    { kind: "override", rule_id: ".m.rule.room.server_acl", enabled: true, conditions: [match("type", "m.room.server_acl"), match("state_key", "")], actions: [] },
    {
      kind: "override",
      rule_id: ".m.rule.suppress_edits",
      enabled: true,
      conditions: [{ kind: "event_property_is", key: "content.m\\.relates_to.rel_type", value: "m.replace" }],
      actions: [],
    },
    ...(features.msc3930 ? pollOverrideRules() : []),
    { kind: "content", rule_id: ".m.rule.contains_user_name", enabled: true, pattern: localpartOf(userId), actions: ["notify", SOUND, HIGHLIGHT] },
    { kind: "underride", rule_id: ".m.rule.call", enabled: true, conditions: [match("type", "m.call.invite")], actions: ["notify", { set_tweak: "sound", value: "ring" }] },
    {
      kind: "underride",
      rule_id: ".m.rule.encrypted_room_one_to_one",
      enabled: true,
      conditions: [{ kind: "room_member_count", is: "2" }, match("type", "m.room.encrypted")],
      actions: ["notify", SOUND],
    },
    {
      kind: "underride",
      rule_id: ".m.rule.room_one_to_one",
      enabled: true,
      conditions: [{ kind: "room_member_count", is: "2" }, match("type", "m.room.message")],
      actions: ["notify", SOUND],
    },
    { kind: "underride", rule_id: ".m.rule.message", enabled: true, conditions: [match("type", "m.room.message")], actions: ["notify"] },
    { kind: "underride", rule_id: ".m.rule.encrypted", enabled: true, conditions: [match("type", "m.room.encrypted")], actions: ["notify"] },
    ...(features.msc3930 ? pollUnderrideRules() : []),
  ];
}
