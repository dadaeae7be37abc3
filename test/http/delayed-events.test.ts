// Delayed events (MSC4140) over HTTP on SQLite and PostgreSQL, with a clock the test moves: scheduling
// through the send and state routes, the list, cancel / restart / send by delay id without a token,
// sending when due through the ordinary send (its checks at send time), a retried transaction, state
// changes by others cancelling them, persistence across a restart, the limits and bad input.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, TestClock, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";

const V3 = "/_matrix/client/v3";
const DE = "/_matrix/client/unstable/org.matrix.msc4140/delayed_events";
const enc = encodeURIComponent;
const DELAY = "org.matrix.msc4140.delay";

describe.each(backends())("delayed events on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let bob: Session;
  let roomId: string;
  const clock = new TestClock(1_800_000_000_000);
  let txn = 0;

  beforeAll(async () => {
    t = await startTestServer({
      backend,
      clock,
      config: {
        max_event_delay_duration: "1h",
        experimental_features: { msc4140_max_delayed_events_per_user: 4 },
        rc_delayed_event_mgmt: { per_second: 1000, burst_count: 1000 },
      },
    });
    alice = await registerUser(t, "alice");
    bob = await registerUser(t, "bob");
    roomId = await createRoom(t, alice, { preset: "public_chat", power_level_content_override: { events: { "com.example.test": 0 } } });
    expect((await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} })).status).toBe(200);
  });
  afterAll(async () => {
    await t?.close();
  });

  const list = async (who: Session) => {
    const r = await t.call("GET", DE, { token: who.access_token });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    return r.json.delayed_events as Record<string, unknown>[];
  };
  const schedule = async (who: Session, path: string, body: unknown, delay: number | string) =>
    t.call("PUT", `${V3}/rooms/${enc(roomId)}/${path}?${DELAY}=${delay}`, { token: who.access_token, body });
  const stateOf = (type: string, key: string) => t.call("GET", `${V3}/rooms/${enc(roomId)}/state/${type}/${key}`, { token: alice.access_token });
  const messages = async () => (await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=50`, { token: alice.access_token })).json.chunk as { type: string; sender: string; content: Record<string, unknown> }[];
  const fire = () => t.hs.services.delayedEvents.run();

  it("schedules a message, lists it to its owner only, answers a retry with the same delay id, sends it when due", async () => {
    const id = `t${++txn}`;
    const first = await schedule(alice, `send/com.example.test/${id}`, { count: 1 }, 1000);
    expect(first.status, JSON.stringify(first.json)).toBe(200);
    const delayId = first.json.delay_id as string;
    expect(typeof delayId).toBe("string");
    // A retry, with its body or without (Synapse answers it from its transaction cache), gets the same id.
    expect((await schedule(alice, `send/com.example.test/${id}`, { count: 1 }, 1000)).json).toEqual({ delay_id: delayId });
    expect((await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/com.example.test/${id}?${DELAY}=1000`, { token: alice.access_token })).json).toEqual({ delay_id: delayId });
    // The same id with another body is refused.
    expect((await schedule(alice, `send/com.example.test/${id}`, { count: 2 }, 1000)).json.errcode).toBe("M_INVALID_PARAM");

    const mine = await list(alice);
    expect(mine).toEqual([
      { delay_id: delayId, room_id: roomId, type: "com.example.test", delay_ms: 1000, delayed_since_ts: clock.now(), content: { count: 1 }, delay: 1000, running_since: clock.now() },
    ]);
    expect(await list(bob)).toEqual([]);
    expect((await t.call("GET", DE)).status).toBe(401);
    expect((await t.call("GET", `${DE}/${delayId}`, { token: alice.access_token })).json).toMatchObject({ delay_id: delayId, delay_ms: 1000 });
    expect((await t.call("GET", `${DE}/${delayId}`, { token: bob.access_token })).status).toBe(404);

    clock.advance(999);
    await fire();
    expect((await messages()).some((e) => e.type === "com.example.test")).toBe(false);
    clock.advance(1);
    await fire();
    const sent = (await messages()).filter((e) => e.type === "com.example.test");
    expect(sent).toMatchObject([{ sender: alice.user_id, content: { count: 1 } }]);
    expect(await list(alice)).toEqual([]);
  });

  it("cancels, restarts and sends state events by delay id, without an access token", async () => {
    const cancelled = (await schedule(alice, "state/com.example.test/to_cancel", { setter: "none" }, 1500)).json.delay_id as string;
    expect((await t.call("POST", `${DE}/${cancelled}/cancel`, { body: {} })).status).toBe(200);
    expect((await t.call("POST", `${DE}/${cancelled}/cancel`, { body: {} })).json.errcode).toBe("M_NOT_FOUND");
    clock.advance(2000);
    await fire();
    expect((await stateOf("com.example.test", "to_cancel")).status).toBe(404);

    const restarted = (await schedule(alice, "state/com.example.test/to_restart", { setter: "timeout" }, 1500)).json.delay_id as string;
    clock.advance(1000);
    expect((await t.call("POST", `${DE}/${restarted}`, { body: { action: "restart" } })).status).toBe(200);
    expect((await list(alice)).map((e) => e.delayed_since_ts)).toEqual([clock.now()]);
    clock.advance(1000);
    await fire();
    expect((await stateOf("com.example.test", "to_restart")).status).toBe(404);
    clock.advance(500);
    await fire();
    expect((await stateOf("com.example.test", "to_restart")).json).toEqual({ setter: "timeout" });

    const onRequest = (await schedule(alice, "state/com.example.test/to_send", { setter: "send" }, 100_000)).json.delay_id as string;
    expect((await t.call("POST", `${DE}/${onRequest}/send`, { body: {} })).status).toBe(200);
    expect((await stateOf("com.example.test", "to_send")).json).toEqual({ setter: "send" });
    expect((await t.call("POST", `${DE}/${onRequest}/send`, { body: {} })).json.errcode).toBe("M_NOT_FOUND");
    expect(await list(alice)).toEqual([]);
  });

  it("checks the permission when it sends: a delayed event its sender may not send is dropped", async () => {
    // Bob may not set the room's name (power 50 needed); scheduling is accepted, sending is refused.
    const id = (await schedule(bob, "state/m.room.name/", { name: "bob's" }, 100_000)).json.delay_id as string;
    const res = await t.call("POST", `${DE}/${id}/send`, { body: {} });
    expect(res.status).toBe(403);
    expect(res.json.errcode).toBe("M_FORBIDDEN");
    expect(await list(bob)).toEqual([]);
    expect((await stateOf("m.room.name", "")).status).toBe(404);
  });

  it("a state change by another user cancels the delayed state events of that key; the owner's own does not", async () => {
    const kept = (await schedule(alice, "state/com.example.test/shared", { who: "alice-later" }, 60_000)).json.delay_id as string;
    expect((await t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/com.example.test/shared`, { token: alice.access_token, body: { who: "alice-now" } })).status).toBe(200);
    const s = t.hs.services;
    await s.consumers.reach("delayed_event_state_overrides", await s.rooms.events.streamIds.current());
    expect((await list(alice)).map((e) => e.delay_id)).toEqual([kept]);
    const other = (await schedule(alice, "state/com.example.test/other", { who: "alice" }, 60_000)).json.delay_id as string;
    expect((await t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/com.example.test/shared`, { token: bob.access_token, body: { who: "bob" } })).status).toBe(200);
    await s.consumers.reach("delayed_event_state_overrides", await s.rooms.events.streamIds.current());
    expect((await list(alice)).map((e) => e.delay_id)).toEqual([other]);
    expect((await t.call("POST", `${DE}/${other}/cancel`, { body: {} })).status).toBe(200);
  });

  it("keeps scheduled events across a restart and sends those that fell due meanwhile", async () => {
    const due = (await schedule(alice, "state/com.example.test/restart_due", { n: 1 }, 900)).json.delay_id as string;
    const later = (await schedule(alice, "state/com.example.test/restart_later", { n: 2 }, 60_000)).json.delay_id as string;
    await t.stop();
    clock.advance(1000);
    await t.restart();
    await expect.poll(async () => (await stateOf("com.example.test", "restart_due")).json).toEqual({ n: 1 });
    expect((await list(alice)).map((e) => e.delay_id)).toEqual([later]);
    expect(due).not.toBe(later);
    expect((await t.call("POST", `${DE}/${later}/cancel`, { body: {} })).status).toBe(200);
  });

  it("refuses bad input and requests over the limits, and stores nothing for them", async () => {
    const send = (delay: number | string, body: unknown = { a: 1 }) => schedule(alice, `send/com.example.test/t${++txn}`, body, delay);
    const tooLong = await send(3_600_001);
    expect([tooLong.status, tooLong.json.errcode]).toEqual([400, "ORG.MATRIX.MSC4140_DELAY_TOO_LARGE"]);
    expect((await send("soon")).json.errcode).toBe("M_INVALID_PARAM");
    expect((await send(-5)).json.errcode).toBe("M_INVALID_PARAM");
    const unknownRoom = await t.call("PUT", `${V3}/rooms/${enc("!nowhere:weft.test")}/send/m.room.message/t${++txn}?${DELAY}=10`, { token: alice.access_token, body: {} });
    expect(unknownRoom.status).toBe(404);
    expect((await t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.power_levels/?${DELAY}=10`, { token: alice.access_token, body: { users: { x: "high" } } })).status).toBe(400);
    expect((await t.call("POST", `${DE}/abc`, { body: {} })).json.errcode).toBe("M_MISSING_PARAM");
    expect((await t.call("POST", `${DE}/abc`, { body: { action: "oops" } })).json.errcode).toBe("M_INVALID_PARAM");
    expect((await t.call("POST", `${DE}/abc/oops`, { body: {} })).status).toBe(404);
    expect((await t.call("GET", `${DE}?status=whatever`, { token: alice.access_token })).json.errcode).toBe("M_INVALID_PARAM");
    expect(await list(alice)).toEqual([]);

    // Four may be scheduled at once (msc4140_max_delayed_events_per_user); the fifth waits for the first.
    for (let i = 0; i < 4; i++) expect((await send(10_000 + i)).status).toBe(200);
    const fifth = await send(20_000);
    expect([fifth.status, fifth.json.errcode, fifth.json.retry_after_ms]).toEqual([429, "M_LIMIT_EXCEEDED", 10_000]);
    expect((await t.call("GET", `${DE}?status=scheduled`, { token: alice.access_token })).json.delayed_events).toHaveLength(4);
    expect((await t.call("GET", `${DE}?status=finalised`, { token: alice.access_token })).json.delayed_events).toEqual([]);
    for (const e of await list(alice)) expect((await t.call("POST", `${DE}/${e.delay_id}/cancel`, { body: {} })).status).toBe(200);
  });

  it("announces the feature: /versions and /capabilities", async () => {
    expect((await t.call("GET", "/_matrix/client/versions")).json.unstable_features["org.matrix.msc4140"]).toBe(true);
    const caps = (await t.call("GET", `${V3}/capabilities`, { token: alice.access_token })).json.capabilities;
    expect(caps["org.matrix.msc4140.delayed_events"]).toEqual({ max_delay_ms: 3_600_000, max_scheduled: 4 });
  });
});

describe("delayed events without max_event_delay_duration", () => {
  let t: TestServer;
  afterAll(async () => {
    await t?.close();
  });
  it("are refused (403), as Synapse", async () => {
    t = await startTestServer({});
    const alice = await registerUser(t, "alice");
    const roomId = await createRoom(t, alice);
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/t1?${DELAY}=10`, { token: alice.access_token, body: {} });
    expect([res.status, res.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    expect((await t.call("GET", "/_matrix/client/versions")).json.unstable_features["org.matrix.msc4140"]).toBe(false);
  });
});
