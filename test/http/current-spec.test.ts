// Items of spec v1.12 – v1.19 over HTTP on SQLite and PostgreSQL, responses checked against the v1.19
// OpenAPI definitions: /versions (v1.12 – v1.19 listed; GET /auth_metadata 404, the OAuth API not
// offered), GET /_matrix/client/v1/mutual_rooms (v1.19, MSC2666; its unstable path, paging, the
// spec's errors, GraphQL's mutualRooms), `format=event` on GET /state/{type}/{key} (v1.16), the
// `m.forget_forced_upon_leave` capability with forget_rooms_on_leave (v1.18, MSC4267: a leave, a kick and
// a ban each forget the room), POST /users/{userId}/report (v1.14, MSC4260), guests downloading
// authenticated media (v1.12, MSC4189), and marked-unread rooms as room account data (v1.12, MSC2867).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { gql } from "../graphql/client.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("spec v1.12 – v1.19 items on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let bob: Session;

  beforeAll(async () => {
    t = await startTestServer({ backend, config: { forget_rooms_on_leave: true } });
    alice = await registerUser(t, "alice");
    bob = await registerUser(t, "bob");
  });
  afterAll(async () => {
    await t?.close();
  });
  it("/versions lists v1.12 to v1.19; v1.15's optional OAuth 2.0 API is answered as not offered", async () => {
    const res = await t.call("GET", "/_matrix/client/versions");
    expectMatchesSpec(res, "GET", "/_matrix/client/versions");
    const listed = (res.json.versions as string[]).filter((v) => /^v1\.(1[2-9])$/.test(v));
    expect(listed).toEqual(["v1.12", "v1.13", "v1.14", "v1.15", "v1.16", "v1.17", "v1.18", "v1.19"]);
    const meta = await t.call("GET", "/_matrix/client/v1/auth_metadata");
    expect([meta.status, meta.json.errcode]).toEqual([404, "M_UNRECOGNIZED"]);
    expectMatchesSpec(meta, "GET", "/_matrix/client/v1/auth_metadata");
  });

  const join = async (who: Session, roomId: string) => expect((await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: who.access_token, body: {} })).status).toBe(200);

  it("mutual_rooms: the rooms both are joined to, paged, with the spec's errors; the unstable path and GraphQL agree", async () => {
    const shared: string[] = [];
    for (let i = 0; i < 3; i++) {
      const roomId = await createRoom(t, alice, { preset: "public_chat" });
      await join(bob, roomId);
      shared.push(roomId);
    }
    await createRoom(t, alice, {}); // alice's alone
    const left = await createRoom(t, alice, { preset: "public_chat" });
    await join(bob, left);
    expect((await t.call("POST", `${V3}/rooms/${enc(left)}/leave`, { token: bob.access_token, body: {} })).status).toBe(200);
    const path = `/_matrix/client/v1/mutual_rooms?user_id=${enc(bob.user_id)}`;
    const res = await t.call("GET", path, { token: alice.access_token });
    expectMatchesSpec(res, "GET", path);
    expect(res.json).toEqual({ joined: [...shared].sort(), count: 3 });
    const unstable = await t.call("GET", `/_matrix/client/unstable/uk.half-shot.msc2666/user/mutual_rooms?user_id=${enc(bob.user_id)}`, { token: alice.access_token });
    expect(unstable.json).toEqual(res.json);
    const nobody = await t.call("GET", `/_matrix/client/v1/mutual_rooms?user_id=${enc("@nobody:elsewhere.example")}`, { token: alice.access_token });
    expect(nobody.json).toEqual({ joined: [], count: 0 });
    for (const [q, status, errcode] of [
      ["", 400, "M_MISSING_PARAM"],
      [`?user_id=${enc(alice.user_id)}`, 400, "M_INVALID_PARAM"],
      ["?user_id=not-a-user", 400, "M_INVALID_PARAM"],
      [`?user_id=${enc(bob.user_id)}&from=junk`, 400, "M_INVALID_PARAM"],
    ] as const) {
      const r = await t.call("GET", `/_matrix/client/v1/mutual_rooms${q}`, { token: alice.access_token });
      expect({ q, status: r.status, errcode: r.json.errcode }).toEqual({ q, status, errcode });
    }
    const viaGql = await gql(t, `query ($u: String!) { mutualRooms(userId: $u) { roomIds count nextBatch } }`, { u: bob.user_id }, alice.access_token);
    expect(viaGql.body.data.mutualRooms).toEqual({ roomIds: [...shared].sort(), count: 3, nextBatch: null });
  });

  it("mutual_rooms pages through many rooms with next_batch", async () => {
    const carol = await registerUser(t, "carol");
    const dave = await registerUser(t, "dave");
    const rooms: string[] = [];
    for (let i = 0; i < 103; i++) {
      const roomId = await createRoom(t, carol, { preset: "public_chat" });
      await join(dave, roomId);
      rooms.push(roomId);
    }
    const first = await t.call("GET", `/_matrix/client/v1/mutual_rooms?user_id=${enc(dave.user_id)}`, { token: carol.access_token });
    expect([first.json.joined.length, first.json.count, typeof first.json.next_batch]).toEqual([100, 103, "string"]);
    const second = await t.call("GET", `/_matrix/client/v1/mutual_rooms?user_id=${enc(dave.user_id)}&from=${enc(first.json.next_batch)}`, { token: carol.access_token });
    expect([second.json.joined.length, second.json.next_batch]).toEqual([3, undefined]);
    expect([...first.json.joined, ...second.json.joined]).toEqual([...rooms].sort());
  });

  it("GET /state/{type}/{key} with format=event gives the whole event; another format is refused", async () => {
    const roomId = await createRoom(t, alice, { name: "Formats" });
    const base = `${V3}/rooms/${enc(roomId)}/state/m.room.name/`;
    const content = await t.call("GET", base, { token: alice.access_token });
    expectMatchesSpec(content, "GET", base);
    expect(content.json).toEqual({ name: "Formats" });
    // (The spec's schema for this answer is `oneOf: [object, state event]`, which a whole event matches
    // twice: it cannot validate the event form, so its fields are checked here.)
    const event = await t.call("GET", `${base}?format=event`, { token: alice.access_token });
    expect(event.json).toMatchObject({ type: "m.room.name", state_key: "", sender: alice.user_id, content: { name: "Formats" }, event_id: expect.stringMatching(/^\$/) });
    const bad = await t.call("GET", `${base}?format=xml`, { token: alice.access_token });
    expect([bad.status, bad.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
  });

  it("forget_rooms_on_leave: the capability says so, and a leave, a kick and a ban each forget the room", async () => {
    const caps = await t.call("GET", `${V3}/capabilities`, { token: bob.access_token });
    expectMatchesSpec(caps, "GET", `${V3}/capabilities`);
    expect(caps.json.capabilities["m.forget_forced_upon_leave"]).toEqual({ enabled: true });
    const forgotten = async (roomId: string) => {
      // Forgetting follows the leave's commit: wait on the condition.
      for (let i = 0; i < 200; i++) {
        const m = await t.hs.services.rooms.store.membership(roomId, bob.user_id);
        if (m?.forgotten) return true;
        await new Promise((r) => setImmediate(r));
      }
      return false;
    };
    const rooms = [];
    for (let i = 0; i < 3; i++) {
      const roomId = await createRoom(t, alice, { preset: "public_chat" });
      await join(bob, roomId);
      rooms.push(roomId);
    }
    expect((await t.call("POST", `${V3}/rooms/${enc(rooms[0]!)}/leave`, { token: bob.access_token, body: {} })).status).toBe(200);
    expect((await t.call("POST", `${V3}/rooms/${enc(rooms[1]!)}/kick`, { token: alice.access_token, body: { user_id: bob.user_id } })).status).toBe(200);
    expect((await t.call("POST", `${V3}/rooms/${enc(rooms[2]!)}/ban`, { token: alice.access_token, body: { user_id: bob.user_id } })).status).toBe(200);
    for (const roomId of rooms) expect(await forgotten(roomId)).toBe(true);
    // A member who stays keeps the room.
    expect((await t.hs.services.rooms.store.membership(rooms[0]!, alice.user_id))?.forgotten).toBe(false);
    // Without the option (the default), the capability says false.
    const plain = await startTestServer({ backend });
    try {
      const u = await registerUser(plain, "u");
      expect((await plain.call("GET", `${V3}/capabilities`, { token: u.access_token })).json.capabilities["m.forget_forced_upon_leave"]).toEqual({ enabled: false });
    } finally {
      await plain.close();
    }
  });

  it("POST /users/{userId}/report: a local user's report is kept; remote and unknown users get the same 200; bad input is refused", async () => {
    const path = (u: string) => `${V3}/users/${enc(u)}/report`;
    const ok = await t.call("POST", path(bob.user_id), { token: alice.access_token, body: { reason: "rude" } });
    expectMatchesSpec(ok, "POST", path(bob.user_id));
    expect([ok.status, ok.json]).toEqual([200, {}]);
    for (const u of ["@nobody:elsewhere.example", `@ghost:${t.config.server_name}`]) expect((await t.call("POST", path(u), { token: alice.access_token, body: { reason: "" } })).json).toEqual({});
    const kept = await t.hs.services.db.userReport.findMany({ where: { userId: alice.user_id } });
    expect(kept.map((r) => [r.targetUserId, r.reason])).toEqual([[bob.user_id, "rude"]]);
    for (const [u, body, status, errcode] of [
      [bob.user_id, {}, 400, "M_MISSING_PARAM"],
      [bob.user_id, { reason: 5 }, 400, "M_BAD_JSON"],
      [bob.user_id, { reason: "x".repeat(1001) }, 400, "M_BAD_JSON"],
      ["not-a-user", { reason: "r" }, 400, "M_INVALID_PARAM"],
    ] as const) {
      const r = await t.call("POST", path(u), { token: alice.access_token, body });
      expect({ u, status: r.status, errcode: r.json.errcode }).toEqual({ u, status, errcode });
    }
    const guest = (await t.call("POST", `${V3}/register?kind=guest`, { body: {} })).json;
    expect((await t.call("POST", path(bob.user_id), { token: guest.access_token, body: { reason: "r" } })).json.errcode).toBe("M_GUEST_ACCESS_FORBIDDEN");
    expect(await t.hs.services.db.userReport.count()).toBe(1);
  });

  it("guests may download authenticated media (MSC4189, v1.12)", async () => {
    const up = await t.call("POST", "/_matrix/media/v3/upload", { token: alice.access_token, raw: "hello guest", headers: { "content-type": "text/plain" } });
    expect(up.status).toBe(200);
    const [server, mediaId] = (up.json.content_uri as string).slice("mxc://".length).split("/");
    const guest = (await t.call("POST", `${V3}/register?kind=guest`, { body: {} })).json;
    const res = await fetch(`${t.baseUrl}/_matrix/client/v1/media/download/${server}/${mediaId}`, { headers: { authorization: `Bearer ${guest.access_token}` } });
    expect([res.status, await res.text()]).toEqual([200, "hello guest"]);
  });

  it("marked-unread rooms (m.marked_unread room account data) are kept and reach /sync", async () => {
    const roomId = await createRoom(t, alice, {});
    const path = `${V3}/user/${enc(alice.user_id)}/rooms/${enc(roomId)}/account_data/m.marked_unread`;
    expect((await t.call("PUT", path, { token: alice.access_token, body: { unread: true } })).status).toBe(200);
    expect((await t.call("GET", path, { token: alice.access_token })).json).toEqual({ unread: true });
    const sync = await t.call("GET", `${V3}/sync?timeout=0`, { token: alice.access_token });
    expect(sync.json.rooms.join[roomId].account_data.events).toEqual(expect.arrayContaining([{ type: "m.marked_unread", content: { unread: true } }]));
  });
});
