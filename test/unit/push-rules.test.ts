// Push rule evaluation from the spec's text (Client-Server API "Push Rules", "Conditions", "Predefined
// Rules"; appendices "Glob-style matching", "Dot-separated property paths"): each condition kind with the
// spec's own examples, and each server-default rule deciding the events it is written for.
import { describe, expect, it } from "vitest";
import { CompiledRuleset, PushEvent, type PushUser } from "../../src/domain/push/evaluator.ts";
import { buildRuleset } from "../../src/domain/push/ruleset.ts";
import { containsWords, globMatchesWhole, globMatchesWords, splitDottedPath, valueAtPath } from "../../src/domain/push/matchers.ts";
import type { PushCondition, PushRuleJson } from "../../src/domain/push/rule-types.ts";
import type { Pdu } from "../../src/domain/events/types.ts";

const ALICE: PushUser = { userId: "@alice:example.org", displayName: "Alice" };

function pdu(type: string, content: Record<string, unknown>, extra: Partial<Pdu> = {}): Pdu {
  return { type, content, sender: "@bob:example.org", room_id: "!room:example.org", ...extra } as unknown as Pdu;
}

interface Ctx {
  members?: number;
  senderLevel?: number;
  notifications?: Record<string, number>;
}

const event = (p: Pdu, c: Ctx = {}) => new PushEvent(p, c.members ?? 5, c.senderLevel ?? 0, (k) => c.notifications?.[k] ?? 50);

/** The id of the rule deciding `p` for Alice with the default ruleset (plus `own` override rules). */
function decide(p: Pdu, c: Ctx = {}, own: PushRuleJson[] = [], user = ALICE): string | undefined {
  const set = buildRuleset(user.userId, [], []);
  set.override.splice(1, 0, ...own);
  return new CompiledRuleset(set).evaluate(event(p, c), user)?.ruleId;
}

/** Does a single override rule with these conditions match? */
function matches(conditions: PushCondition[], p: Pdu, c: Ctx = {}, user = ALICE): boolean {
  const set = { override: [{ rule_id: "t", default: false, enabled: true, conditions, actions: ["notify"] }], content: [], postcontent: [], room: [], sender: [], underride: [] };
  return new CompiledRuleset(set).evaluate(event(p, c), user)?.ruleId === "t";
}

describe("glob-style matching and dotted paths", () => {
  it("event_match on a whole value: the spec's `lunc?*` example", () => {
    const topic = (t: unknown) => pdu("m.room.topic", { topic: t }, { state_key: "" });
    const cond: PushCondition[] = [{ kind: "event_match", key: "content.topic", pattern: "lunc?*" }];
    expect(matches(cond, topic("Lunch plans"))).toBe(true);
    expect(matches(cond, topic("LUNCH"))).toBe(true);
    expect(matches(cond, topic(" lunch"))).toBe(false);
    expect(matches(cond, topic("lunc"))).toBe(false);
    expect(matches(cond, topic(null))).toBe(false);
    expect(matches([{ kind: "event_match", key: "content.topic", pattern: "*" }], pdu("m.room.topic", {}))).toBe(false);
    expect(globMatchesWhole("a*b", "a\nb")).toBe(true);
    expect(globMatchesWhole("?**?**?", "ab")).toBe(false);
    expect(globMatchesWhole("?**?**?", "abc")).toBe(true);
    expect(globMatchesWhole("a.c", "abc")).toBe(false);
  });

  it("content.body matches a substring at word boundaries: the spec's `ex*ple` example", () => {
    const body = (b: string) => pdu("m.room.message", { body: b });
    const cond: PushCondition[] = [{ kind: "event_match", key: "content.body", pattern: "ex*ple" }];
    expect(matches(cond, body("An example event."))).toBe(true);
    expect(matches(cond, body("exple"))).toBe(true);
    expect(matches(cond, body("An exciting triple-whammy"))).toBe(true);
    expect(matches(cond, body("Anexample"))).toBe(false);
    expect(globMatchesWords("cake", "I like CAKE!")).toBe(true);
    expect(globMatchesWords("cake", "cakes")).toBe(false);
    expect(globMatchesWords("@room", "hi @room")).toBe(true);
  });

  it("dot-separated paths: escaped dots and backslashes", () => {
    expect(splitDottedPath("content.m\\.relates_to.rel_type")).toEqual(["content", "m.relates_to", "rel_type"]);
    expect(splitDottedPath("content.m\\\\foo")).toEqual(["content", "m\\foo"]);
    expect(splitDottedPath("content.m\\xfoo")).toEqual(["content", "m\\xfoo"]);
    expect(valueAtPath({ content: { "m\\foo": 1 } }, splitDottedPath("content.m\\\\foo"))).toEqual({ found: true, value: 1 });
    expect(valueAtPath({ content: { m: { federate: true } } }, splitDottedPath("content.m\\.federate"))).toEqual({ found: false, value: undefined });
    expect(matches([{ kind: "event_property_is", key: "content.m\\\\foo", value: "x" }], pdu("t", { "m\\foo": "x" }))).toBe(true);
  });
});

