// Filters, account data, room tags and the legacy reads over HTTP on SQLite and PostgreSQL: uploads and
// reads of filters (own only, unknown ids, invalid definitions), account data refusals (other users,
// m.fully_read / m.push_rules, bad room ids, missing entries), tags with their order, GET /initialSync,
// GET /rooms/{roomId}/initialSync and GET /events (long poll woken by a send).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { parkedNow, untilParked } from "../helpers/parked.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("filters, account data and legacy reads on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let bob: Session;
  let txn = 0;

  beforeAll(async () => {
    t = await startTestServer({ backend });
    alice = await registerUser(t, "alice");
    bob = await registerUser(t, "bob");
  });
  afterAll(async () => {
    await t?.close();
  });

  const call = (method: string, path: string, who: Session | undefined, body?: unknown) => t.call(method, `${V3}${path}`, { token: who?.access_token, body });
  const ad = (user: string, type: string) => `/user/${enc(user)}/account_data/${enc(type)}`;
  const rad = (user: string, roomId: string, type: string) => `/user/${enc(user)}/rooms/${enc(roomId)}/account_data/${enc(type)}`;

  it("uploads and reads back filters; only one's own; unknown ids 404; invalid definitions refused", async () => {
    const def = { room: { timeline: { limit: 5, types: ["m.room.message"] }, state: { lazy_load_members: true } }, event_format: "client" };
    const up = await call("POST", `/user/${enc(alice.user_id)}/filter`, alice, def);
    expect(up.status).toBe(200);
    expectMatchesSpec(up, "POST", `${V3}/user/${enc(alice.user_id)}/filter`);
    const id = up.json.filter_id as string;
    const second = await call("POST", `/user/${enc(alice.user_id)}/filter`, alice, {});
    expect(second.json.filter_id).not.toBe(id);
    const got = await call("GET", `/user/${enc(alice.user_id)}/filter/${id}`, alice);
    expect(got.status).toBe(200);
    expectMatchesSpec(got, "GET", `${V3}/user/${enc(alice.user_id)}/filter/${id}`);
    expect(got.json).toEqual(def);
    // The filter id works in /sync.
    const roomId = await createRoom(t, alice);
    await call("PUT", `/rooms/${enc(roomId)}/send/m.room.message/f${++txn}`, alice, { msgtype: "m.text", body: "x" });
    const s = await call("GET", `/sync?filter=${id}`, alice);
    expect(s.status).toBe(200);
    expect(s.json.rooms.join[roomId].timeline.events.map((e: any) => e.type)).toEqual(["m.room.message"]);

    expect((await call("GET", `/user/${enc(alice.user_id)}/filter/${id}`, bob)).json.errcode).toBe("M_FORBIDDEN");
    expect((await call("POST", `/user/${enc(alice.user_id)}/filter`, bob, {})).status).toBe(403);
    const missing = await call("GET", `/user/${enc(alice.user_id)}/filter/4242`, alice);
    expect([missing.status, missing.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    expect((await call("GET", `/user/${enc(alice.user_id)}/filter/abc`, alice)).status).toBe(404);
    // Bob cannot use alice's filter id in his /sync (it is per user).
    expect((await call("GET", `/sync?filter=${id}`, bob)).status).toBe(404);

    const bad: [unknown, number, string][] = [
      [{ room: { timeline: { limit: -1 } } }, 400, "M_BAD_JSON"],
      [{ room: { timeline: { types: "m.room.message" } } }, 400, "M_BAD_JSON"],
      [{ event_format: "xml" }, 400, "M_BAD_JSON"],
      [{ event_fields: [1] }, 400, "M_BAD_JSON"],
      [{ room: { include_leave: "yes" } }, 400, "M_BAD_JSON"],
      [{ room: "all" }, 400, "M_BAD_JSON"],
      [{ room: { rooms: ["not-a-room"] } }, 400, "M_INVALID_PARAM"],
      [{ presence: { senders: ["nobody"] } }, 400, "M_INVALID_PARAM"],
    ];
    for (const [body, status, errcode] of bad) {
      const res = await call("POST", `/user/${enc(alice.user_id)}/filter`, alice, body);
      expect([JSON.stringify(body), res.status, res.json.errcode]).toEqual([JSON.stringify(body), status, errcode]);
    }
    const notJson = await t.call("POST", `${V3}/user/${enc(alice.user_id)}/filter`, { token: alice.access_token, raw: "{nope" });
    expect(notJson.json.errcode).toBe("M_NOT_JSON");
  });

  it("account data: global and per room round trip; refusals", async () => {
    const roomId = await createRoom(t, alice);
    const put = await call("PUT", ad(alice.user_id, "org.example.a"), alice, { x: 1 });
    expect(put.status).toBe(200);
    expectMatchesSpec(put, "PUT", `${V3}${ad(alice.user_id, "org.example.a")}`);
    const get = await call("GET", ad(alice.user_id, "org.example.a"), alice);
    expect(get.json).toEqual({ x: 1 });
    expectMatchesSpec(get, "GET", `${V3}${ad(alice.user_id, "org.example.a")}`);
    await call("PUT", ad(alice.user_id, "org.example.a"), alice, { x: 2 });
    expect((await call("GET", ad(alice.user_id, "org.example.a"), alice)).json).toEqual({ x: 2 });
    expect((await call("PUT", rad(alice.user_id, roomId, "org.example.r"), alice, { r: true })).status).toBe(200);
    const rget = await call("GET", rad(alice.user_id, roomId, "org.example.r"), alice);
    expect(rget.json).toEqual({ r: true });
    expectMatchesSpec(rget, "GET", `${V3}${rad(alice.user_id, roomId, "org.example.r")}`);
    // The room entry is not the global one.
    expect((await call("GET", ad(alice.user_id, "org.example.r"), alice)).status).toBe(404);

    const refusals: [string, string, Session, unknown, number, string][] = [
      ["GET", ad(alice.user_id, "org.example.a"), bob, undefined, 403, "M_FORBIDDEN"],
      ["PUT", ad(alice.user_id, "org.example.a"), bob, { y: 1 }, 403, "M_FORBIDDEN"],
      ["PUT", rad(alice.user_id, roomId, "org.example.r"), bob, {}, 403, "M_FORBIDDEN"],
      ["GET", ad(alice.user_id, "org.example.none"), alice, undefined, 404, "M_NOT_FOUND"],
      ["GET", rad(alice.user_id, roomId, "org.example.none"), alice, undefined, 404, "M_NOT_FOUND"],
      ["PUT", ad(alice.user_id, "m.fully_read"), alice, { event_id: "$x" }, 405, "M_BAD_JSON"],
      ["PUT", rad(alice.user_id, roomId, "m.fully_read"), alice, { event_id: "$x" }, 405, "M_BAD_JSON"],
      ["PUT", ad(alice.user_id, "m.push_rules"), alice, {}, 405, "M_BAD_JSON"],
      ["PUT", rad(alice.user_id, "not-a-room", "org.example.r"), alice, {}, 400, "M_INVALID_PARAM"],
      ["PUT", ad(alice.user_id, "org.example.arr"), alice, [1, 2], 400, "M_BAD_JSON"],
    ];
    for (const [method, path, who, body, status, errcode] of refusals) {
      const res = await call(method, path, who, body);
      expect([method, path, res.status, res.json.errcode]).toEqual([method, path, status, errcode]);
    }
    // Nothing refused was stored.
    expect((await call("GET", ad(alice.user_id, "org.example.a"), alice)).json).toEqual({ x: 2 });
    expect((await call("GET", ad(alice.user_id, "m.fully_read"), alice)).status).toBe(404);
    expect((await call("PUT", ad(alice.user_id, "x"), undefined, {})).json.errcode).toBe("M_MISSING_TOKEN");
  });

  it("room tags: put with order, list, delete; bad order refused", async () => {
    const roomId = await createRoom(t, alice);
    const tags = `/user/${enc(alice.user_id)}/rooms/${enc(roomId)}/tags`;
    const empty = await call("GET", tags, alice);
    expect(empty.json).toEqual({ tags: {} });
    expectMatchesSpec(empty, "GET", `${V3}${tags}`);
    const put = await call("PUT", `${tags}/u.work`, alice, { order: 0.25 });
    expect(put.status).toBe(200);
    expectMatchesSpec(put, "PUT", `${V3}${tags}/u.work`);
    await call("PUT", `${tags}/m.favourite`, alice, {});
    const list = await call("GET", tags, alice);
    expect(list.json).toEqual({ tags: { "u.work": { order: 0.25 }, "m.favourite": {} } });
    expectMatchesSpec(list, "GET", `${V3}${tags}`);
    const del = await call("DELETE", `${tags}/u.work`, alice);
    expect(del.status).toBe(200);
    expectMatchesSpec(del, "DELETE", `${V3}${tags}/u.work`);
    expect((await call("GET", tags, alice)).json).toEqual({ tags: { "m.favourite": {} } });
    expect((await call("GET", rad(alice.user_id, roomId, "m.tag"), alice)).json).toEqual({ tags: { "m.favourite": {} } });
    expect((await call("PUT", `${tags}/x`, alice, { order: "first" })).json.errcode).toBe("M_BAD_JSON");
    expect((await call("PUT", `${tags}/x`, alice, { order: 2 })).json.errcode).toBe("M_INVALID_PARAM");
    expect((await call("PUT", `${tags}/x`, bob, {})).status).toBe(403);
    expect((await call("GET", tags, bob)).status).toBe(403);
    expect((await call("GET", tags, alice)).json).toEqual({ tags: { "m.favourite": {} } });
  });

  it("GET /initialSync and GET /rooms/{roomId}/initialSync", async () => {
    const roomId = await createRoom(t, alice, { name: "Legacy" });
    await call("PUT", `/rooms/${enc(roomId)}/send/m.room.message/l${++txn}`, alice, { msgtype: "m.text", body: "old style" });
    await call("PUT", rad(alice.user_id, roomId, "org.example.legacy"), alice, { l: 1 });
    const init = await call("GET", `/initialSync?limit=3`, alice);
    expect(init.status).toBe(200);
    expectMatchesSpec(init, "GET", `${V3}/initialSync`);
    const room = init.json.rooms.find((r: any) => r.room_id === roomId);
    expect(room.membership).toBe("join");
    expect(room.messages.chunk).toHaveLength(3);
    expect(room.messages.chunk.at(-1)).toMatchObject({ room_id: roomId, content: { body: "old style" } });
    expect(room.state.find((e: any) => e.type === "m.room.name").content.name).toBe("Legacy");
    expect(room.account_data).toEqual([{ type: "org.example.legacy", content: { l: 1 } }]);
    expect(init.json.account_data).toEqual(expect.arrayContaining([{ type: "org.example.a", content: { x: 2 } }]));
    expect(Array.isArray(init.json.presence)).toBe(true);

    const one = await call("GET", `/rooms/${enc(roomId)}/initialSync`, alice);
    expect(one.status).toBe(200);
    expectMatchesSpec(one, "GET", `${V3}/rooms/${enc(roomId)}/initialSync`);
    expect(one.json).toMatchObject({ room_id: roomId, membership: "join", visibility: "private" });
    expect(one.json.messages.chunk.at(-1).content.body).toBe("old style");
    expect(one.json.account_data).toEqual([{ type: "org.example.legacy", content: { l: 1 } }]);
    expect((await call("GET", `/rooms/${enc(roomId)}/initialSync`, bob)).status).toBe(403);
  });

  it("GET /events: long poll woken by a send; from tokens", async () => {
    const roomId = await createRoom(t, alice);
    const init = await call("GET", `/initialSync?limit=1`, alice);
    const started = Date.now();
    const parked = parkedNow(t);
    const poll = call("GET", `/events?from=${enc(init.json.end)}&timeout=30000`, alice);
    await untilParked(t, parked + 1);
    await call("PUT", `/rooms/${enc(roomId)}/send/m.room.message/e${++txn}`, alice, { msgtype: "m.text", body: "event stream" });
    const res = await poll;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(res.status).toBe(200);
    expectMatchesSpec(res, "GET", `${V3}/events`);
    expect(res.json.chunk.map((e: any) => e.content.body)).toEqual(["event stream"]);
    expect(res.json.chunk[0].room_id).toBe(roomId);
    expect(res.json.start).toBe(init.json.end);
    const empty = await call("GET", `/events?from=${enc(res.json.end)}&timeout=0`, alice);
    expect(empty.json.chunk).toEqual([]);
    expect((await call("GET", `/events?from=bogus`, alice)).json.errcode).toBe("M_INVALID_PARAM");
  });
});
