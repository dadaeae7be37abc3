// Deeply nested JSON (issue 11, finding 1) on SQLite and PostgreSQL: every body nested deeper than
// MAX_JSON_DEPTH is refused at the door with 400 M_BAD_JSON (events, state, redactions, account data,
// tags, creation_content, filters, key backups, to-device, GraphQL variables), one at the bound is
// accepted, and an over-deep event already in storage (stored before the bound, or by a remote server)
// is served — pruned as if redacted — by every read over REST and GraphQL, to members old and new.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../../src/domain/json-limits.ts";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { gql } from "../graphql/client.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

/** An array nested `levels` deep: [] is 1 level, [[]] 2. */
function nested(levels: number): unknown {
  let v: unknown[] = [];
  for (let i = 1; i < levels; i++) v = [v];
  return v;
}

/** JSON text of an array nested `levels` deep (JSON.stringify itself overflows on thousands of levels). */
const nestedText = (levels: number) => "[".repeat(levels) + "]".repeat(levels);

/** Stands for nestedText(levels) inside a body until `text()` writes it out. */
const DEEP = (levels: number) => `@@deep:${levels}@@`;
const text = (body: unknown) => JSON.stringify(body).replace(/"@@deep:(\d+)@@"/g, (_m, n) => nestedText(Number(n)));

/** A body of exactly `levels` levels: an object (1) holding an array nested levels - 1 deep. */
const bodyOfDepth = (levels: number, extra: Record<string, unknown> = {}) => ({ ...extra, deep: DEEP(levels - 1) });

/** Follows `[0]` down an array nest: how deep it is. */
function arrayDepth(v: unknown): number {
  let levels = 0;
  for (; Array.isArray(v); levels++) v = v[0];
  return levels;
}

