// The push rules API over HTTP on SQLite and PostgreSQL: the default ruleset in the spec's order with
// `default` on every rule, adding rules with before/after, enabled/actions of user and default rules,
// deleting, m.push_rules in /sync account data (initial, and incremental after a change) and through
// GET account_data, never writable through PUT account_data; bad input gets the spec's errors and
// leaves the ruleset unchanged; every level of the /pushrules/ path answers as Synapse's (a scope's and a
// kind's rules, 400 M_UNRECOGNIZED for a path missing a level). Responses are validated against the spec's schemas.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("push rules API on %s", (backend) => {
  let t: TestServer;
  let alice: Session;

  beforeAll(async () => {
    t = await startTestServer({ backend });
    alice = await registerUser(t, "alice");
  });
  afterAll(async () => {
    await t?.close();
  });

  const call = (method: string, path: string, body?: unknown, who: Session = alice) => t.call(method, `${V3}${path}`, { token: who.access_token, body });
  const ruleset = async () => {
    const res = await call("GET", "/pushrules/");
    expect(res.status).toBe(200);
    expectMatchesSpec(res, "GET", `${V3}/pushrules/`);
    return res.json.global;
  };
  const ids = (list: { rule_id: string }[]) => list.map((r) => r.rule_id);

  it("serves the server-default rules in the spec's order, each with default: true", async () => {
    const g = await ruleset();
    expect(ids(g.override)).toEqual([
      ".m.rule.master",
      ".m.rule.suppress_notices",
      ".m.rule.invite_for_me",
      ".m.rule.member_event",
      ".m.rule.is_user_mention",
      ".m.rule.contains_display_name",
      ".m.rule.is_room_mention",
      ".m.rule.roomnotif",
      ".m.rule.tombstone",
      ".m.rule.reaction",
      ".m.rule.room.server_acl",
      ".m.rule.suppress_edits",
    ]);
    expect(ids(g.content)).toEqual([".m.rule.contains_user_name"]);
    expect(ids(g.underride)).toEqual([".m.rule.call", ".m.rule.encrypted_room_one_to_one", ".m.rule.room_one_to_one", ".m.rule.message", ".m.rule.encrypted"]);
    expect(g.room).toEqual([]);
    expect(g.sender).toEqual([]);
    for (const r of [...g.override, ...g.content, ...g.underride]) expect(r.default).toBe(true);
    expect(g.override[0]).toEqual({ rule_id: ".m.rule.master", default: true, enabled: false, conditions: [], actions: [] });
    expect(g.content[0]).toMatchObject({ pattern: "alice", actions: ["notify", { set_tweak: "sound", value: "default" }, { set_tweak: "highlight" }] });
    expect(g.override.find((r: any) => r.rule_id === ".m.rule.is_user_mention").conditions).toEqual([{ kind: "event_property_contains", key: "content.m\\.mentions.user_ids", value: alice.user_id }]);
    expect(g.override.find((r: any) => r.rule_id === ".m.rule.invite_for_me").conditions[2]).toEqual({ kind: "event_match", key: "state_key", pattern: alice.user_id });
    const global = await call("GET", "/pushrules/global/");
    expect(global.status).toBe(200);
    expectMatchesSpec(global, "GET", `${V3}/pushrules/global/`);
    expect(global.json).toEqual(g);
  });

  it("adds rules at the top of their kind, before/after another, and reads one back", async () => {
    const put = (kind: string, id: string, body: unknown, q = "") => call("PUT", `/pushrules/global/${kind}/${enc(id)}${q}`, body);
    const r1 = await put("content", "cake", { pattern: "cake", actions: ["notify"] });
    expect(r1.status).toBe(200);
    expectMatchesSpec(r1, "PUT", `${V3}/pushrules/global/content/cake`);
    expect((await put("content", "tea", { pattern: "tea*", actions: ["notify"] })).status).toBe(200);
    expect(ids((await ruleset()).content)).toEqual(["tea", "cake", ".m.rule.contains_user_name"]);
    expect((await put("content", "lie", { pattern: "cake*lie", actions: ["notify"] }, "?before=cake")).status).toBe(200);
    expect((await put("content", "last", { pattern: "x", actions: [] }, "?after=cake")).status).toBe(200);
    expect(ids((await ruleset()).content)).toEqual(["tea", "lie", "cake", "last", ".m.rule.contains_user_name"]);
    // Replacing a rule keeps its place unless told otherwise.
    expect((await put("content", "lie", { pattern: "cake*lies", actions: ["notify", { set_tweak: "sound", value: "cakealarm.wav" }] })).status).toBe(200);
    const one = await call("GET", "/pushrules/global/content/lie");
    expect(one.status).toBe(200);
    expectMatchesSpec(one, "GET", `${V3}/pushrules/global/content/lie`);
    expect(one.json).toEqual({ rule_id: "lie", default: false, enabled: true, pattern: "cake*lies", actions: ["notify", { set_tweak: "sound", value: "cakealarm.wav" }] });
    expect(ids((await ruleset()).content)).toEqual(["tea", "lie", "cake", "last", ".m.rule.contains_user_name"]);

    const room = "!dj234r78wl45Gh4D:matrix.org";
    expect((await put("room", room, { actions: [] })).status).toBe(200);
    expect((await put("sender", "@spambot:matrix.org", { actions: ["dont_notify"] })).status).toBe(200);
    const over = { conditions: [{ kind: "event_match", key: "content.body", pattern: "beer" }, { kind: "room_member_count", is: "<=10" }], actions: ["notify", { set_tweak: "sound", value: "beeroclock.wav" }] };
    expect((await put("override", "beer", over)).status).toBe(200);
    const g = await ruleset();
    expect(g.room).toEqual([{ rule_id: room, default: false, enabled: true, actions: [] }]);
    expect(g.sender[0]).toMatchObject({ rule_id: "@spambot:matrix.org", actions: ["dont_notify"] });
    // User override rules come after .m.rule.master and before the other server-default overrides.
    expect(ids(g.override).slice(0, 3)).toEqual([".m.rule.master", "beer", ".m.rule.suppress_notices"]);
    expect(g.override[1]).toEqual({ rule_id: "beer", default: false, enabled: true, ...over });
  });

  it("enabled and actions of user and default rules; delete", async () => {
    const path = "/pushrules/global/override/.m.rule.master";
    const en = await call("GET", `${path}/enabled`);
    expect(en.status).toBe(200);
    expectMatchesSpec(en, "GET", `${V3}${path}/enabled`);
    expect(en.json).toEqual({ enabled: false });
    const set = await call("PUT", `${path}/enabled`, { enabled: true });
    expect(set.status).toBe(200);
    expectMatchesSpec(set, "PUT", `${V3}${path}/enabled`);
    expect((await call("GET", `${path}/enabled`)).json).toEqual({ enabled: true });
    expect((await call("PUT", `${path}/enabled`, { enabled: false })).status).toBe(200);

    const msg = "/pushrules/global/underride/.m.rule.message";
    const acts = await call("PUT", `${msg}/actions`, { actions: ["notify", { set_tweak: "sound", value: "ping" }] });
    expect(acts.status).toBe(200);
    expectMatchesSpec(acts, "PUT", `${V3}${msg}/actions`);
    const got = await call("GET", `${msg}/actions`);
    expectMatchesSpec(got, "GET", `${V3}${msg}/actions`);
    expect(got.json).toEqual({ actions: ["notify", { set_tweak: "sound", value: "ping" }] });
    expect((await call("GET", msg)).json).toMatchObject({ default: true, enabled: true, actions: ["notify", { set_tweak: "sound", value: "ping" }] });

    expect((await call("PUT", "/pushrules/global/content/tmp", { pattern: "tmp", actions: [] })).status).toBe(200);
    expect((await call("PUT", "/pushrules/global/content/tmp/enabled", { enabled: false })).status).toBe(200);
    expect((await call("GET", "/pushrules/global/content/tmp")).json.enabled).toBe(false);
    const del = await call("DELETE", "/pushrules/global/content/tmp");
    expect(del.status).toBe(200);
    expectMatchesSpec(del, "DELETE", `${V3}/pushrules/global/content/tmp`);
    const gone = await call("GET", "/pushrules/global/content/tmp");
    expect(gone.status).toBe(404);
    expectMatchesSpec(gone, "GET", `${V3}/pushrules/global/content/tmp`);
    expect(gone.json.errcode).toBe("M_NOT_FOUND");
  });

  it("refuses bad input with the spec's errors and leaves the ruleset unchanged", async () => {
    const before = await ruleset();
    const cases: [string, string, unknown, number, string][] = [
      ["PUT", "/pushrules/global/nonsense/x", { actions: [] }, 400, "M_INVALID_PARAM"],
      ["GET", "/pushrules/global/nonsense/x", undefined, 400, "M_INVALID_PARAM"],
      ["PUT", "/pushrules/global/content/.mine", { pattern: "a", actions: [] }, 400, "M_INVALID_PARAM"],
      ["PUT", "/pushrules/global/override/.m.rule.master", { conditions: [], actions: [] }, 400, "M_INVALID_PARAM"],
      ["PUT", `/pushrules/global/content/${enc("a\\b")}`, { pattern: "a", actions: [] }, 400, "M_INVALID_PARAM"],
      ["PUT", "/pushrules/global/content/x", { actions: [] }, 400, "M_INVALID_PARAM"],
      ["PUT", "/pushrules/global/content/x", { pattern: "x" }, 400, "M_INVALID_PARAM"],
      ["PUT", "/pushrules/global/content/x", { pattern: "x", actions: ["set_sound"] }, 400, "M_INVALID_PARAM"],
      ["PUT", "/pushrules/global/content/x", { pattern: "x", actions: [{ value: "a" }] }, 400, "M_INVALID_PARAM"],
      ["PUT", "/pushrules/global/content/x", { pattern: "x", actions: "notify" }, 400, "M_INVALID_PARAM"],
      ["PUT", "/pushrules/global/override/x", { conditions: [{ key: "type" }], actions: [] }, 400, "M_INVALID_PARAM"],
      ["PUT", "/pushrules/global/override/x", { conditions: [{ kind: "event_match", key: "type" }], actions: [] }, 400, "M_INVALID_PARAM"],
      ["PUT", "/pushrules/global/override/x", { conditions: [{ kind: "room_member_count", is: "=>2" }], actions: [] }, 400, "M_INVALID_PARAM"],
      ["PUT", "/pushrules/global/override/x", { conditions: [{ kind: "event_property_is", key: "a", value: { o: 1 } }], actions: [] }, 400, "M_INVALID_PARAM"],
      ["PUT", "/pushrules/global/override/x", { conditions: "nope", actions: [] }, 400, "M_INVALID_PARAM"],
      ["PUT", "/pushrules/global/content/x?before=missing", { pattern: "x", actions: [] }, 400, "M_UNKNOWN"],
      ["PUT", "/pushrules/global/content/x?after=.m.rule.contains_user_name", { pattern: "x", actions: [] }, 400, "M_UNKNOWN"],
      ["PUT", "/pushrules/global/content/missing/enabled", { enabled: true }, 404, "M_NOT_FOUND"],
      ["PUT", "/pushrules/global/override/.m.rule.nothing/actions", { actions: [] }, 404, "M_NOT_FOUND"],
      ["PUT", "/pushrules/global/override/.m.rule.master/enabled", { enabled: "yes" }, 400, "M_INVALID_PARAM"],
      ["PUT", "/pushrules/global/override/.m.rule.master/actions", { actions: ["bogus"] }, 400, "M_INVALID_PARAM"],
      ["DELETE", "/pushrules/global/override/.m.rule.master", undefined, 400, "M_INVALID_PARAM"],
      ["DELETE", "/pushrules/global/content/missing", undefined, 404, "M_NOT_FOUND"],
      ["GET", "/pushrules/global/content/missing", undefined, 404, "M_NOT_FOUND"],
      // MSC4306's postcontent kind without msc4306_enabled, as Synapse: known, with no rules; clients may not add any.
      ["GET", "/pushrules/global/postcontent/.io.element.msc4306.rule.subscribed_thread", undefined, 404, "M_NOT_FOUND"],
      ["GET", "/pushrules/global/postcontent/x/enabled", undefined, 404, "M_NOT_FOUND"],
      ["PUT", "/pushrules/global/postcontent/x/enabled", { enabled: false }, 404, "M_NOT_FOUND"],
      ["PUT", "/pushrules/global/postcontent/x", { conditions: [], actions: [] }, 400, "M_INVALID_PARAM"],
      ["DELETE", "/pushrules/global/postcontent/x", undefined, 404, "M_NOT_FOUND"],
    ];
    for (const [method, path, body, status, errcode] of cases) {
      const res = await call(method, path, body);
      expect({ path, method, status: res.status, errcode: res.json?.errcode }).toEqual({ path, method, status, errcode });
    }
    const raw = await t.call("PUT", `${V3}/pushrules/global/content/x`, { token: alice.access_token, raw: "{not json", headers: { "content-type": "application/json" } });
    expect(raw.json.errcode).toBe("M_NOT_JSON");
    expect(await ruleset()).toEqual(before);
    // Unknown condition kinds are stored (they never match, as the spec says).
    const unknown = await call("PUT", "/pushrules/global/override/future", { conditions: [{ kind: "org.example.future", x: 1 }], actions: ["notify"] });
    expect(unknown.status).toBe(200);
    expect((await call("DELETE", "/pushrules/global/override/future")).status).toBe(200);
    const noToken = await t.call("GET", `${V3}/pushrules/`);
    expect(noToken.status).toBe(401);
    expect(noToken.json.errcode).toBe("M_MISSING_TOKEN");
  });

  it("answers every level of the /pushrules/ path as Synapse does: the scope's set, a kind's rules in order, 400 for a path missing a level", async () => {
    const bob = await registerUser(t, "bob_paths");
    const as = (method: string, path: string, body?: unknown) => call(method, path, body, bob);
    expect((await as("PUT", "/pushrules/global/content/second", { pattern: "b", actions: ["notify"] })).status).toBe(200);
    expect((await as("PUT", "/pushrules/global/content/first", { pattern: "a", actions: [] })).status).toBe(200);
    const all = await as("GET", "/pushrules/");
    expect(all.status).toBe(200);
    const scope = await as("GET", "/pushrules/global/");
    expect(scope.status).toBe(200);
    expectMatchesSpec(scope, "GET", `${V3}/pushrules/global/`);
    expect(scope.json).toEqual(all.json.global);
    for (const kind of ["override", "content", "room", "sender", "underride"]) {
      const list = await as("GET", `/pushrules/global/${kind}/`);
      expect({ kind, status: list.status }).toEqual({ kind, status: 200 });
      expect(list.json).toEqual(all.json.global[kind]);
    }
    expect(ids((await as("GET", "/pushrules/global/content/")).json)).toEqual(["first", "second", ".m.rule.contains_user_name"]);
    // MSC4306's kind holds no rules without msc4306_enabled (as Synapse).
    const post = await as("GET", "/pushrules/global/postcontent/");
    expect([post.status, post.json]).toEqual([200, []]);

    // A path missing a level (or naming another scope) is a 400 with an errcode; `/pushrules` is no route.
    const cases: [string, string, number, string][] = [
      ["GET", "/pushrules", 404, "M_UNRECOGNIZED"],
      ["GET", "/pushrules/global", 400, "M_UNRECOGNIZED"],
      ["GET", "/pushrules/global/content", 400, "M_UNRECOGNIZED"],
      ["GET", "/pushrules/device/", 400, "M_UNRECOGNIZED"],
      ["GET", "/pushrules/device/content/first", 400, "M_UNRECOGNIZED"],
      ["PUT", "/pushrules/", 400, "M_UNRECOGNIZED"],
      ["PUT", "/pushrules/device/content/x", 400, "M_UNRECOGNIZED"],
      ["PUT", "/pushrules/global", 400, "M_UNRECOGNIZED"],
      ["PUT", "/pushrules/global/", 400, "M_UNRECOGNIZED"],
      ["PUT", "/pushrules/global/content", 400, "M_UNRECOGNIZED"],
      ["PUT", "/pushrules/global/content/", 400, "M_UNRECOGNIZED"],
      ["DELETE", "/pushrules/", 400, "M_UNRECOGNIZED"],
      ["DELETE", "/pushrules/device/content/first", 400, "M_UNRECOGNIZED"],
      ["DELETE", "/pushrules/global/", 400, "M_UNRECOGNIZED"],
      ["DELETE", "/pushrules/global/content/", 400, "M_UNRECOGNIZED"],
      ["POST", "/pushrules/", 405, "M_UNRECOGNIZED"],
    ];
    for (const [method, path, status, errcode] of cases) {
      const res = await as(method, path, method === "PUT" ? { pattern: "z", actions: ["notify"] } : undefined);
      expect({ method, path, status: res.status, errcode: res.json?.errcode }).toEqual({ method, path, status, errcode });
    }
    expect((await as("GET", "/pushrules/")).json).toEqual(all.json);
    // `.../{ruleId}/` names the rule itself.
    expect((await as("PUT", "/pushrules/global/content/third/", { pattern: "c", actions: [] })).status).toBe(200);
    expect((await as("GET", "/pushrules/global/content/third")).json).toMatchObject({ rule_id: "third", pattern: "c" });
    const noToken = await t.call("GET", `${V3}/pushrules/global/content/`);
    expect(noToken.status).toBe(401);
  });

  it("m.push_rules: in initial sync, in an incremental sync after a change, through GET account_data, never writable", async () => {
    const bob = await registerUser(t, "bob_rules");
    const first = await call("GET", "/sync?timeout=0", undefined, bob);
    expect(first.status).toBe(200);
    expectMatchesSpec(first, "GET", `${V3}/sync`);
    const ev = first.json.account_data.events.find((e: any) => e.type === "m.push_rules");
    expect(ev.content.global.override[0].rule_id).toBe(".m.rule.master");
    const quiet = await call("GET", `/sync?timeout=0&since=${enc(first.json.next_batch)}`, undefined, bob);
    expect(quiet.json.account_data.events.filter((e: any) => e.type === "m.push_rules")).toEqual([]);
    // A waiting sync wakes up when the rules change.
    const waiting = call("GET", `/sync?timeout=20000&since=${enc(quiet.json.next_batch)}`, undefined, bob);
    expect((await call("PUT", "/pushrules/global/sender/%40noisy%3Aexample.org", { actions: [] }, bob)).status).toBe(200);
    const woke = await waiting;
    expect(woke.status).toBe(200);
    const changed = woke.json.account_data.events.find((e: any) => e.type === "m.push_rules");
    expect(changed.content.global.sender).toEqual([{ rule_id: "@noisy:example.org", default: false, enabled: true, actions: [] }]);
    const viaAccountData = await call("GET", `/user/${enc(bob.user_id)}/account_data/m.push_rules`, undefined, bob);
    expect(viaAccountData.status).toBe(200);
    expect(viaAccountData.json.global.sender[0].rule_id).toBe("@noisy:example.org");
    const write = await call("PUT", `/user/${enc(bob.user_id)}/account_data/m.push_rules`, { global: {} }, bob);
    expect(write.status).toBe(405);
    expect(write.json.errcode).toBe("M_BAD_JSON");
    expect((await call("GET", "/pushrules/global/sender/%40noisy%3Aexample.org", undefined, bob)).status).toBe(200);
  });

  it("survives a restart: rules are stored", async () => {
    expect((await call("PUT", "/pushrules/global/content/keep", { pattern: "keep", actions: ["notify"] })).status).toBe(200);
    await t.restart();
    expect((await call("GET", "/pushrules/global/content/keep")).json).toMatchObject({ rule_id: "keep", pattern: "keep" });
  });
});