describe("conditions", () => {
  it("event_property_is: the spec's m.federate example (exact, no casts)", () => {
    const create = (v: unknown) => pdu("m.room.create", { creator: "@example:example.org", "m.federate": v, room_version: "1" }, { state_key: "" });
    const cond: PushCondition[] = [{ kind: "event_property_is", key: "content.m\\.federate", value: true }];
    expect(matches(cond, create(true))).toBe(true);
    expect(matches(cond, create("true"))).toBe(false);
    expect(matches(cond, create(1))).toBe(false);
    expect(matches(cond, pdu("m.room.create", {}))).toBe(false);
    expect(matches([{ kind: "event_property_is", key: "content.v", value: null }], pdu("t", { v: null }))).toBe(true);
    expect(matches([{ kind: "event_property_is", key: "content.v", value: null }], pdu("t", {}))).toBe(false);
    expect(matches([{ kind: "event_property_is", key: "content.v", value: 3 }], pdu("t", { v: 3 }))).toBe(true);
  });

  it("event_property_contains: the spec's alt_aliases example", () => {
    const alias = (alt: unknown) => pdu("m.room.canonical_alias", { alias: "#somewhere:localhost", alt_aliases: alt }, { state_key: "" });
    const cond = (value: string): PushCondition[] => [{ kind: "event_property_contains", key: "content.alt_aliases", value }];
    expect(matches(cond("#myroom:example.com"), alias(["#somewhere:example.org", "#myroom:example.com"]))).toBe(true);
    expect(matches(cond(":example.com"), alias(["#somewhere:example.org", "#myroom:example.com"]))).toBe(false);
    expect(matches(cond("#myroom:example.com"), alias("#myroom:example.com"))).toBe(false);
    expect(matches(cond("#myroom:example.com"), alias([{ a: 1 }, "#myroom:example.com"]))).toBe(true);
  });

  it("contains_display_name: whole words, case-insensitive, regex characters taken literally", () => {
    const cond: PushCondition[] = [{ kind: "contains_display_name" }];
    const body = (b: string) => pdu("m.room.message", { body: b });
    expect(matches(cond, body("hello alice!"))).toBe(true);
    expect(matches(cond, body("hello alicex"))).toBe(false);
    const odd = { userId: ALICE.userId, displayName: "A.l*ce (x)+?" };
    expect(matches(cond, body("hi A.l*ce (x)+? there"), {}, odd)).toBe(true);
    expect(matches(cond, body("hi Axlxxce (x)+ there"), {}, odd)).toBe(false);
    expect(matches(cond, body("hi"), {}, { userId: ALICE.userId, displayName: "" })).toBe(false);
    expect(matches(cond, body("hi"), {}, { userId: ALICE.userId, displayName: undefined })).toBe(false);
    expect(containsWords("[bot]", "ping [bot]!")).toBe(true);
    expect(matches(cond, pdu("m.room.message", { body: 5 }))).toBe(false);
  });

  it("room_member_count: ==, <, >, <=, >= and no operator", () => {
    const m = (is: string, members: number) => matches([{ kind: "room_member_count", is }], pdu("t", {}), { members });
    expect(m("2", 2)).toBe(true);
    expect(m("2", 3)).toBe(false);
    expect(m("==2", 2)).toBe(true);
    expect(m("<3", 2)).toBe(true);
    expect(m("<3", 3)).toBe(false);
    expect(m(">1", 2)).toBe(true);
    expect(m(">2", 2)).toBe(false);
    expect(m(">=2", 2)).toBe(true);
    expect(m("<=2", 3)).toBe(false);
    expect(m("<=10", 10)).toBe(true);
  });

  it("sender_notification_permission: the notifications level of the key (default 50)", () => {
    const c: PushCondition[] = [{ kind: "sender_notification_permission", key: "room" }];
    expect(matches(c, pdu("t", {}), { senderLevel: 50 })).toBe(true);
    expect(matches(c, pdu("t", {}), { senderLevel: 49 })).toBe(false);
    expect(matches(c, pdu("t", {}), { senderLevel: 10, notifications: { room: 10 } })).toBe(true);
    expect(matches([{ kind: "sender_notification_permission", key: "other" }], pdu("t", {}), { senderLevel: 50 })).toBe(true);
  });

  it("unknown condition kinds never match; a rule without conditions always does", () => {
    expect(matches([{ kind: "org.example.future" }], pdu("m.room.message", { body: "x" }))).toBe(false);
    expect(matches([], pdu("anything", {}))).toBe(true);
  });

  it("dont_notify and coalesce are ignored: such a rule matches without notifying", () => {
    const set = { override: [{ rule_id: "quiet", default: false, enabled: true, conditions: [], actions: ["dont_notify", "coalesce"] }], content: [], postcontent: [], room: [], sender: [], underride: [] };
    const r = new CompiledRuleset(set).evaluate(event(pdu("m.room.message", {})), ALICE);
    expect(r?.ruleId).toBe("quiet");
    expect(r?.actions).toEqual([]);
    expect(r?.notify).toBe(false);
  });
});

