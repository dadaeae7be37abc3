// GET /v1/rooms/{roomId}/timestamp_to_event on SQLite and PostgreSQL, with a clock the test moves: the
// closest event at or after (f) / at or before (b) a timestamp, history visibility for later joiners,
// 404 when there is none, and the required parameters; an application service's messages at a timestamp
// of its choosing (`?ts`, timestamp massaging; ignored from other users), ties found in the DAG's order.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, TestClock, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { writeAppServiceFile } from "../helpers/appservice.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const V1 = "/_matrix/client/v1";
const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const AS_TOKEN = "bridge-as-token";

describe.each(backends())("timestamp_to_event on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let bob: Session;
  const clock = new TestClock(1_700_000_000_000);
  let roomId: string;
  let createdAt: number;
  const sent: { id: string; ts: number }[] = [];
  let txn = 0;

  beforeAll(async () => {
    const bridge = writeAppServiceFile({ id: "bridge", asToken: AS_TOKEN, hsToken: "bridge-hs", senderLocalpart: "bridgebot", userRegex: "@bridge_.*:weft\\.test" });
    t = await startTestServer({ backend, clock, config: { app_service_config_files: [bridge] } });
    alice = await registerUser(t, "alice");
    bob = await registerUser(t, "bob");
    createdAt = clock.now();
    roomId = await createRoom(t, alice, { preset: "public_chat", initial_state: [{ type: "m.room.history_visibility", state_key: "", content: { history_visibility: "joined" } }] });
    for (let i = 0; i < 3; i++) {
      clock.advance(1000);
      const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/t${++txn}`, { token: alice.access_token, body: { msgtype: "m.text", body: `m${i}` } });
      sent.push({ id: res.json.event_id, ts: clock.now() });
    }
    clock.advance(1000);
  });
  afterAll(async () => {
    await t?.close();
  });

  const path = (room: string, query: string) => `${V1}/rooms/${enc(room)}/timestamp_to_event${query}`;
  async function find(who: Session, query: string) {
    const res = await t.call("GET", path(roomId, query), { token: who.access_token });
    if (res.status === 200) expectMatchesSpec(res, "GET", path(roomId, ""));
    return res;
  }

  it("finds the closest event in each direction", async () => {
    const f = await find(alice, `?ts=${sent[1]!.ts - 500}&dir=f`);
    expect(f.status).toBe(200);
    expect(f.json).toEqual({ event_id: sent[1]!.id, origin_server_ts: sent[1]!.ts });
    expect((await find(alice, `?ts=${sent[1]!.ts}&dir=f`)).json.event_id).toBe(sent[1]!.id);
    expect((await find(alice, `?ts=${sent[1]!.ts + 500}&dir=b`)).json.event_id).toBe(sent[1]!.id);
    expect((await find(alice, `?ts=${sent[2]!.ts + 10_000}&dir=b`)).json.event_id).toBe(sent[2]!.id);
    const first = await find(alice, `?ts=0&dir=f`);
    expect(first.json.origin_server_ts).toBe(createdAt);
  });

  it("404 when nothing lies that way; history visibility applies", async () => {
    const none = await find(alice, `?ts=${sent[2]!.ts + 1}&dir=f`);
    expect([none.status, none.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    expect((await find(alice, `?ts=${createdAt - 1}&dir=b`)).status).toBe(404);
    // bob joins later under "joined" visibility: the messages before his join are hidden from him, so
    // looking back from the last one finds only the room's first events (sent before the visibility was set).
    expect((await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} })).status).toBe(200);
    const b = await find(bob, `?ts=${sent[2]!.ts}&dir=b`);
    expect(b.status).toBe(200);
    expect(b.json.origin_server_ts).toBe(createdAt);
    expect(sent.map((x) => x.id)).not.toContain(b.json.event_id);
    expect((await find(alice, `?ts=${sent[2]!.ts}&dir=b`)).json.event_id).toBe(sent[2]!.id);
    const f = await find(bob, `?ts=${sent[0]!.ts - 1}&dir=f`);
    expect(f.status).toBe(200);
    expect(f.json.origin_server_ts).toBe(clock.now()); // his own join
  });

  it("checks its parameters and the caller", async () => {
    const expectError = async (query: string, status: number, errcode: string, who: Session | null = alice, room = roomId) => {
      const res = await t.call("GET", path(room, query), { token: who?.access_token });
      expect([res.status, res.json.errcode], JSON.stringify(res.json)).toEqual([status, errcode]);
    };
    await expectError("?dir=f", 400, "M_MISSING_PARAM");
    await expectError("?ts=1", 400, "M_MISSING_PARAM");
    await expectError("?ts=abc&dir=f", 400, "M_INVALID_PARAM");
    await expectError("?ts=1&dir=up", 400, "M_INVALID_PARAM");
    await expectError("?ts=1&dir=f", 401, "M_MISSING_TOKEN", null);
    const outsider = await registerUser(t, "outsider");
    const priv = await createRoom(t, alice);
    await expectError("?ts=1&dir=f", 403, "M_FORBIDDEN", outsider, priv);
  });

  it("an application service sends at the timestamp it names; the later of two at one time is found looking back", async () => {
    const bot = "@bridgebot:weft.test";
    const room = await createRoom(t, alice, { preset: "public_chat", power_level_content_override: { users: { [alice.user_id]: 100, [bot]: 50 } } });
    const join = await t.call("POST", `${V3}/join/${enc(room)}`, { token: AS_TOKEN, body: {} });
    expect(join.status, JSON.stringify(join.json)).toBe(200);
    const at = clock.now() - 100_000; // before the room was made
    const send = async (body: string, token = AS_TOKEN) => {
      const res = await t.call("PUT", `${V3}/rooms/${enc(room)}/send/m.room.message/as${++txn}?ts=${at}`, { token, body: { msgtype: "m.text", body } });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      return res.json.event_id as string;
    };
    const first = await send("first");
    const second = await send("second");
    const stored = await t.hs.services.rooms.events.get(second);
    expect([stored!.pdu.origin_server_ts, stored!.pdu.sender]).toEqual([at, bot]);
    const back = await t.call("GET", path(room, `?ts=${at}&dir=b`), { token: alice.access_token });
    expect([back.status, back.json]).toEqual([200, { event_id: second, origin_server_ts: at }]);
    const forward = await t.call("GET", path(room, `?ts=${at}&dir=f`), { token: alice.access_token });
    expect(forward.json).toEqual({ event_id: first, origin_server_ts: at });
    // A state event too; another user's `ts` is ignored; a malformed one from the service refused.
    const state = await t.call("PUT", `${V3}/rooms/${enc(room)}/state/m.room.topic?ts=${at + 1}`, { token: alice.access_token, body: { topic: "now" } });
    expect((await t.hs.services.rooms.events.get(state.json.event_id))!.pdu.origin_server_ts).toBe(clock.now());
    const asState = await t.call("PUT", `${V3}/rooms/${enc(room)}/state/org.example.bridge/x?ts=${at + 1}`, { token: AS_TOKEN, body: { ok: true } });
    expect(asState.status, JSON.stringify(asState.json)).toBe(200);
    expect((await t.hs.services.rooms.events.get(asState.json.event_id))!.pdu.origin_server_ts).toBe(at + 1);
    const bad = await t.call("PUT", `${V3}/rooms/${enc(room)}/send/m.room.message/as${++txn}?ts=soon`, { token: AS_TOKEN, body: { msgtype: "m.text", body: "x" } });
    expect([bad.status, bad.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
  });
});
