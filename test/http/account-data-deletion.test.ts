// Deleting account data (MSC3391) and a deleted device's local notification settings (MSC3890) over HTTP on
// SQLite and PostgreSQL, as Synapse 1.163 serves them with msc3391_enabled / msc3890_enabled: DELETE on the
// unstable routes and PUT `{}` delete a global or room entry; incremental /sync shows it with `{}` content,
// GET answers 404 M_NOT_FOUND, initial /sync leaves it out; deleting nothing is fine and moves no stream;
// another user's data, bad room ids and m.push_rules are refused with their errcodes; /versions says
// `org.matrix.msc3391`; logging a device out deletes its `org.matrix.msc3890.local_notification_settings.*`
// entry and no other. With the flags off: no DELETE route, PUT `{}` stores `{}`, and devices keep theirs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { loginUser, registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";

const V3 = "/_matrix/client/v3";
const MSC3391 = "/_matrix/client/unstable/org.matrix.msc3391";
const enc = encodeURIComponent;
const TYPE = "org.example.test";
const SETTINGS = "org.matrix.msc3890.local_notification_settings.";

type Events = { type: string; content: Record<string, unknown> }[];

describe.each(backends())("deleting account data (MSC3391, MSC3890) on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let bob: Session;
  let roomId: string;

  beforeAll(async () => {
    t = await startTestServer({ backend, config: { experimental_features: { msc3391_enabled: true, msc3890_enabled: true } } });
    alice = await registerUser(t, "alice");
    bob = await registerUser(t, "bob");
    roomId = await createRoom(t, alice);
  });
  afterAll(async () => {
    await t?.close();
  });

  const global = (type: string, who = alice) => `${V3}/user/${enc(who.user_id)}/account_data/${enc(type)}`;
  const inRoom = (type: string, room = roomId, who = alice) => `${V3}/user/${enc(who.user_id)}/rooms/${enc(room)}/account_data/${enc(type)}`;
  const delGlobal = (type: string, who = alice, owner = who) => t.call("DELETE", `${MSC3391}/user/${enc(owner.user_id)}/account_data/${enc(type)}`, { token: who.access_token });
  const delRoom = (type: string, room = roomId, who = alice) => t.call("DELETE", `${MSC3391}/user/${enc(who.user_id)}/rooms/${enc(room)}/account_data/${enc(type)}`, { token: who.access_token });
  const syncFrom = async (since?: string, who = alice) => {
    const res = await t.call("GET", `${V3}/sync?timeout=0${since ? `&since=${enc(since)}` : ""}`, { token: who.access_token });
    expect(res.status).toBe(200);
    return res.json as { next_batch: string; account_data?: { events: Events }; rooms?: { join?: Record<string, { account_data?: { events: Events } }> } };
  };
  const globalOf = (s: Awaited<ReturnType<typeof syncFrom>>) => s.account_data?.events ?? [];
  const roomOf = (s: Awaited<ReturnType<typeof syncFrom>>) => s.rooms?.join?.[roomId]?.account_data?.events ?? [];

  it("says org.matrix.msc3391 in /versions", async () => {
    expect((await t.call("GET", "/_matrix/client/versions")).json.unstable_features["org.matrix.msc3391"]).toBe(true);
  });

  for (const how of ["DELETE", "PUT {}"] as const) {
    it(`deletes global account data with ${how}: {} in incremental sync, 404, absent from initial sync`, async () => {
      const type = `${TYPE}.global.${how === "DELETE" ? "d" : "p"}`;
      expect((await t.call("PUT", global(type), { token: alice.access_token, body: { test_data: 1 } })).status).toBe(200);
      const before = await syncFrom();
      expect(globalOf(before)).toContainEqual({ type, content: { test_data: 1 } });
      const res = how === "DELETE" ? await delGlobal(type) : await t.call("PUT", global(type), { token: alice.access_token, body: {} });
      expect([res.status, res.json]).toEqual([200, {}]);
      const after = await syncFrom(before.next_batch);
      expect(globalOf(after)).toEqual([{ type, content: {} }]);
      const got = await t.call("GET", global(type), { token: alice.access_token });
      expect([got.status, got.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
      expect(globalOf(await syncFrom()).map((e) => e.type)).not.toContain(type);
      // Written again, it is back.
      expect((await t.call("PUT", global(type), { token: alice.access_token, body: { again: true } })).status).toBe(200);
      expect((await t.call("GET", global(type), { token: alice.access_token })).json).toEqual({ again: true });
    });

    it(`deletes room account data with ${how}`, async () => {
      const type = `${TYPE}.room.${how === "DELETE" ? "d" : "p"}`;
      expect((await t.call("PUT", inRoom(type), { token: alice.access_token, body: { test_data: 1 } })).status).toBe(200);
      const before = await syncFrom();
      expect(roomOf(before)).toContainEqual({ type, content: { test_data: 1 } });
      const res = how === "DELETE" ? await delRoom(type) : await t.call("PUT", inRoom(type), { token: alice.access_token, body: {} });
      expect([res.status, res.json]).toEqual([200, {}]);
      expect(roomOf(await syncFrom(before.next_batch))).toEqual([{ type, content: {} }]);
      const got = await t.call("GET", inRoom(type), { token: alice.access_token });
      expect([got.status, got.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
      expect(roomOf(await syncFrom()).map((e) => e.type)).not.toContain(type);
      // The global entry of the same type is another entry.
      expect((await t.call("GET", global(`${TYPE}.global.d`), { token: alice.access_token })).status).toBe(200);
    });
  }

  it("deleting what does not exist answers 200 and wakes no sync", async () => {
    const before = await syncFrom();
    expect((await delGlobal(`${TYPE}.never`)).status).toBe(200);
    expect((await delRoom(`${TYPE}.never`)).status).toBe(200);
    const after = await syncFrom(before.next_batch);
    expect(globalOf(after)).toEqual([]);
    expect(roomOf(after)).toEqual([]);
  });

  it("refuses another user's data, bad room ids and the types other APIs own", async () => {
    const other = await delGlobal(TYPE, bob, alice);
    expect([other.status, other.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    const badRoom = await delRoom(TYPE, "not-a-room");
    expect([badRoom.status, badRoom.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    for (const type of ["m.push_rules", "m.fully_read"]) {
      const res = await delGlobal(type);
      expect([res.status, res.json.errcode]).toEqual([405, "M_BAD_JSON"]);
    }
    // Bob's entry of the same type is untouched by Alice's deletions.
    expect((await t.call("PUT", global(TYPE, bob), { token: bob.access_token, body: { mine: 1 } })).status).toBe(200);
    expect((await delGlobal(TYPE)).status).toBe(200);
    expect((await t.call("GET", global(TYPE, bob), { token: bob.access_token })).json).toEqual({ mine: 1 });
  });

  it("MSC3890: logging a device out deletes its local notification settings, and only those", async () => {
    const second = await loginUser(t, "alice");
    const mine = SETTINGS + second.device_id;
    const other = SETTINGS + alice.device_id;
    for (const type of [mine, other]) expect((await t.call("PUT", global(type), { token: alice.access_token, body: { is_silenced: true } })).status).toBe(200);
    expect((await t.call("GET", global(mine), { token: alice.access_token })).json).toEqual({ is_silenced: true });
    const before = await syncFrom();
    expect((await t.call("POST", `${V3}/logout`, { token: second.access_token, body: {} })).status).toBe(200);
    const gone = await t.call("GET", global(mine), { token: alice.access_token });
    expect([gone.status, gone.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    expect(globalOf(await syncFrom(before.next_batch))).toContainEqual({ type: mine, content: {} });
    expect((await t.call("GET", global(other), { token: alice.access_token })).json).toEqual({ is_silenced: true });
  });
});

describe("account data with msc3391_enabled and msc3890_enabled off", () => {
  let t: TestServer;
  let alice: Session;
  beforeAll(async () => {
    t = await startTestServer({});
    alice = await registerUser(t, "alice");
  });
  afterAll(async () => {
    await t?.close();
  });

  it("serves no DELETE, stores a PUT of {} and keeps a deleted device's settings", async () => {
    const path = `${V3}/user/${enc(alice.user_id)}/account_data/${TYPE}`;
    expect((await t.call("PUT", path, { token: alice.access_token, body: { a: 1 } })).status).toBe(200);
    const del = await t.call("DELETE", `${MSC3391}/user/${enc(alice.user_id)}/account_data/${TYPE}`, { token: alice.access_token });
    expect([del.status, del.json.errcode]).toEqual([404, "M_UNRECOGNIZED"]);
    expect((await t.call("PUT", path, { token: alice.access_token, body: {} })).status).toBe(200);
    expect(await t.call("GET", path, { token: alice.access_token })).toMatchObject({ status: 200, json: {} });
    expect((await t.call("GET", "/_matrix/client/versions")).json.unstable_features["org.matrix.msc3391"]).toBe(false);

    const second = await loginUser(t, "alice");
    const settings = `${V3}/user/${enc(alice.user_id)}/account_data/${SETTINGS}${second.device_id}`;
    expect((await t.call("PUT", settings, { token: alice.access_token, body: { is_silenced: true } })).status).toBe(200);
    expect((await t.call("POST", `${V3}/logout`, { token: second.access_token, body: {} })).status).toBe(200);
    expect((await t.call("GET", settings, { token: alice.access_token })).json).toEqual({ is_silenced: true });
  });
});