describe("server-default rules", () => {
  const msg = (body: string, extra: Record<string, unknown> = {}) => pdu("m.room.message", { msgtype: "m.text", body, ...extra });

  it(".m.rule.master is disabled by default; enabled it matches everything first", () => {
    expect(decide(msg("hi"))).toBe(".m.rule.message");
    const set = buildRuleset(ALICE.userId, [], [{ kind: "override", ruleId: ".m.rule.master", enabled: true, actions: null }]);
    const r = new CompiledRuleset(set).evaluate(event(msg("hi alice", { "m.mentions": { user_ids: [ALICE.userId] } })), ALICE);
    expect(r?.ruleId).toBe(".m.rule.master");
    expect(r?.notify).toBe(false);
  });

  it(".m.rule.suppress_notices", () => expect(decide(msg("hi", { msgtype: "m.notice" }))).toBe(".m.rule.suppress_notices"));

  it(".m.rule.invite_for_me and .m.rule.member_event", () => {
    expect(decide(pdu("m.room.member", { membership: "invite" }, { state_key: ALICE.userId }))).toBe(".m.rule.invite_for_me");
    expect(decide(pdu("m.room.member", { membership: "invite" }, { state_key: "@carol:example.org" }))).toBe(".m.rule.member_event");
    expect(decide(pdu("m.room.member", { membership: "join" }, { state_key: "@bob:example.org" }))).toBe(".m.rule.member_event");
  });

  it(".m.rule.is_user_mention (before suppress_edits: a mentioning edit notifies)", () => {
    const mention = { "m.mentions": { user_ids: [ALICE.userId] } };
    expect(decide(msg("x", mention))).toBe(".m.rule.is_user_mention");
    expect(decide(msg("x", { "m.mentions": { user_ids: ["@carol:example.org"] } }))).toBe(".m.rule.message");
    expect(decide(msg("x", { ...mention, "m.relates_to": { rel_type: "m.replace", event_id: "$e" } }))).toBe(".m.rule.is_user_mention");
  });

  it(".m.rule.contains_display_name, skipped when m.mentions is present", () => {
    expect(decide(msg("thanks Alice"))).toBe(".m.rule.contains_display_name");
    expect(decide(msg("thanks Alice", { "m.mentions": {} }))).toBe(".m.rule.message");
  });

  it(".m.rule.is_room_mention needs the power to notify the room", () => {
    const room = { "m.mentions": { room: true } };
    expect(decide(msg("all", room), { senderLevel: 50 })).toBe(".m.rule.is_room_mention");
    expect(decide(msg("all", room), { senderLevel: 0 })).toBe(".m.rule.message");
    expect(decide(msg("all", { "m.mentions": { room: "true" } }), { senderLevel: 100 })).toBe(".m.rule.message");
  });

  it(".m.rule.roomnotif: @room in the body with power, skipped when m.mentions is present", () => {
    expect(decide(msg("@room lunch"), { senderLevel: 100 })).toBe(".m.rule.roomnotif");
    expect(decide(msg("@room lunch"), { senderLevel: 0 })).toBe(".m.rule.message");
    expect(decide(msg("@room lunch", { "m.mentions": {} }), { senderLevel: 100 })).toBe(".m.rule.message");
  });

  it(".m.rule.tombstone: the state event only", () => {
    expect(decide(pdu("m.room.tombstone", { replacement_room: "!n:x" }, { state_key: "" }))).toBe(".m.rule.tombstone");
    expect(decide(pdu("m.room.tombstone", { replacement_room: "!n:x" }))).toBeUndefined();
  });

  it(".m.rule.reaction, .m.rule.room.server_acl, .m.rule.suppress_edits", () => {
    expect(decide(pdu("m.reaction", { "m.relates_to": { rel_type: "m.annotation", event_id: "$e", key: "👍" } }))).toBe(".m.rule.reaction");
    expect(decide(pdu("m.room.server_acl", { allow: ["*"] }, { state_key: "" }))).toBe(".m.rule.room.server_acl");
    expect(decide(msg("* fixed", { "m.relates_to": { rel_type: "m.replace", event_id: "$e" } }))).toBe(".m.rule.suppress_edits");
  });

  it(".m.rule.contains_user_name: the localpart as a word, highlighting", () => {
    const set = new CompiledRuleset(buildRuleset(ALICE.userId, [], []));
    const r = set.evaluate(event(msg("where is ALICE?")), { ...ALICE, displayName: undefined });
    expect(r?.ruleId).toBe(".m.rule.contains_user_name");
    expect(r?.highlight).toBe(true);
    expect(decide(msg("malice"), {}, [], { ...ALICE, displayName: undefined })).toBe(".m.rule.message");
  });

  it("underride: call, encrypted and plain 1:1 rooms, message, encrypted", () => {
    expect(decide(pdu("m.call.invite", { call_id: "1" }))).toBe(".m.rule.call");
    expect(decide(pdu("m.room.encrypted", { ciphertext: "x" }), { members: 2 })).toBe(".m.rule.encrypted_room_one_to_one");
    expect(decide(pdu("m.room.encrypted", { ciphertext: "x" }), { members: 3 })).toBe(".m.rule.encrypted");
    expect(decide(msg("hi"), { members: 2 })).toBe(".m.rule.room_one_to_one");
    expect(decide(msg("hi"), { members: 3 })).toBe(".m.rule.message");
    expect(decide(pdu("org.example.custom", {}))).toBeUndefined();
  });

  it("user rules of each kind come before the defaults of their kind", () => {
    const set = buildRuleset(ALICE.userId, [
      { kind: "room", ruleId: "!room:example.org", position: 0, conditions: null, pattern: null, actions: "[]", enabled: true },
      { kind: "sender", ruleId: "@bob:example.org", position: 0, conditions: null, pattern: null, actions: '["notify"]', enabled: true },
      { kind: "content", ruleId: "tea", position: 0, conditions: null, pattern: "tea", actions: '["notify",{"set_tweak":"sound","value":"kettle"}]', enabled: true },
    ], []);
    const compiled = new CompiledRuleset(set);
    expect(compiled.evaluate(event(msg("tea time")), ALICE)?.ruleId).toBe("tea");
    expect(compiled.evaluate(event(msg("plain")), ALICE)?.ruleId).toBe("!room:example.org");
    expect(compiled.evaluate(event(msg("plain", { "m.mentions": { user_ids: [ALICE.userId] } })), ALICE)?.ruleId).toBe(".m.rule.is_user_mention");
  });
});
