// state_after over HTTP on SQLite and PostgreSQL, in both of its forms: spec v1.16's `use_state_after`
// (always served; answers validated against the spec) and MSC4222's `org.matrix.msc4222.use_state_after`
// (honoured with experimental_features.msc4222_enabled, as Synapse). /sync then answers each room's state
// at the end of its timeline under `state_after` (`org.matrix.msc4222.state_after`) instead of `state`:
// all of it on an initial sync, the changes since the token on an incremental one (gappy or not), every
// timeline sender's member with lazy loading.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const FORMS = [
  { name: "use_state_after (spec v1.16)", param: "use_state_after", AFTER: "state_after", stable: true },
  { name: "org.matrix.msc4222.use_state_after", param: "org.matrix.msc4222.use_state_after", AFTER: "org.matrix.msc4222.state_after", stable: false },
];
type Ev = { type: string; state_key?: string; sender: string; content: Record<string, unknown> };

const cases = backends().flatMap((backend) => FORMS.map((form) => [backend, form] as const));

describe.each(cases)("state_after on %s with %o", (backend, { param, AFTER, stable }) => {
  let t: TestServer;
  let alice: Session;
  let bob: Session;
  let roomId: string;

  beforeAll(async () => {
    t = await startTestServer({ backend, config: { experimental_features: { msc4222_enabled: true } } });
    alice = await registerUser(t, "alice");
    bob = await registerUser(t, "bob");
    roomId = await createRoom(t, alice, { preset: "public_chat" });
    expect((await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} })).status).toBe(200);
  });
  afterAll(async () => {
    await t?.close();
  });

  const sync = async (query: string) => {
    const res = await t.call("GET", `${V3}/sync?${param}=true&${query}`, { token: alice.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    if (stable) expectMatchesSpec(res, "GET", `${V3}/sync`);
    return res.json;
  };
  const setState = async (key: string, content: Record<string, unknown>) =>
    expect((await t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/com.example.test/${key}`, { token: alice.access_token, body: content })).status).toBe(200);
  const keysOf = (events: Ev[]) => events.map((e) => `${e.type}|${e.state_key}`).sort();

  it("initial sync: the whole state at the timeline's end, and no `state`", async () => {
    const body = await sync("");
    const room = body.rooms.join[roomId];
    expect(room.state).toBeUndefined();
    const keys = keysOf(room[AFTER].events);
    expect(keys).toEqual(expect.arrayContaining(["m.room.create|", "m.room.power_levels|", `m.room.member|${alice.user_id}`, `m.room.member|${bob.user_id}`]));
  });

  it("incremental sync: the state events of the timeline are in state_after; a gap's changes too", async () => {
    const since = (await sync("")).next_batch as string;
    await setState("one", { n: 1 });
    const body = await sync(`since=${enc(since)}`);
    const room = body.rooms.join[roomId];
    expect(room.timeline.events.map((e: Ev) => e.state_key)).toContain("one");
    expect(room[AFTER].events).toMatchObject([{ type: "com.example.test", state_key: "one", content: { n: 1 } }]);

    // A gappy sync: two state changes, a timeline of one event.
    const since2 = body.next_batch as string;
    await setState("two", { n: 2 });
    await setState("one", { n: 3 });
    const filter = enc(JSON.stringify({ room: { timeline: { limit: 1 } } }));
    const gappy = (await sync(`since=${enc(since2)}&filter=${filter}`)).rooms.join[roomId];
    expect(gappy.timeline.limited).toBe(true);
    const after = gappy[AFTER].events as Ev[];
    expect(keysOf(after)).toEqual(["com.example.test|one", "com.example.test|two"]);
    expect(after.find((e) => e.state_key === "one")!.content).toEqual({ n: 3 });
  });

  it("with lazy-loaded members: the member event of every timeline sender, those in the timeline too", async () => {
    const filter = enc(JSON.stringify({ room: { timeline: { limit: 20 }, state: { lazy_load_members: true } } }));
    const room = (await sync(`filter=${filter}`)).rooms.join[roomId];
    const senders = new Set((room.timeline.events as Ev[]).map((e) => e.sender));
    expect(senders).toEqual(new Set([alice.user_id, bob.user_id]));
    const members = (room[AFTER].events as Ev[]).filter((e) => e.type === "m.room.member").map((e) => e.state_key);
    expect(new Set(members)).toEqual(senders);
  });

  it(stable ? "the stable parameter needs no flag" : "without msc4222_enabled the parameter is ignored", async () => {
    const plain = await startTestServer({ backend });
    try {
      const carol = await registerUser(plain, "carol");
      const room = await createRoom(plain, carol);
      const filter = enc(JSON.stringify({ room: { timeline: { limit: 1 } } }));
      const res = await plain.call("GET", `${V3}/sync?${param}=true&filter=${filter}`, { token: carol.access_token });
      if (stable) {
        expect(res.json.rooms.join[room].state).toBeUndefined();
        expect(res.json.rooms.join[room][AFTER].events.length).toBeGreaterThan(0);
      } else {
        expect(res.json.rooms.join[room].state.events.length).toBeGreaterThan(0);
        expect(res.json.rooms.join[room][AFTER]).toBeUndefined();
      }
    } finally {
      await plain.close();
    }
  });
});
