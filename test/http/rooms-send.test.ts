// Sending over HTTP on SQLite and PostgreSQL: message events with transaction ids (idempotent per device
// and per endpoint path, whatever the body of a retry), state events (PUT/GET, re-sends), redactions in
// v10 and v11, the unsigned data read back (age, transaction_id, prev_content), and bad input — not
// joined, below the power level, malformed bodies, oversize events, overlong types, rate limits — which
// stores nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("sending on %s", (backend) => {
  const { t, users: { alice, bob, carol, alice2 } } = withServer({ backend, config: { max_request_body_size: 1024 * 1024 }, users: ["alice", "bob", "carol"], logins: { alice2: "alice" } });
  let txn = 0;

  const nextTxn = () => `txn${++txn}`;
  const sendPath = (roomId: string, type: string, txnId: string) => `${V3}/rooms/${enc(roomId)}/send/${enc(type)}/${enc(txnId)}`;
  const statePath = (roomId: string, type: string, stateKey?: string) =>
    `${V3}/rooms/${enc(roomId)}/state/${enc(type)}${stateKey === undefined ? "" : `/${enc(stateKey)}`}`;

  const create = (body: Record<string, unknown> = {}, who: Session = alice) => createRoom(t, who, body);

  async function join(who: Session, roomId: string) {
    const res = await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: who.access_token, body: {} });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
  }

  async function send(who: Session, roomId: string, content: unknown = { msgtype: "m.text", body: "hi" }, type = "m.room.message", txnId = nextTxn()): Promise<string> {
    const p = sendPath(roomId, type, txnId);
    const res = await t.call("PUT", p, { token: who.access_token, body: content });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "PUT", p);
    return res.json.event_id as string;
  }

  async function putState(who: Session, roomId: string, type: string, stateKey: string | undefined, content: unknown) {
    return t.call("PUT", statePath(roomId, type, stateKey), { token: who.access_token, body: content });
  }

  async function getEvent(who: Session, roomId: string, eventId: string) {
    const p = `${V3}/rooms/${enc(roomId)}/event/${enc(eventId)}`;
    const res = await t.call("GET", p, { token: who.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "GET", p);
    return res.json;
  }

  async function counts() {
    const db = t.hs.services.db;
    return { events: await db.event.count(), txns: await db.eventTxnId.count() };
  }

  function expectError(res: { status: number; json: any }, status: number, errcode: string) {
    expect([res.status, res.json?.errcode], JSON.stringify(res.json)).toEqual([status, errcode]);
    expect(typeof res.json.error).toBe("string");
  }

  describe("transaction ids", () => {
    it("a retried send returns the same event; another device's same txnId is a new event", async () => {
      const roomId = await create();
      const first = await send(alice, roomId, { msgtype: "m.text", body: "once" }, "m.room.message", "same");
      const before = await counts();
      expect(await send(alice, roomId, { msgtype: "m.text", body: "once" }, "m.room.message", "same")).toBe(first);
      // Under r0 and the _proto brand the path names the same endpoint.
      const r0 = await t.call("PUT", `/_matrix/client/r0/rooms/${enc(roomId)}/send/m.room.message/same`, { token: alice.access_token, body: { msgtype: "m.text", body: "once" } });
      expect(r0.json.event_id).toBe(first);
      expect(await counts()).toEqual(before);
      const other = await send(alice2, roomId, { msgtype: "m.text", body: "once" }, "m.room.message", "same");
      expect(other).not.toBe(first);
      const m = await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=10&filter=${enc(JSON.stringify({ types: ["m.room.message"] }))}`, { token: alice.access_token });
      expect(m.json.chunk.map((e: any) => e.event_id)).toEqual([other, first]);
    });

    it("the same txnId with a different body gets the first event and stores nothing (as Synapse)", async () => {
      const roomId = await create();
      const id = await send(alice, roomId, { msgtype: "m.text", body: "one" }, "m.room.message", "reused");
      const before = await counts();
      expect(await send(alice, roomId, { msgtype: "m.text", body: "two" }, "m.room.message", "reused")).toBe(id);
      expect(await counts()).toEqual(before);
      expect((await getEvent(alice, roomId, id)).content.body).toBe("one");
      // A redaction's transaction id too: a retry with another reason is the first redaction.
      const rp = `${V3}/rooms/${enc(roomId)}/redact/${enc(id)}/red`;
      const red = await t.call("PUT", rp, { token: alice.access_token, body: { reason: "first" } });
      expect(red.status, JSON.stringify(red.json)).toBe(200);
      const again = await t.call("PUT", rp, { token: alice.access_token, body: { reason: "second" } });
      expect([again.status, again.json.event_id]).toEqual([200, red.json.event_id]);
    });

    it("a txnId is scoped to its endpoint path: another room, event type or endpoint is a new request", async () => {
      const a = await create();
      const b = await create();
      const content = { msgtype: "m.text", body: "scoped" };
      const inA = await send(alice, a, content, "m.room.message", "scoped");
      const inB = await send(alice, b, content, "m.room.message", "scoped");
      expect(inB).not.toBe(inA);
      const otherType = await send(alice, a, content, "com.example.msg", "scoped");
      expect(otherType).not.toBe(inA);
      const rp = `${V3}/rooms/${enc(a)}/redact/${enc(inA)}/scoped`;
      const red = await t.call("PUT", rp, { token: alice.access_token, body: {} });
      expect(red.status, JSON.stringify(red.json)).toBe(200);
      expect(red.json.event_id).not.toBe(inA);
      // Each keeps its own idempotency.
      expect(await send(alice, b, content, "m.room.message", "scoped")).toBe(inB);
      expect((await t.call("PUT", rp, { token: alice.access_token, body: {} })).json.event_id).toBe(red.json.event_id);
      // transaction_id is the client's own id in each.
      expect((await getEvent(alice, b, inB)).unsigned.transaction_id).toBe("scoped");
      expect((await getEvent(alice, a, otherType)).unsigned.transaction_id).toBe("scoped");
    });

    it("concurrent retries of one transaction make one event, whatever their bodies", async () => {
      const roomId = await create();
      const body = { msgtype: "m.text", body: "race" };
      const before = await counts();
      const same = await Promise.all(Array.from({ length: 6 }, () => t.call("PUT", sendPath(roomId, "m.room.message", "race"), { token: alice.access_token, body })));
      for (const r of same) expect(r.status, JSON.stringify(r.json)).toBe(200);
      expect(new Set(same.map((r) => r.json.event_id)).size).toBe(1);
      expect(await counts()).toEqual({ events: before.events + 1, txns: before.txns + 1 });
      // Racing retries with different bodies, interleaved with unrelated sends that must not suffer.
      const order = ["x", "y", "x", "y", "x", "y", "x", "y"];
      const [mixed, others] = await Promise.all([
        Promise.all(order.map((b) => t.call("PUT", sendPath(roomId, "m.room.message", "race2"), { token: alice.access_token, body: { msgtype: "m.text", body: b } }))),
        Promise.all(order.map((_, i) => t.call("PUT", sendPath(roomId, "m.room.message", `other${i}`), { token: alice2.access_token, body: { msgtype: "m.text", body: `o${i}` } }))),
      ]);
      for (const r of mixed) expect(r.status, JSON.stringify(r.json)).toBe(200);
      expect(new Set(mixed.map((r) => r.json.event_id)).size).toBe(1);
      for (const r of others) expect(r.status, JSON.stringify(r.json)).toBe(200);
      expect(await counts()).toEqual({ events: before.events + 2 + order.length, txns: before.txns + 2 + order.length });
    });

    it("concurrent sends to one room are all stored, in one order, once", async () => {
      const roomId = await create({ preset: "public_chat" });
      await join(bob, roomId);
      const sent = await Promise.all(
        Array.from({ length: 30 }, (_, i) => t.call("PUT", sendPath(roomId, "m.room.message", `c${i}`), { token: (i % 2 ? bob : alice).access_token, body: { msgtype: "m.text", body: `c${i}` } })),
      );
      for (const r of sent) expect(r.status, JSON.stringify(r.json)).toBe(200);
      const m = await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=f&limit=100&filter=${enc(JSON.stringify({ types: ["m.room.message"] }))}`, { token: alice.access_token });
      expect(new Set(m.json.chunk.map((e: any) => e.event_id))).toEqual(new Set(sent.map((r) => r.json.event_id)));
      expect(m.json.chunk).toHaveLength(30);
      // One DAG: a single forward extremity afterwards.
      expect(await t.hs.services.rooms.events.extremities(roomId)).toHaveLength(1);
    });

    it("unsigned.transaction_id is given only to the device that sent the event", async () => {
      const roomId = await create({ preset: "public_chat" });
      await join(bob, roomId);
      const id = await send(alice, roomId, { msgtype: "m.text", body: "mine" }, "m.room.message", "txn-visible");
      const own = await getEvent(alice, roomId, id);
      expect(own.unsigned.transaction_id).toBe("txn-visible");
      expect(typeof own.unsigned.age).toBe("number");
      expect(own.unsigned.age).toBeGreaterThanOrEqual(0);
      expect((await getEvent(alice2, roomId, id)).unsigned).not.toHaveProperty("transaction_id");
      expect((await getEvent(bob, roomId, id)).unsigned).not.toHaveProperty("transaction_id");
      const m = await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=1`, { token: alice.access_token });
      expect(m.json.chunk[0].unsigned.transaction_id).toBe("txn-visible");
      const m2 = await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=1`, { token: alice2.access_token });
      expect(m2.json.chunk[0].unsigned).not.toHaveProperty("transaction_id");
    });
  });

  describe("refused sends store nothing", () => {
    let roomId: string;
    beforeAll(async () => {
      roomId = await create({ preset: "public_chat" });
      await join(bob, roomId);
    });

    it("a send to a room the user is not in: 403 M_FORBIDDEN", async () => {
      const before = await counts();
      expectError(await t.call("PUT", sendPath(roomId, "m.room.message", nextTxn()), { token: carol.access_token, body: { msgtype: "m.text", body: "x" } }), 403, "M_FORBIDDEN");
      expectError(await putState(carol, roomId, "com.example.state", "", { a: 1 }), 403, "M_FORBIDDEN");
      expect(await counts()).toEqual(before);
    });

    it("a state event below the required power level: 403 M_FORBIDDEN", async () => {
      const before = await counts();
      expectError(await putState(bob, roomId, "m.room.name", undefined, { name: "mine now" }), 403, "M_FORBIDDEN");
      expectError(await putState(bob, roomId, "m.room.power_levels", "", { users: { [bob.user_id]: 100 } }), 403, "M_FORBIDDEN");
      expectError(await putState(bob, roomId, "com.example.state", "k", { a: 1 }), 403, "M_FORBIDDEN");
      expect(await counts()).toEqual(before);
      const name = await t.call("GET", statePath(roomId, "m.room.name"), { token: bob.access_token });
      expectError(name, 404, "M_NOT_FOUND");
    });

    it("a message event type with a level above the sender's: 403", async () => {
      const r = await create({ preset: "public_chat", power_level_content_override: { events: { "com.example.loud": 50 } } });
      await join(bob, r);
      const before = await counts();
      expectError(await t.call("PUT", sendPath(r, "com.example.loud", nextTxn()), { token: bob.access_token, body: {} }), 403, "M_FORBIDDEN");
      expect(await counts()).toEqual(before);
    });

    const malformed: [string, string | undefined, string][] = [
      ["a body that is not JSON", "{nope", "M_NOT_JSON"],
      ["no body", undefined, "M_NOT_JSON"],
      ["a JSON list", "[1,2,3]", "M_BAD_JSON"],
      ["a JSON string", '"text"', "M_BAD_JSON"],
      ["JSON null", "null", "M_BAD_JSON"],
      ["a JSON number", "42", "M_BAD_JSON"],
    ];
    it.each(malformed)("malformed content (%s): 400 %s", async (_name, raw, errcode) => {
      const before = await counts();
      const headers = { "content-type": "application/json" };
      expectError(await t.call("PUT", sendPath(roomId, "m.room.message", nextTxn()), { token: alice.access_token, raw, headers }), 400, errcode);
      expectError(await t.call("PUT", statePath(roomId, "com.example.state", "k"), { token: alice.access_token, raw, headers }), 400, errcode);
      expect(await counts()).toEqual(before);
    });

    it("malformed state content: power levels that are not integers, an unknown membership: 400 M_BAD_JSON", async () => {
      const before = await counts();
      for (const body of [
        { users: { [alice.user_id]: "100" } },
        { users: { [alice.user_id]: 100 }, ban: 1.5 },
        { users: { [alice.user_id]: 100 }, events: { "m.room.name": "50" } },
        { users: [] },
        { users: { [alice.user_id]: 100 }, kick: 2 ** 60 },
      ]) {
        const res = await putState(alice, roomId, "m.room.power_levels", "", body);
        expectError(res, 400, "M_BAD_JSON");
      }
      for (const membership of ["bogus", 5, undefined]) {
        const res = await putState(alice, roomId, "m.room.member", bob.user_id, { membership });
        expectError(res, 400, "M_BAD_JSON");
      }
      // Floats and out-of-range integers are not canonical JSON.
      expectError(await t.call("PUT", sendPath(roomId, "m.room.message", nextTxn()), { token: alice.access_token, raw: '{"n": 1.5}', headers: { "content-type": "application/json" } }), 400, "M_BAD_JSON");
      expectError(await t.call("PUT", sendPath(roomId, "m.room.message", nextTxn()), { token: alice.access_token, raw: '{"n": 9007199254740993}', headers: { "content-type": "application/json" } }), 400, "M_BAD_JSON");
      expect(await counts()).toEqual(before);
    });

    it("an event over 65536 bytes as a canonical PDU: 413 M_TOO_LARGE", async () => {
      const before = await counts();
      const big = { msgtype: "m.text", body: "x".repeat(66_000) };
      expectError(await t.call("PUT", sendPath(roomId, "m.room.message", nextTxn()), { token: alice.access_token, body: big }), 413, "M_TOO_LARGE");
      expectError(await putState(alice, roomId, "com.example.big", "", big), 413, "M_TOO_LARGE");
      // Just under the limit once the PDU's own fields are added: the content alone fits, the event does not.
      const edge = { body: "y".repeat(65_536 - 20) };
      expectError(await t.call("PUT", sendPath(roomId, "m.room.message", nextTxn()), { token: alice.access_token, body: edge }), 413, "M_TOO_LARGE");
      expect(await counts()).toEqual(before);
      // A large event under the limit is fine.
      await send(alice, roomId, { msgtype: "m.text", body: "z".repeat(60_000) });
    });

    it("an event type or state key longer than 255 bytes: 413 M_TOO_LARGE", async () => {
      const before = await counts();
      const longType = "t".repeat(256);
      expectError(await t.call("PUT", sendPath(roomId, longType, nextTxn()), { token: alice.access_token, body: {} }), 413, "M_TOO_LARGE");
      expectError(await putState(alice, roomId, longType, "", {}), 413, "M_TOO_LARGE");
      // 255 bytes counted in UTF-8: 128 two-byte characters are 256 bytes.
      expectError(await t.call("PUT", sendPath(roomId, "é".repeat(128), nextTxn()), { token: alice.access_token, body: {} }), 413, "M_TOO_LARGE");
      expectError(await putState(alice, roomId, "com.example.state", "k".repeat(256), {}), 413, "M_TOO_LARGE");
      expect(await counts()).toEqual(before);
      await send(alice, roomId, {}, "t".repeat(255));
    });

    it("a send to an unknown room: 404 or 403, and nothing stored", async () => {
      const before = await counts();
      const res = await t.call("PUT", sendPath("!unknown:weft.test", "m.room.message", nextTxn()), { token: alice.access_token, body: {} });
      expect([403, 404]).toContain(res.status);
      expect(await counts()).toEqual(before);
    });
  });

  describe("state events", () => {
    it("PUT and GET with and without a state key, ?format=event, and the whole state", async () => {
      const roomId = await create({ preset: "public_chat" });
      await join(bob, roomId);
      const p0 = statePath(roomId, "m.room.topic");
      const put = await putState(alice, roomId, "m.room.topic", undefined, { topic: "first" });
      expect(put.status, JSON.stringify(put.json)).toBe(200);
      expectMatchesSpec(put, "PUT", statePath(roomId, "m.room.topic", ""));
      const topicId = put.json.event_id;
      for (const p of [p0, `${p0}/`]) {
        const got = await t.call("GET", p, { token: bob.access_token });
        expect(got.status, p).toBe(200);
        expect(got.json).toEqual({ topic: "first" });
      }
      const asEvent = await t.call("GET", `${p0}/?format=event`, { token: bob.access_token });
      expect(asEvent.json).toMatchObject({ event_id: topicId, type: "m.room.topic", state_key: "", sender: alice.user_id, room_id: roomId, content: { topic: "first" } });

      const keyed = await putState(alice, roomId, "com.example.state", "some/key", { n: 1 });
      expect(keyed.status, JSON.stringify(keyed.json)).toBe(200);
      const got = await t.call("GET", statePath(roomId, "com.example.state", "some/key"), { token: bob.access_token });
      expect(got.json).toEqual({ n: 1 });
      expectMatchesSpec(got, "GET", statePath(roomId, "com.example.state", "some/key"));
      expectError(await t.call("GET", statePath(roomId, "com.example.state", "other"), { token: bob.access_token }), 404, "M_NOT_FOUND");

      const all = await t.call("GET", `${V3}/rooms/${enc(roomId)}/state`, { token: bob.access_token });
      expect(all.status).toBe(200);
      expectMatchesSpec(all, "GET", `${V3}/rooms/${enc(roomId)}/state`);
      const byKey = new Map((all.json as any[]).map((e) => [`${e.type}|${e.state_key}`, e]));
      expect(byKey.get("m.room.topic|")?.event_id).toBe(topicId);
      expect(byKey.get("com.example.state|some/key")?.content).toEqual({ n: 1 });
      expect(byKey.get(`m.room.member|${bob.user_id}`)?.content.membership).toBe("join");
    });

    it("an identical re-send returns the same event id; a change makes a new event with unsigned.prev_content", async () => {
      const roomId = await create();
      const first = (await putState(alice, roomId, "m.room.topic", "", { topic: "same" })).json.event_id;
      const before = await counts();
      const again = await putState(alice, roomId, "m.room.topic", "", { topic: "same" });
      expect(again.status).toBe(200);
      expect(again.json.event_id).toBe(first);
      expect(await counts()).toEqual(before);
      const changed = (await putState(alice, roomId, "m.room.topic", "", { topic: "new" })).json.event_id;
      expect(changed).not.toBe(first);
      const ev = await getEvent(alice, roomId, changed);
      expect(ev.unsigned.prev_content).toEqual({ topic: "same" });
      expect(ev).not.toHaveProperty("prev_content");
      const viaState = await t.call("GET", `${statePath(roomId, "m.room.topic", "")}?format=event`, { token: alice.access_token });
      expect(viaState.json.unsigned.prev_content).toEqual({ topic: "same" });
      expect(viaState.json).not.toHaveProperty("prev_content");
      const m = await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=1`, { token: alice.access_token });
      expect(m.json.chunk[0].event_id).toBe(changed);
      expect(m.json.chunk[0].unsigned.prev_content).toEqual({ topic: "same" });
      expect(m.json.chunk[0]).not.toHaveProperty("prev_content");
      // The first state event of its kind has no prev_content.
      expect((await getEvent(alice, roomId, first)).unsigned ?? {}).not.toHaveProperty("prev_content");
    });

    it("a state event the power levels allow is accepted from a level-0 user", async () => {
      const roomId = await create({ preset: "public_chat", power_level_content_override: { events: { "com.example.open": 0 } } });
      await join(bob, roomId);
      const res = await putState(bob, roomId, "com.example.open", "", { ok: true });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
    });
  });

  describe("every room version", () => {
    it.each(["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"])("v%s: invite, join, send, retry, paginate, redact, state", async (v) => {
      const roomId = await create({ room_version: v, name: "Test", topic: "T", invite: [bob.user_id] });
      await join(bob, roomId);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push(await send(alice, roomId, { msgtype: "m.text", body: `hi ${i}` }, "m.room.message", `v${v}-t${i}`));
      expect(await send(alice, roomId, { msgtype: "m.text", body: "hi 0" }, "m.room.message", `v${v}-t0`)).toBe(ids[0]);
      const m = await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=3`, { token: bob.access_token });
      expect(m.json.chunk.map((e: any) => e.event_id)).toEqual([ids[4], ids[3], ids[2]]);
      const rest = await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=100&from=${enc(m.json.end)}`, { token: bob.access_token });
      const past = await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=100&from=${enc(rest.json.end)}`, { token: bob.access_token });
      expect([past.json.chunk, past.json.end]).toEqual([[], undefined]);
      expect(rest.json.chunk[rest.json.chunk.length - 1].type).toBe("m.room.create");
      const red = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/redact/${enc(ids[1]!)}/${nextTxn()}`, { token: alice.access_token, body: { reason: "x" } });
      expect(red.status, JSON.stringify(red.json)).toBe(200);
      const ev = await getEvent(bob, roomId, ids[1]!);
      expect(ev.content).toEqual({});
      expect(ev.unsigned.redacted_because.event_id).toBe(red.json.event_id);
      expect((await t.call("GET", statePath(roomId, "m.room.name"), { token: bob.access_token })).json).toEqual({ name: "Test" });
      expect((await putState(alice, roomId, "m.room.name", "", { name: "Renamed" })).status).toBe(200);
      expect((await t.call("GET", statePath(roomId, "m.room.name"), { token: bob.access_token })).json).toEqual({ name: "Renamed" });
    });
  });

  describe("events read back", () => {
    it.each(["1", "6", "10", "11", "12"])("v%s: the client format has no federation fields", async (v) => {
      const roomId = await create({ room_version: v });
      const id = await send(alice, roomId, { msgtype: "m.text", body: "fields" });
      const ev = await getEvent(alice, roomId, id);
      expect(Object.keys(ev).sort()).toEqual(["content", "event_id", "origin_server_ts", "room_id", "sender", "type", "unsigned"]);
      for (const k of ["origin", "hashes", "signatures", "auth_events", "prev_events", "depth"]) expect(ev).not.toHaveProperty(k);
      // The stored PDU has origin only before v11.
      const stored = await t.hs.services.rooms.events.get(id);
      if (Number(v) >= 11) expect(stored!.pdu).not.toHaveProperty("origin");
      else expect(stored!.pdu.origin).toBe("weft.test");
    });
  });

  describe("redactions", () => {
    it.each(["10", "11"])("v%s: redact with /redact; others need the redact power level", async (v) => {
      const roomId = await create({ room_version: v, preset: "public_chat" });
      await join(bob, roomId);
      const target = await send(alice, roomId, { msgtype: "m.text", body: "secret", extra: { a: 1 } });
      const bobs = await send(bob, roomId, { msgtype: "m.text", body: "bob's" });

      // bob (level 0) can't redact alice's event.
      const before = await counts();
      const denied = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/redact/${enc(target)}/${nextTxn()}`, { token: bob.access_token, body: { reason: "no" } });
      expectError(denied, 403, "M_FORBIDDEN");
      expect(await counts()).toEqual(before);
      expect((await getEvent(bob, roomId, target)).content.body).toBe("secret");

      // ... but can redact his own.
      const own = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/redact/${enc(bobs)}/${nextTxn()}`, { token: bob.access_token, body: {} });
      expect(own.status, JSON.stringify(own.json)).toBe(200);

      // alice (100) redacts hers with a reason.
      const rp = `${V3}/rooms/${enc(roomId)}/redact/${enc(target)}/${nextTxn()}`;
      const red = await t.call("PUT", rp, { token: alice.access_token, body: { reason: "oops" } });
      expect(red.status, JSON.stringify(red.json)).toBe(200);
      expectMatchesSpec(red, "PUT", rp);
      const redId = red.json.event_id;

      const stored = (await t.hs.services.rooms.events.get(redId))!.pdu;
      if (v === "10") {
        expect(stored.redacts).toBe(target);
        expect(stored.content).toEqual({ reason: "oops" });
      } else {
        expect(stored).not.toHaveProperty("redacts");
        expect(stored.content).toEqual({ reason: "oops", redacts: target });
      }
      // Clients get `redacts` both at the top level and in content, whatever the version.
      const redEv = await getEvent(bob, roomId, redId);
      expect(redEv).toMatchObject({ type: "m.room.redaction", redacts: target, content: { reason: "oops", redacts: target } });

      // The redacted event comes back pruned, with unsigned.redacted_because.
      for (const who of [alice, bob]) {
        const ev = await getEvent(who, roomId, target);
        expect(ev.content).toEqual({});
        expect(ev.unsigned.redacted_because).toMatchObject({ event_id: redId, type: "m.room.redaction", sender: alice.user_id });
      }
      const m = await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=10`, { token: bob.access_token });
      const inTimeline = (m.json.chunk as any[]).find((e) => e.event_id === target);
      expect(inTimeline.content).toEqual({});
      expect(inTimeline.unsigned.redacted_because.event_id).toBe(redId);
      expectMatchesSpec(m, "GET", `${V3}/rooms/${enc(roomId)}/messages`);

      // Redacting an unknown event: 404 without the redact level; taken from one with it (as Synapse).
      expectError(await t.call("PUT", `${V3}/rooms/${enc(roomId)}/redact/${enc("$nope")}/${nextTxn()}`, { token: bob.access_token, body: {} }), 404, "M_NOT_FOUND");
      expect((await t.call("PUT", `${V3}/rooms/${enc(roomId)}/redact/${enc("$nope")}/${nextTxn()}`, { token: alice.access_token, body: {} })).status).toBe(200);
    });

    it.each(["10", "11"])("v%s: m.room.redaction through /send puts redacts where the version wants it", async (v) => {
      const roomId = await create({ room_version: v });
      const target = await send(alice, roomId, { msgtype: "m.text", body: "x" });
      const redId = await send(alice, roomId, { redacts: target, reason: "via send" }, "m.room.redaction");
      const stored = (await t.hs.services.rooms.events.get(redId))!.pdu;
      if (v === "10") expect([stored.redacts, stored.content]).toEqual([target, { reason: "via send" }]);
      else expect([stored.redacts, stored.content]).toEqual([undefined, { redacts: target, reason: "via send" }]);
      expect((await getEvent(alice, roomId, target)).unsigned.redacted_because.event_id).toBe(redId);
      // Without redacts: 400.
      const bad = await t.call("PUT", sendPath(roomId, "m.room.redaction", nextTxn()), { token: alice.access_token, body: { reason: "none" } });
      expectError(bad, 400, "M_BAD_JSON");
    });

    it("redacting a state event keeps the keys the algorithm keeps", async () => {
      const roomId = await create({ room_version: "11" });
      const id = (await putState(alice, roomId, "m.room.join_rules", "", { join_rule: "public", extra: 1 })).json.event_id;
      const red = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/redact/${enc(id)}/${nextTxn()}`, { token: alice.access_token, body: {} });
      expect(red.status).toBe(200);
      expect((await getEvent(alice, roomId, id)).content).toEqual({ join_rule: "public" });
    });
  });

  describe("guests", () => {
    it("send any message and state event the rules allow", async () => {
      const roomId = await create({
        preset: "public_chat",
        initial_state: [{ type: "m.room.guest_access", content: { guest_access: "can_join" } }],
        power_level_content_override: { events: { "com.example.guest_state": 0 } },
      });
      const g = (await t.call("POST", `${V3}/register?kind=guest`, { body: {} })).json;
      const j = await t.call("POST", `${V3}/rooms/${enc(roomId)}/join`, { token: g.access_token, body: {} });
      expect(j.status, JSON.stringify(j.json)).toBe(200);
      const msg = await t.call("PUT", sendPath(roomId, "m.room.message", "g1"), { token: g.access_token, body: { msgtype: "m.text", body: "guest" } });
      expect(msg.status, JSON.stringify(msg.json)).toBe(200);
      const custom = await t.call("PUT", sendPath(roomId, "com.example.event", "g2"), { token: g.access_token, body: { any: "thing" } });
      expect(custom.status, JSON.stringify(custom.json)).toBe(200);
      const st = await t.call("PUT", statePath(roomId, "com.example.guest_state", "k"), { token: g.access_token, body: { ok: 1 } });
      expect(st.status, JSON.stringify(st.json)).toBe(200);
      const denied = await t.call("PUT", statePath(roomId, "m.room.name", ""), { token: g.access_token, body: { name: "guest room" } });
      expectError(denied, 403, "M_FORBIDDEN");
      const ev = await t.call("GET", `${V3}/rooms/${enc(roomId)}/event/${enc(msg.json.event_id)}`, { token: g.access_token });
      expect(ev.json.unsigned.transaction_id).toBe("g1");
    });
  });
});

describe.each(backends())("rc_message on %s", (backend) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ backend, config: { rc_message: { per_second: 0.001, burst_count: 2 } } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("refuses sends over the limit with 429 M_LIMIT_EXCEEDED; a retried transaction is still answered", async () => {
    const alice = await registerUser(t, "alice");
    const c = await t.call("POST", `${V3}/createRoom`, { token: alice.access_token, body: {} });
    expect(c.status, JSON.stringify(c.json)).toBe(200);
    const roomId = c.json.room_id;
    const p = (txnId: string) => `${V3}/rooms/${enc(roomId)}/send/m.room.message/${txnId}`;
    const ids: string[] = [];
    for (const txnId of ["a", "b"]) {
      const res = await t.call("PUT", p(txnId), { token: alice.access_token, body: { msgtype: "m.text", body: txnId } });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      ids.push(res.json.event_id);
    }
    const before = await t.hs.services.db.event.count();
    const limited = await t.call("PUT", p("c"), { token: alice.access_token, body: { msgtype: "m.text", body: "c" } });
    expect([limited.status, limited.json.errcode]).toEqual([429, "M_LIMIT_EXCEEDED"]);
    expect(limited.json.retry_after_ms).toBeGreaterThan(0);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await t.hs.services.db.event.count()).toBe(before);
    // A retransmission is not a new request and is answered from the transaction record.
    const retry = await t.call("PUT", p("a"), { token: alice.access_token, body: { msgtype: "m.text", body: "a" } });
    expect([retry.status, retry.json.event_id]).toEqual([200, ids[0]]);
  });
});
