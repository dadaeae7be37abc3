// Push rules, pushers and the notifications list on the GraphQL face, on SQLite and PostgreSQL: what
// GraphQL writes REST reads back and the other way round, ordering with before/after, server-default
// rules enabled and given actions, pages of notifications through the cursor; bad input answers the
// REST face's errcode (with extensions.code) and leaves the stored rules and pushers unchanged.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { createRoom } from "../helpers/rooms.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { gql } from "./client.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const RULE = `ruleId kind default enabled actions conditions pattern`;

describe.each(backends())("GraphQL push rules, pushers and notifications on %s", (backend) => {
  const { t, users: { alice, bob } } = withServer({ backend, users: ["alice", "bob"] });

  const ok = async (query: string, variables: Record<string, unknown>, token: string) => {
    const res = await gql(t, query, variables, token);
    expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
    return res.body.data;
  };

  it("setPushRule / pushRules / pushRule / deletePushRule round-trip with REST", async () => {
    const set = `mutation ($k: String!, $id: String!, $rule: PushRuleInput!, $before: String) { setPushRule(kind: $k, ruleId: $id, rule: $rule, before: $before) { ${RULE} } }`;
    const a = await ok(set, { k: "content", id: "cats", rule: { actions: ["notify", { set_tweak: "sound", value: "default" }], pattern: "cat*" } }, alice.access_token);
    expect(a.setPushRule).toEqual({ ruleId: "cats", kind: "content", default: false, enabled: true, actions: ["notify", { set_tweak: "sound", value: "default" }], conditions: null, pattern: "cat*" });
    const rest = await t.call("GET", `${V3}/pushrules/global/content/cats`, { token: alice.access_token });
    expect(rest.json).toEqual({ rule_id: "cats", default: false, enabled: true, actions: ["notify", { set_tweak: "sound", value: "default" }], pattern: "cat*" });

    // A rule REST wrote, placed by GraphQL's `before`: the order both faces show.
    expect((await t.call("PUT", `${V3}/pushrules/global/content/dogs`, { token: alice.access_token, body: { actions: ["notify"], pattern: "dog*" } })).status).toBe(200);
    await ok(set, { k: "content", id: "birds", rule: { actions: [], pattern: "bird*" }, before: "cats" }, alice.access_token);
    const own = (ids: { ruleId?: string; rule_id?: string; default: boolean }[]) => ids.filter((r) => !r.default).map((r) => r.ruleId ?? r.rule_id);
    const listed = await ok(`{ pushRules { content { ruleId default pattern } override { ruleId default } } }`, {}, alice.access_token);
    const restAll = await t.call("GET", `${V3}/pushrules/`, { token: alice.access_token });
    expect(own(listed.pushRules.content)).toEqual(own(restAll.json.global.content));
    expect(own(listed.pushRules.content)).toEqual(["dogs", "birds", "cats"]);
    expect(listed.pushRules.override.map((r: { ruleId: string }) => r.ruleId)).toEqual(restAll.json.global.override.map((r: { rule_id: string }) => r.rule_id));

    const one = await ok(`query ($id: String!) { pushRule(kind: "content", ruleId: $id) { ${RULE} } }`, { id: "dogs" }, alice.access_token);
    expect(one.pushRule).toMatchObject({ ruleId: "dogs", pattern: "dog*", actions: ["notify"] });

    expect((await ok(`mutation { deletePushRule(kind: "content", ruleId: "cats") }`, {}, alice.access_token)).deletePushRule).toBe(true);
    expect((await t.call("GET", `${V3}/pushrules/global/content/cats`, { token: alice.access_token })).status).toBe(404);
    const gone = await gql(t, `{ pushRule(kind: "content", ruleId: "cats") { ruleId } }`, {}, alice.access_token);
    expect(gone.body.errors?.[0]?.extensions).toMatchObject({ errcode: "M_NOT_FOUND", code: "NOT_FOUND" });
  });

  it("setPushRuleEnabled / setPushRuleActions change server-default rules as REST reads them", async () => {
    const en = await ok(`mutation { setPushRuleEnabled(kind: "override", ruleId: ".m.rule.master", enabled: true) { enabled default } }`, {}, bob.access_token);
    expect(en.setPushRuleEnabled).toEqual({ enabled: true, default: true });
    expect((await t.call("GET", `${V3}/pushrules/global/override/.m.rule.master/enabled`, { token: bob.access_token })).json).toEqual({ enabled: true });
    await ok(`mutation { setPushRuleEnabled(kind: "override", ruleId: ".m.rule.master", enabled: false) { enabled } }`, {}, bob.access_token);
    expect((await t.call("GET", `${V3}/pushrules/global/override/.m.rule.master/enabled`, { token: bob.access_token })).json).toEqual({ enabled: false });

    const actions = ["notify", { set_tweak: "highlight", value: false }];
    const act = await ok(`mutation ($a: JSON!) { setPushRuleActions(kind: "underride", ruleId: ".m.rule.message", actions: $a) { actions } }`, { a: actions }, bob.access_token);
    expect(act.setPushRuleActions.actions).toEqual(actions);
    expect((await t.call("GET", `${V3}/pushrules/global/underride/.m.rule.message/actions`, { token: bob.access_token })).json).toEqual({ actions });
  });

  it("bad rules answer M_INVALID_PARAM / BAD_USER_INPUT and change nothing", async () => {
    const before = await t.call("GET", `${V3}/pushrules/`, { token: alice.access_token });
    const cases = [
      `mutation { setPushRule(kind: "content", ruleId: "bad", rule: { actions: "notify", pattern: "x" }) { ruleId } }`,
      `mutation { setPushRule(kind: "content", ruleId: "bad", rule: { actions: ["notify"] }) { ruleId } }`,
      `mutation { setPushRule(kind: "override", ruleId: ".m.mine", rule: { actions: [] }) { ruleId } }`,
      `mutation { setPushRule(kind: "nosuch", ruleId: "bad", rule: { actions: [] }) { ruleId } }`,
      `mutation { setPushRule(kind: "override", ruleId: "bad", rule: { actions: [], conditions: [{ kind: "event_match" }] }) { ruleId } }`,
      `mutation { setPushRuleActions(kind: "override", ruleId: ".m.rule.master", actions: [42]) { ruleId } }`,
      `mutation { deletePushRule(kind: "override", ruleId: ".m.rule.master") }`,
    ];
    for (const q of cases) {
      const res = await gql(t, q, {}, alice.access_token);
      expect(res.body.errors?.[0]?.extensions, q).toMatchObject({ errcode: "M_INVALID_PARAM", code: "BAD_USER_INPUT" });
    }
    expect((await t.call("GET", `${V3}/pushrules/`, { token: alice.access_token })).json).toEqual(before.json);
  });

  it("setPusher / pushers / deletePusher round-trip with REST; a bad gateway URL changes nothing", async () => {
    const input = {
      kind: "http", appId: "org.example.app", pushkey: "key-1", appDisplayName: "App", deviceDisplayName: "Phone", lang: "en",
      profileTag: "tag", data: { url: "https://push.example.org/_matrix/push/v1/notify", format: "event_id_only" },
    };
    expect((await ok(`mutation ($i: PusherInput!) { setPusher(input: $i) }`, { i: input }, alice.access_token)).setPusher).toBe(true);
    const rest = await t.call("GET", `${V3}/pushers`, { token: alice.access_token });
    expect(rest.json.pushers).toEqual([
      { pushkey: "key-1", kind: "http", app_id: "org.example.app", app_display_name: "App", device_display_name: "Phone", profile_tag: "tag", lang: "en", data: input.data },
    ]);
    // One REST wrote, read by GraphQL.
    const body = { kind: "email", app_id: "m.email", pushkey: "alice@example.org", app_display_name: "Mail", device_display_name: "Inbox", lang: "fr", data: {} };
    expect((await t.call("POST", `${V3}/pushers/set`, { token: alice.access_token, body })).status).toBe(200);
    const listed = await ok(`{ pushers { pushkey kind appId appDisplayName deviceDisplayName profileTag lang data } }`, {}, alice.access_token);
    expect(listed.pushers).toEqual(expect.arrayContaining([
      { ...input },
      { pushkey: "alice@example.org", kind: "email", appId: "m.email", appDisplayName: "Mail", deviceDisplayName: "Inbox", profileTag: null, lang: "fr", data: {} },
    ]));
    expect(listed.pushers).toHaveLength(2);

    const bad = await gql(t, `mutation ($i: PusherInput!) { setPusher(input: $i) }`, { i: { ...input, pushkey: "key-2", data: { url: "https://push.example.org/elsewhere" } } }, alice.access_token);
    expect(bad.body.errors?.[0]?.extensions).toMatchObject({ errcode: "M_INVALID_PARAM", code: "BAD_USER_INPUT" });
    const notObject = await gql(t, `mutation ($i: PusherInput!) { setPusher(input: $i) }`, { i: { ...input, pushkey: "key-3", data: "x" } }, alice.access_token);
    expect(notObject.body.errors?.[0]?.extensions).toMatchObject({ errcode: "M_INVALID_PARAM", code: "BAD_USER_INPUT" });
    expect((await t.call("GET", `${V3}/pushers`, { token: alice.access_token })).json.pushers).toHaveLength(2);

    expect((await ok(`mutation { deletePusher(appId: "org.example.app", pushkey: "key-1") }`, {}, alice.access_token)).deletePusher).toBe(true);
    expect((await t.call("GET", `${V3}/pushers`, { token: alice.access_token })).json.pushers.map((p: { pushkey: string }) => p.pushkey)).toEqual(["alice@example.org"]);
  });

  it("notifications: pages through the cursor as REST's next_token, highlights only on request", async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat" });
    expect((await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} })).status).toBe(200);
    const sent: string[] = [];
    for (const [i, content] of [{ body: "one" }, { body: "two", "m.mentions": { user_ids: [bob.user_id] } }, { body: "three" }].entries()) {
      const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/n${i}`, { token: alice.access_token, body: { msgtype: "m.text", ...content } });
      expect(res.status).toBe(200);
      sent.push(res.json.event_id);
    }
    // The notifications are stored as the events are pushed: wait (bounded) until REST lists all three.
    const rest = await eventually(async () => {
      const res = await t.call("GET", `${V3}/notifications`, { token: bob.access_token });
      return res.json.notifications.filter((n: { room_id: string }) => n.room_id === roomId).length >= 3 && res;
    }, "three notifications");
    const restIds = rest.json.notifications.filter((n: { room_id: string }) => n.room_id === roomId).map((n: { event: { event_id: string } }) => n.event.event_id);
    expect(restIds).toEqual([...sent].reverse());

    const Q = `query ($from: String, $only: Boolean) { notifications(from: $from, limit: 2, onlyHighlights: $only) { notifications { roomId read ts actions profileTag event { eventId body } } pageInfo { hasNextPage endCursor } } }`;
    const first = (await ok(Q, {}, bob.access_token)).notifications;
    expect(first.notifications.map((n: { event: { eventId: string } }) => n.event.eventId)).toEqual([sent[2], sent[1]]);
    expect(first.notifications[0]).toMatchObject({ roomId, read: false, profileTag: null, event: { body: "three" } });
    expect(first.notifications[0].actions).toEqual(rest.json.notifications[0].actions);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const second = (await ok(Q, { from: first.pageInfo.endCursor }, bob.access_token)).notifications;
    expect(second.notifications.map((n: { event: { eventId: string } }) => n.event.eventId)).toEqual([sent[0]]);
    const highlights = (await ok(Q, { only: true }, bob.access_token)).notifications;
    expect(highlights.notifications.map((n: { event: { eventId: string } }) => n.event.eventId)).toEqual([sent[1]]);

    const bad = await gql(t, `{ notifications(from: "not-a-token") { pageInfo { endCursor } } }`, {}, bob.access_token);
    expect(bad.body.errors?.[0]?.extensions).toMatchObject({ errcode: "M_INVALID_PARAM", code: "BAD_USER_INPUT" });
  });
});
