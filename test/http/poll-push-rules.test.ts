// MSC3930's push rules for polls (MSC3381) over HTTP on SQLite and PostgreSQL, as Synapse 1.163 serves them
// with msc3381_polls_enabled: `.org.matrix.msc3930.rule.poll_response` last among the default override
// rules (no actions), the one-to-one and any-room poll start / end rules last among the underride ones, the
// one-to-one rule of each before its any-room rule; they can be read, disabled and given actions, never
// deleted; evaluation follows them (a poll start notifies, a response does not). With the flag off they
// do not exist (404) and a poll start does not notify.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const P = ".org.matrix.msc3930.rule.";
const SOUND = { set_tweak: "sound", value: "default" };

/** Alice and Bob in a two-member room; Alice sends `type`; Bob's notification count in the room after it. */
async function bobCountAfter(t: TestServer, alice: Session, bob: Session, types: string[]): Promise<number> {
  const roomId = await createRoom(t, alice, { preset: "public_chat" });
  expect((await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} })).status).toBe(200);
  let txn = 0;
  for (const type of types) {
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/${type}/p${++txn}`, { token: alice.access_token, body: { "org.matrix.msc3381.poll.start": { question: { body: "?" } } } });
    expect(res.status).toBe(200);
  }
  const sync = await t.call("GET", `${V3}/sync?timeout=0`, { token: bob.access_token });
  return sync.json.rooms.join[roomId].unread_notifications.notification_count as number;
}

describe.each(backends())("poll push rules (MSC3930) on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let bob: Session;

  beforeAll(async () => {
    t = await startTestServer({ backend, config: { experimental_features: { msc3381_polls_enabled: true } } });
    alice = await registerUser(t, "alice");
    bob = await registerUser(t, "bob");
  });
  afterAll(async () => {
    await t?.close();
  });

  const call = (method: string, path: string, body?: unknown, who: Session = alice) => t.call(method, `${V3}${path}`, { token: who.access_token, body });

  it("lists the poll rules where Synapse puts them, with its conditions and actions", async () => {
    const res = await call("GET", "/pushrules/");
    expectMatchesSpec(res, "GET", `${V3}/pushrules/`);
    const g = res.json.global;
    const override = g.override.map((r: { rule_id: string }) => r.rule_id);
    expect(override.slice(-2)).toEqual([".m.rule.suppress_edits", `${P}poll_response`]);
    expect(g.override.at(-1)).toEqual({
      rule_id: `${P}poll_response`, default: true, enabled: true, actions: [],
      conditions: [{ kind: "event_match", key: "type", pattern: "org.matrix.msc3381.poll.response" }],
    });
    const underride = g.underride.map((r: { rule_id: string }) => r.rule_id);
    expect(underride.slice(-5)).toEqual([".m.rule.encrypted", `${P}poll_start_one_to_one`, `${P}poll_start`, `${P}poll_end_one_to_one`, `${P}poll_end`]);
    for (const [what, type] of [["start", "org.matrix.msc3381.poll.start"], ["end", "org.matrix.msc3381.poll.end"]] as const) {
      expect(g.underride.find((r: { rule_id: string }) => r.rule_id === `${P}poll_${what}_one_to_one`)).toEqual({
        rule_id: `${P}poll_${what}_one_to_one`, default: true, enabled: true, actions: ["notify", SOUND],
        conditions: [{ kind: "room_member_count", is: "2" }, { kind: "event_match", key: "type", pattern: type }],
      });
      expect((await call("GET", `/pushrules/global/underride/${enc(`${P}poll_${what}`)}`)).json).toEqual({
        rule_id: `${P}poll_${what}`, default: true, enabled: true, actions: ["notify"],
        conditions: [{ kind: "event_match", key: "type", pattern: type }],
      });
    }
  });

  it("can disable them and change their actions, not delete them or find them under another kind", async () => {
    const path = `/pushrules/global/underride/${enc(`${P}poll_end`)}`;
    expect((await call("PUT", `${path}/enabled`, { enabled: false }, bob)).status).toBe(200);
    expect((await call("GET", `${path}/enabled`, undefined, bob)).json).toEqual({ enabled: false });
    expect((await call("PUT", `${path}/actions`, { actions: ["notify", SOUND] }, bob)).status).toBe(200);
    expect((await call("GET", path, undefined, bob)).json).toMatchObject({ enabled: false, actions: ["notify", SOUND], default: true });
    const del = await call("DELETE", path, undefined, bob);
    expect([del.status, del.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    const wrongKind = await call("GET", `/pushrules/global/override/${enc(`${P}poll_end`)}`);
    expect([wrongKind.status, wrongKind.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    // Alice's rule is her own: still enabled.
    expect((await call("GET", `${path}/enabled`)).json).toEqual({ enabled: true });
  });

  it("evaluates them: a poll start notifies in a one-to-one room, a response does not", async () => {
    expect(await bobCountAfter(t, alice, bob, ["org.matrix.msc3381.poll.start"])).toBe(1);
    expect(await bobCountAfter(t, alice, bob, ["org.matrix.msc3381.poll.response"])).toBe(0);
  });
});

describe("poll push rules with msc3381_polls_enabled off", () => {
  let t: TestServer;
  let alice: Session;
  let bob: Session;
  beforeAll(async () => {
    t = await startTestServer({});
    alice = await registerUser(t, "alice");
    bob = await registerUser(t, "bob");
  });
  afterAll(async () => {
    await t?.close();
  });

  it("has no poll rules, and a poll start does not notify", async () => {
    const g = (await t.call("GET", `${V3}/pushrules/`, { token: alice.access_token })).json.global;
    const all = [...g.override, ...g.underride].map((r: { rule_id: string }) => r.rule_id);
    expect(all.filter((id: string) => id.includes("msc3930"))).toEqual([]);
    const one = await t.call("GET", `${V3}/pushrules/global/override/${enc(`${P}poll_response`)}`, { token: alice.access_token });
    expect([one.status, one.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    const put = await t.call("PUT", `${V3}/pushrules/global/underride/${enc(`${P}poll_start`)}/enabled`, { token: alice.access_token, body: { enabled: false } });
    expect(put.status).toBe(404);
    expect(await bobCountAfter(t, alice, bob, ["org.matrix.msc3381.poll.start"])).toBe(0);
  });
});