describe.each(backends())("deep JSON on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let roomId: string;
  let txn = 0;

  beforeAll(async () => {
    t = await startTestServer({ backend });
    alice = await registerUser(t, "alice");
    roomId = await createRoom(t, alice, { preset: "public_chat" });
  });
  afterAll(async () => {
    await t?.close();
  });

  const call = (method: string, path: string, body: unknown, token = alice.access_token) =>
    t.call(method, path, { token, raw: text(body), headers: { "content-type": "application/json" } });

  it("accepts an event at the bound and refuses one level more, and thousands more, with M_BAD_JSON", async () => {
    const send = (body: unknown) => call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/d${++txn}`, body);
    const atBound = await send(bodyOfDepth(MAX_JSON_DEPTH, { msgtype: "m.text", body: "deep" }));
    expect(atBound.status, JSON.stringify(atBound.json)).toBe(200);
    const read = await t.call("GET", `${V3}/rooms/${enc(roomId)}/event/${enc(atBound.json.event_id)}`, { token: alice.access_token });
    expect(read.status).toBe(200);
    expect(arrayDepth(read.json.content.deep)).toBe(MAX_JSON_DEPTH - 1);
    for (const levels of [MAX_JSON_DEPTH + 1, 2_900, 3_500, 30_000]) {
      const res = await send(bodyOfDepth(levels, { msgtype: "m.text", body: "too deep" }));
      expect([res.status, res.json.errcode], `${levels} levels`).toEqual([400, "M_BAD_JSON"]);
    }
  });

  it("refuses over-deep bodies on every endpoint that stores JSON, and stores nothing", async () => {
    const deep = (extra: Record<string, unknown> = {}) => bodyOfDepth(MAX_JSON_DEPTH + 1, extra);
    const version = await call("POST", `${V3}/room_keys/version`, { algorithm: "m.megolm_backup.v1.curve25519-aes-sha2", auth_data: { public_key: "abc" } });
    expect(version.status).toBe(200);
    const message = await call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/r${++txn}`, { msgtype: "m.text", body: "target" });
    const cases: [string, string, unknown][] = [
      ["PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/x${++txn}`, deep({ msgtype: "m.text", body: "x" })],
      ["PUT", `${V3}/rooms/${enc(roomId)}/state/org.example.deep/k`, deep()],
      ["PUT", `${V3}/rooms/${enc(roomId)}/redact/${enc(message.json.event_id)}/x${++txn}`, deep({ reason: "r" })],
      ["PUT", `${V3}/user/${enc(alice.user_id)}/account_data/org.example.deep`, deep()],
      ["PUT", `${V3}/user/${enc(alice.user_id)}/rooms/${enc(roomId)}/account_data/org.example.deep`, deep()],
      ["PUT", `${V3}/user/${enc(alice.user_id)}/rooms/${enc(roomId)}/tags/u.deep`, deep({ order: 0.5 })],
      ["POST", `${V3}/createRoom`, { creation_content: deep() }],
      ["POST", `${V3}/user/${enc(alice.user_id)}/filter`, { room: { timeline: deep() } }],
      ["PUT", `${V3}/room_keys/version/${version.json.version}`, { algorithm: "m.megolm_backup.v1.curve25519-aes-sha2", auth_data: deep() }],
      ["PUT", `${V3}/room_keys/keys/${enc(roomId)}/sess?version=${version.json.version}`, { first_message_index: 0, forwarded_count: 0, is_verified: false, session_data: deep() }],
      ["PUT", `${V3}/sendToDevice/org.example.deep/x${++txn}`, { messages: { [alice.user_id]: { "*": deep() } } }],
      ["PUT", `${V3}/profile/${enc(alice.user_id)}/displayname`, deep({ displayname: "x" })],
    ];
    const before = await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=1`, { token: alice.access_token });
    for (const [method, path, body] of cases) {
      const res = await call(method, path, body);
      expect([res.status, res.json.errcode], `${method} ${path}`).toEqual([400, "M_BAD_JSON"]);
    }
    const after = await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=1`, { token: alice.access_token });
    expect(after.json.chunk[0].event_id).toBe(before.json.chunk[0].event_id);
    expect((await t.call("GET", `${V3}/user/${enc(alice.user_id)}/account_data/org.example.deep`, { token: alice.access_token })).status).toBe(404);
    // A filter in the query string is held to the same bound.
    const filter = text({ deep: DEEP(MAX_JSON_DEPTH) });
    const messages = await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&filter=${enc(filter)}`, { token: alice.access_token });
    expect([messages.status, messages.json.errcode]).toEqual([400, "M_BAD_JSON"]);
    const sync = await t.call("GET", `${V3}/sync?filter=${enc(filter)}`, { token: alice.access_token });
    expect([sync.status, sync.json.errcode]).toEqual([400, "M_BAD_JSON"]);
  });

  it("refuses over-deep GraphQL variables with errcode M_BAD_JSON", async () => {
    const send = `mutation ($roomId: String!, $txnId: String!, $content: JSONObject) { sendMessage(roomId: $roomId, txnId: $txnId, content: $content) { eventId } }`;
    const gqlRaw = async (query: string, variables: unknown, token: string) => {
      const r = await t.call("POST", "/graphql", { token, raw: text({ query, variables }), headers: { "content-type": "application/json" } });
      return { status: r.status, body: r.json };
    };
    const ok = await gqlRaw(send, { roomId, txnId: `g${++txn}`, content: bodyOfDepth(MAX_JSON_DEPTH, { msgtype: "m.text", body: "ok" }) }, alice.access_token);
    expect(ok.body.errors).toBeUndefined();
    for (const levels of [MAX_JSON_DEPTH + 1, 5_000]) {
      const res = await gqlRaw(send, { roomId, txnId: `g${++txn}`, content: bodyOfDepth(levels, { msgtype: "m.text", body: "x" }) }, alice.access_token);
      expect(res.body.data?.sendMessage ?? null, `${levels} levels`).toBeNull();
      expect(res.body.errors?.[0]?.extensions?.errcode, `${levels} levels: ${JSON.stringify(res.body.errors)}`).toBe("M_BAD_JSON");
    }
  });

  it("serves an over-deep event already in storage to every reader, pruned as if redacted", async () => {
    const room = await createRoom(t, alice, { preset: "public_chat" });
    const msg = await call("PUT", `${V3}/rooms/${enc(room)}/send/m.room.message/s${++txn}`, { msgtype: "m.text", body: "to be deepened" });
    const state = await call("PUT", `${V3}/rooms/${enc(room)}/state/org.example.deep/`, { v: 1 });
    expect([msg.status, state.status]).toEqual([200, 200]);
    // As if stored before the bound existed: the rows rewritten with 2,900-level content, then a restart
    // (no cache remembers the originals).
    const db = t.hs.services.storage.sql;
    for (const id of [msg.json.event_id, state.json.event_id]) {
      const row = await db.get<{ json: string }>(`SELECT json FROM events WHERE event_id = ?`, [id]);
      const pdu = JSON.parse(row!.json);
      pdu.content = { ...pdu.content, deep: DEEP(2_900) };
      await db.run(`UPDATE events SET json = ? WHERE event_id = ?`, [text(pdu), id]);
    }
    await t.restart();
    const bob = await registerUser(t, `bob${backend}`);
    expect((await call("POST", `${V3}/join/${enc(room)}`, {}, bob.access_token)).status).toBe(200);

    for (const who of [alice, bob]) {
      const get = async (path: string) => {
        const res = await t.call("GET", path, { token: who.access_token });
        expect(res.status, `${path}: ${JSON.stringify(res.json).slice(0, 300)}`).toBe(200);
        return res;
      };
      const pruned = (e: any) => {
        expect(e, "event served").toBeDefined();
        expect(e.content).toEqual({});
      };
      const find = (events: any[], id: string) => events.find((e) => e.event_id === id);
      pruned((await get(`${V3}/rooms/${enc(room)}/event/${enc(msg.json.event_id)}`)).json);
      const messages = await get(`${V3}/rooms/${enc(room)}/messages?dir=b&limit=50`);
      expectMatchesSpec(messages, "GET", `${V3}/rooms/${enc(room)}/messages`);
      pruned(find(messages.json.chunk, msg.json.event_id));
      pruned(find(messages.json.chunk, state.json.event_id));
      const context = await get(`${V3}/rooms/${enc(room)}/context/${enc(msg.json.event_id)}`);
      pruned(context.json.event);
      pruned(find((await get(`${V3}/rooms/${enc(room)}/state`)).json, state.json.event_id));
      const roomInitial = await get(`${V3}/rooms/${enc(room)}/initialSync`);
      pruned(find(roomInitial.json.messages.chunk, msg.json.event_id));
      const initial = await get(`${V3}/initialSync?limit=50`);
      pruned(find(initial.json.rooms.find((r: any) => r.room_id === room).messages.chunk, msg.json.event_id));
      const sync = await get(`${V3}/sync?filter=${enc(JSON.stringify({ room: { timeline: { limit: 50 } } }))}`);
      const joined = sync.json.rooms.join[room];
      pruned(find([...joined.timeline.events, ...joined.state.events], state.json.event_id));
      if (who === alice) pruned(find(joined.timeline.events, msg.json.event_id));

      const g = await gql(t, `query ($roomId: String!, $id: String!) { room(roomId: $roomId) {
        event(eventId: $id) { eventId content }
        timeline(last: 50) { edges { node { eventId content } } }
      } }`, { roomId: room, id: msg.json.event_id }, who.access_token);
      expect(g.body.errors, JSON.stringify(g.body.errors)).toBeUndefined();
      expect(g.body.data.room.event.content).toEqual({});
      expect(g.body.data.room.timeline.edges.map((e: any) => e.node.eventId)).toContain(msg.json.event_id);
    }
    // The room still works: a new message goes out and reads back whole.
    const after = await call("PUT", `${V3}/rooms/${enc(room)}/send/m.room.message/s${++txn}`, { msgtype: "m.text", body: "still alive" });
    expect(after.status).toBe(200);
    const back = await t.call("GET", `${V3}/rooms/${enc(room)}/event/${enc(after.json.event_id)}`, { token: bob.access_token });
    expect(back.json.content.body).toBe("still alive");
  });

  it("serves over-deep account data stored before the bound, whole", async () => {
    const db = t.hs.services.storage.sql;
    const put = await call("PUT", `${V3}/user/${enc(alice.user_id)}/account_data/org.example.legacy`, { v: 1 });
    expect(put.status).toBe(200);
    await db.run(`UPDATE account_data SET content = ? WHERE user_id = ? AND type = ?`, [text({ deep: DEEP(5_000) }), alice.user_id, "org.example.legacy"]);
    const res = await t.call("GET", `${V3}/user/${enc(alice.user_id)}/account_data/org.example.legacy`, { token: alice.access_token });
    expect(res.status).toBe(200);
    expect(arrayDepth(res.json.deep)).toBe(5_000);
  });
});
