// Filtering room events by relation type (MSC3874) over HTTP on SQLite and PostgreSQL, as Synapse 1.163
// does with msc3874_enabled: `org.matrix.msc3874.rel_types` keeps only events related by one of the types,
// `org.matrix.msc3874.not_rel_types` drops those (events without a relation stay) in /messages, /context
// and /sync filters (account data has no relation: rel_types keeps none of it); a non-list is M_BAD_JSON;
// /versions says `org.matrix.msc3874`. With the flag off the fields are validated and ignored.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const REL = "org.matrix.msc3874.rel_types";
const NOT_REL = "org.matrix.msc3874.not_rel_types";

interface Room {
  roomId: string;
  from: string;
  root: string;
  thread: string;
  reference: string;
}

async function setUp(t: TestServer, alice: Session): Promise<Room> {
  const roomId = await createRoom(t, alice, { preset: "public_chat" });
  const from = (await t.call("GET", `${V3}/sync?timeout=0`, { token: alice.access_token })).json.next_batch as string;
  let txn = 0;
  const send = async (content: Record<string, unknown>) =>
    (await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/t${++txn}`, { token: alice.access_token, body: { msgtype: "m.text", ...content } })).json.event_id as string;
  const root = await send({ body: "no relation" });
  const thread = await send({ body: "threaded", "m.relates_to": { rel_type: "m.thread", event_id: root } });
  const reference = await send({ body: "reference", "m.relates_to": { rel_type: "m.reference", event_id: root } });
  return { roomId, from, root, thread, reference };
}

describe.each(backends())("relation type filters (MSC3874) on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let room: Room;

  beforeAll(async () => {
    t = await startTestServer({ backend, config: { experimental_features: { msc3874_enabled: true } } });
    alice = await registerUser(t, "alice");
    room = await setUp(t, alice);
  });
  afterAll(async () => {
    await t?.close();
  });

  const messages = async (filter: Record<string, unknown>) => {
    const res = await t.call("GET", `${V3}/rooms/${enc(room.roomId)}/messages?dir=f&from=${enc(room.from)}&filter=${enc(JSON.stringify(filter))}`, { token: alice.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return (res.json.chunk as { event_id: string }[]).map((e) => e.event_id);
  };

  it("says org.matrix.msc3874 in /versions", async () => {
    expect((await t.call("GET", "/_matrix/client/versions")).json.unstable_features["org.matrix.msc3874"]).toBe(true);
  });

  it("keeps or drops events by rel_type in /messages", async () => {
    expect(await messages({ [REL]: ["m.thread"] })).toEqual([room.thread]);
    expect(await messages({ [REL]: ["m.reference"] })).toEqual([room.reference]);
    expect(await messages({ [REL]: ["m.thread", "m.reference"] })).toEqual([room.thread, room.reference]);
    expect(await messages({ [NOT_REL]: ["m.thread"] })).toEqual([room.root, room.reference]);
    expect(await messages({ [NOT_REL]: ["m.reference"] })).toEqual([room.root, room.thread]);
    expect(await messages({ [NOT_REL]: ["m.thread", "m.reference"] })).toEqual([room.root]);
    expect(await messages({ [REL]: [] })).toEqual([]);
    // With the other fields: only m.room.message events among them.
    expect(await messages({ types: ["m.room.message"], [REL]: ["m.thread"], [NOT_REL]: ["m.thread"] })).toEqual([]);
  });

  it("applies them in /context and a /sync timeline filter", async () => {
    const ctx = await t.call("GET", `${V3}/rooms/${enc(room.roomId)}/context/${enc(room.reference)}?limit=10&filter=${enc(JSON.stringify({ [REL]: ["m.thread"] }))}`, { token: alice.access_token });
    expect(ctx.status).toBe(200);
    expect((ctx.json.events_before as { event_id: string }[]).map((e) => e.event_id)).toEqual([room.thread]);
    const filter = JSON.stringify({ room: { timeline: { [NOT_REL]: ["m.thread"], types: ["m.room.message"] } } });
    const sync = await t.call("GET", `${V3}/sync?timeout=0&filter=${enc(filter)}`, { token: alice.access_token });
    const ids = (sync.json.rooms.join[room.roomId].timeline.events as { event_id: string }[]).map((e) => e.event_id);
    expect(ids).toEqual([room.root, room.reference]);
    // Account data carries no relation: rel_types keeps none of it, not_rel_types all of it (as Synapse).
    expect((await t.call("PUT", `${V3}/user/${enc(alice.user_id)}/account_data/org.example.x`, { token: alice.access_token, body: { a: 1 } })).status).toBe(200);
    const accountData = async (f: Record<string, unknown>) =>
      ((await t.call("GET", `${V3}/sync?timeout=0&filter=${enc(JSON.stringify({ account_data: f }))}`, { token: alice.access_token })).json.account_data?.events ?? []).map((e: { type: string }) => e.type);
    expect(await accountData({ [REL]: ["m.thread"] })).toEqual([]);
    expect(await accountData({ [NOT_REL]: ["m.thread"] })).toContain("org.example.x");
  });

  it("answers M_BAD_JSON for a rel_types that is not a list of strings", async () => {
    for (const filter of [{ [REL]: "m.thread" }, { [NOT_REL]: [1] }]) {
      const res = await t.call("GET", `${V3}/rooms/${enc(room.roomId)}/messages?dir=f&filter=${enc(JSON.stringify(filter))}`, { token: alice.access_token });
      expect([res.status, res.json.errcode]).toEqual([400, "M_BAD_JSON"]);
    }
    const upload = await t.call("POST", `${V3}/user/${enc(alice.user_id)}/filter`, { token: alice.access_token, body: { room: { timeline: { [REL]: {} } } } });
    expect([upload.status, upload.json.errcode]).toEqual([400, "M_BAD_JSON"]);
  });
});

describe("relation type filters with msc3874_enabled off", () => {
  let t: TestServer;
  let alice: Session;
  beforeAll(async () => {
    t = await startTestServer({});
    alice = await registerUser(t, "alice");
  });
  afterAll(async () => {
    await t?.close();
  });

  it("ignores them (and still validates them)", async () => {
    const room = await setUp(t, alice);
    const res = await t.call("GET", `${V3}/rooms/${enc(room.roomId)}/messages?dir=f&from=${enc(room.from)}&filter=${enc(JSON.stringify({ [REL]: ["m.thread"] }))}`, { token: alice.access_token });
    expect((res.json.chunk as { event_id: string }[]).map((e) => e.event_id)).toEqual([room.root, room.thread, room.reference]);
    const bad = await t.call("GET", `${V3}/rooms/${enc(room.roomId)}/messages?dir=f&filter=${enc(JSON.stringify({ [REL]: "x" }))}`, { token: alice.access_token });
    expect([bad.status, bad.json.errcode]).toEqual([400, "M_BAD_JSON"]);
    expect((await t.call("GET", "/_matrix/client/versions")).json.unstable_features["org.matrix.msc3874"]).toBe(false);
  });
});
