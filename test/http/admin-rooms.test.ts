// The room admin API over HTTP on both prefixes, on SQLite and PostgreSQL: the room list (extra
// attributes, order, direction, search, paging, total_rooms), details, members, state, messages, block,
// delete v2 (shutdown into a notice room, aliases moved, purge) with its status endpoints, and the admin
// join — each refused with 403 M_FORBIDDEN for non-admins and with Synapse's errors for bad input.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";

const V1 = ["/_synapse/admin/v1", "/_impl/admin/v1"] as const;
const V2 = ["/_synapse/admin/v2", "/_impl/admin/v2"] as const;

describe.each(backends())("room admin API (%s)", (backend) => {
  let t: TestServer;
  let admin: Session;
  let alice: Session;
  let bob: Session;
  let alpha: string; // public, named, aliased, 2 members
  let beta: string; // private, encrypted, unnamed
  const call = (method: string, path: string, body?: unknown, token = admin.access_token) => t.call(method, path, { token, body });

  const waitFor = async <T>(fn: () => Promise<T>, ok: (v: T) => boolean): Promise<T> => {
    for (let i = 0; i < 200; i++) {
      const v = await fn();
      if (ok(v)) return v;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error("condition never met");
  };

  beforeAll(async () => {
    t = await startTestServer({ backend });
    admin = await registerUser(t, "admin");
    await t.hs.services.users.setAdmin(admin.user_id, true);
    alice = await registerUser(t, "alice");
    bob = await registerUser(t, "bob");
    alpha = (await call("POST", "/_matrix/client/v3/createRoom", { preset: "public_chat", name: "Alpha Room", room_alias_name: "alpha", visibility: "public" }, alice.access_token)).json.room_id;
    expect((await call("POST", `/_matrix/client/v3/join/${alpha}`, {}, bob.access_token)).status).toBe(200);
    beta = (await call("POST", "/_matrix/client/v3/createRoom", { preset: "private_chat", initial_state: [{ type: "m.room.encryption", state_key: "", content: { algorithm: "m.megolm.v1.aes-sha2" } }] }, bob.access_token)).json.room_id;
  });
  afterAll(async () => {
    await t?.close();
  });

  it("refuses non-admins with 403 M_FORBIDDEN and changes nothing", async () => {
    const calls: [string, string, unknown?][] = [
      ["GET", `${V1[0]}/rooms`],
      ["GET", `${V1[1]}/rooms/${alpha}`],
      ["GET", `${V1[0]}/rooms/${alpha}/members`],
      ["GET", `${V1[0]}/rooms/${alpha}/state`],
      ["GET", `${V1[0]}/rooms/${alpha}/messages`],
      ["GET", `${V1[0]}/rooms/${alpha}/block`],
      ["PUT", `${V1[0]}/rooms/${alpha}/block`, { block: true }],
      ["DELETE", `${V2[0]}/rooms/${alpha}`, {}],
      ["GET", `${V2[0]}/rooms/${alpha}/delete_status`],
      ["GET", `${V2[1]}/rooms/delete_status/abc`],
      ["POST", `${V1[0]}/join/${beta}`, { user_id: alice.user_id }],
    ];
    for (const [method, path, body] of calls) {
      const r = await call(method, path, body, alice.access_token);
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.json.errcode).toBe("M_FORBIDDEN");
    }
    expect((await call("GET", `${V1[0]}/rooms/${alpha}/block`)).json).toEqual({ block: false });
    expect((await call("GET", `${V1[0]}/rooms/${alpha}`)).status).toBe(200);
    expect((await call("GET", `${V1[0]}/users/${alice.user_id}/joined_rooms`)).json.joined_rooms).toEqual([alpha]);
  });

  it("lists rooms with the extra attributes and total_rooms", async () => {
    for (const prefix of V1) {
      const r = await call("GET", `${prefix}/rooms`);
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      expect(r.json.total_rooms).toBe(2);
      expect(r.json.offset).toBe(0);
      expect(r.json.next_batch).toBeUndefined();
      const a = r.json.rooms.find((x: any) => x.room_id === alpha);
      expect(a).toEqual({
        room_id: alpha, name: "Alpha Room", canonical_alias: "#alpha:weft.test", joined_members: 2, joined_local_members: 2,
        version: expect.any(String), creator: alice.user_id, encryption: null, federatable: true, public: true,
        join_rules: "public", guest_access: expect.toBeOneOf([null, "can_join", "forbidden"]), history_visibility: "shared",
        state_events: expect.any(Number), room_type: null,
      });
      expect(a.state_events).toBeGreaterThanOrEqual(7);
      const b = r.json.rooms.find((x: any) => x.room_id === beta);
      expect(b).toMatchObject({ name: null, encryption: "m.megolm.v1.aes-sha2", public: false, join_rules: "invite", joined_members: 1 });
    }
  });

  it("orders, reverses, searches and pages", async () => {
    const bySize = await call("GET", `${V1[0]}/rooms?order_by=joined_members`);
    expect(bySize.json.rooms.map((x: any) => x.room_id)).toEqual([alpha, beta]); // largest first
    const reversed = await call("GET", `${V1[0]}/rooms?order_by=joined_members&dir=b`);
    expect(reversed.json.rooms.map((x: any) => x.room_id)).toEqual([beta, alpha]);
    const byName = await call("GET", `${V1[0]}/rooms?order_by=name`);
    expect(byName.json.rooms.map((x: any) => x.room_id)).toEqual([beta, alpha]); // null name first
    expect((await call("GET", `${V1[0]}/rooms?search_term=alpha`)).json).toMatchObject({ total_rooms: 1, rooms: [{ room_id: alpha }] });
    expect((await call("GET", `${V1[0]}/rooms?search_term=ALPHA%20r`)).json.total_rooms).toBe(1);
    expect((await call("GET", `${V1[0]}/rooms?search_term=${encodeURIComponent(beta)}`)).json.rooms[0].room_id).toBe(beta);
    expect((await call("GET", `${V1[0]}/rooms?search_term=nothing-like-it`)).json).toMatchObject({ total_rooms: 0, rooms: [] });
    expect((await call("GET", `${V1[0]}/rooms?public_rooms=true`)).json.rooms.map((x: any) => x.room_id)).toEqual([alpha]);

    const p1 = await call("GET", `${V1[0]}/rooms?order_by=joined_members&limit=1`);
    expect(p1.json).toMatchObject({ offset: 0, total_rooms: 2, next_batch: 1, rooms: [{ room_id: alpha }] });
    const p2 = await call("GET", `${V1[0]}/rooms?order_by=joined_members&limit=1&from=1`);
    expect(p2.json).toMatchObject({ offset: 1, total_rooms: 2, prev_batch: 0, rooms: [{ room_id: beta }] });
    expect(p2.json.next_batch).toBeUndefined();
  });

  it("refuses bad list parameters with M_INVALID_PARAM", async () => {
    for (const q of ["from=-1", "limit=-1", "limit=x", "order_by=colour", "dir=up", "public_rooms=perhaps"]) {
      const r = await call("GET", `${V1[0]}/rooms?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.json.errcode, q).toBe("M_INVALID_PARAM");
    }
  });

  it("shows details, members and state; unknown or malformed room ids are 404 / 400", async () => {
    const d = await call("GET", `${V1[1]}/rooms/${alpha}`);
    expect(d.status).toBe(200);
    expect(d.json).toMatchObject({ room_id: alpha, name: "Alpha Room", topic: null, avatar: null, joined_local_devices: 2, forgotten: false, tombstoned: false, replacement_room: null, public: true });
    const m = await call("GET", `${V1[0]}/rooms/${alpha}/members`);
    expect(m.json.total).toBe(2);
    expect(m.json.members.sort()).toEqual([alice.user_id, bob.user_id].sort());
    const st = await call("GET", `${V1[0]}/rooms/${alpha}/state`);
    expect(st.json.state.map((e: any) => e.type)).toContain("m.room.create");
    expect(st.json.state.every((e: any) => typeof e.event_id === "string" && typeof e.state_key === "string")).toBe(true);
    const names = await call("GET", `${V1[0]}/rooms/${alpha}/state?type=m.room.name`);
    expect(names.json.state).toHaveLength(1);
    expect(names.json.state[0].content).toEqual({ name: "Alpha Room" });

    for (const sub of ["", "/members", "/state", "/messages"]) {
      const unknown = await call("GET", `${V1[0]}/rooms/!nope:weft.test${sub}`);
      expect(unknown.status, sub).toBe(404);
      expect(unknown.json.errcode).toBe("M_NOT_FOUND");
      const bad = await call("GET", `${V1[0]}/rooms/not-a-room${sub}`);
      expect(bad.status, sub).toBe(400);
      expect(bad.json.errcode).toBe("M_INVALID_PARAM");
    }
  });

  it("reads messages of a room the admin is not in, both directions", async () => {
    await call("PUT", `/_matrix/client/v3/rooms/${beta}/send/m.room.message/t1`, { msgtype: "m.text", body: "secret plans" }, bob.access_token);
    const r = await call("GET", `${V1[0]}/rooms/${beta}/messages?dir=b&limit=5`);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json.chunk[0]).toMatchObject({ type: "m.room.message", content: { body: "secret plans" }, sender: bob.user_id });
    expect(typeof r.json.start).toBe("string");
    const f = await call("GET", `${V1[0]}/rooms/${beta}/messages?dir=f&limit=100`);
    expect(f.json.chunk[0].type).toBe("m.room.create");
    expect(f.json.chunk.at(-1).content.body).toBe("secret plans");
    // The client API still refuses the admin: they are not in the room.
    expect((await call("GET", `/_matrix/client/v3/rooms/${beta}/messages?dir=b`)).status).toBe(403);
    expect((await call("GET", `${V1[0]}/rooms/${beta}/messages?dir=sideways`)).status).toBe(400);
    expect((await call("GET", `${V1[0]}/rooms/${beta}/messages?from=garbage`)).status).toBe(400);
  });

  it("joins a local user to a public room directly and to a private one through the admin's invite", async () => {
    const carol = await registerUser(t, "carol");
    const pub = await call("POST", `${V1[0]}/join/%23alpha:weft.test`, { user_id: carol.user_id });
    expect(pub.status, JSON.stringify(pub.json)).toBe(200);
    expect(pub.json).toEqual({ room_id: alpha });
    expect((await call("GET", `/_matrix/client/v3/joined_rooms`, undefined, carol.access_token)).json.joined_rooms).toEqual([alpha]);

    // beta is invite-only and the admin is not in it.
    const refused = await call("POST", `${V1[1]}/join/${beta}`, { user_id: carol.user_id });
    expect(refused.status).toBe(403);
    expect(refused.json.errcode).toBe("M_FORBIDDEN");
    await call("POST", `/_matrix/client/v3/rooms/${beta}/invite`, { user_id: admin.user_id }, bob.access_token);
    await call("POST", `/_matrix/client/v3/join/${beta}`, {}, admin.access_token);
    const priv = await call("POST", `${V1[1]}/join/${beta}`, { user_id: carol.user_id });
    expect(priv.status, JSON.stringify(priv.json)).toBe(200);
    const members = await call("GET", `${V1[0]}/rooms/${beta}/members`);
    expect(members.json.members).toContain(carol.user_id);

    const cases: [string, unknown, number, string][] = [
      [beta, {}, 400, "M_MISSING_PARAM"],
      [beta, { user_id: 7 }, 400, "M_INVALID_PARAM"],
      [beta, { user_id: "@x:elsewhere.test" }, 400, "M_INVALID_PARAM"],
      [beta, { user_id: "@ghost:weft.test" }, 404, "M_NOT_FOUND"],
      ["not-a-room", { user_id: carol.user_id }, 400, "M_INVALID_PARAM"],
      ["%23missing:weft.test", { user_id: carol.user_id }, 404, "M_NOT_FOUND"],
    ];
    for (const [room, body, status, errcode] of cases) {
      const r = await call("POST", `${V1[0]}/join/${room}`, body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.json.errcode).toBe(errcode);
    }
  });

  it("blocks a room (even one unknown here): local joins and invites are refused until unblocked", async () => {
    const gamma = (await call("POST", "/_matrix/client/v3/createRoom", { preset: "public_chat" }, alice.access_token)).json.room_id;
    expect((await call("PUT", `${V1[0]}/rooms/${gamma}/block`, { block: true })).json).toEqual({ block: true });
    expect((await call("GET", `${V1[1]}/rooms/${gamma}/block`)).json).toEqual({ block: true, user_id: admin.user_id });
    const join = await call("POST", `/_matrix/client/v3/join/${gamma}`, {}, bob.access_token);
    expect(join.status).toBe(403);
    expect(join.json.errcode).toBe("M_FORBIDDEN");
    const invite = await call("POST", `/_matrix/client/v3/rooms/${gamma}/invite`, { user_id: bob.user_id }, alice.access_token);
    expect(invite.status).toBe(403);
    expect((await call("GET", `${V1[0]}/rooms/${gamma}/members`)).json.members).toEqual([alice.user_id]);

    expect((await call("PUT", `${V1[0]}/rooms/${gamma}/block`, { block: false })).json).toEqual({ block: false });
    expect((await call("POST", `/_matrix/client/v3/join/${gamma}`, {}, bob.access_token)).status).toBe(200);

    expect((await call("PUT", `${V1[0]}/rooms/!unknown:elsewhere.test/block`, { block: true })).status).toBe(200);
    expect((await call("PUT", `${V1[0]}/rooms/${gamma}/block`, { block: "yes" })).status).toBe(400);
    expect((await call("PUT", `${V1[0]}/rooms/${gamma}/block`, {})).json.errcode).toBe("M_MISSING_PARAM");
    expect((await call("PUT", `${V1[0]}/rooms/bad/block`, { block: true })).json.errcode).toBe("M_INVALID_PARAM");
  });

  it("deletes a room: members moved to a notice room with the aliases, the room purged and blocked", async () => {
    const bad = await call("DELETE", `${V2[0]}/rooms/${alpha}`, { purge: "yes" });
    expect(bad.status).toBe(400);
    expect(bad.json.errcode).toBe("M_BAD_JSON");
    expect((await call("DELETE", `${V2[0]}/rooms/${alpha}`, { new_room_user_id: "@ghost:weft.test" })).status).toBe(404);
    expect((await call("DELETE", `${V2[0]}/rooms/!gone:weft.test`, {})).status).toBe(404);
    expect((await call("DELETE", `${V2[0]}/rooms/nonsense`, {})).json.errcode).toBe("M_INVALID_PARAM");
    expect((await call("GET", `${V1[0]}/rooms/${alpha}`)).status).toBe(200); // nothing started

    const since = (await call("GET", "/_matrix/client/v3/sync?timeout=0", undefined, bob.access_token)).json.next_batch;
    const del = await call("DELETE", `${V2[1]}/rooms/${alpha}`, { new_room_user_id: admin.user_id, room_name: "Closed", message: "Alpha was closed.", block: true });
    expect(del.status, JSON.stringify(del.json)).toBe(200);
    const id = del.json.delete_id;
    expect(typeof id).toBe("string");

    const done = await waitFor(() => call("GET", `${V2[0]}/rooms/delete_status/${id}`), (r) => r.json.status === "complete" || r.json.status === "failed");
    expect(done.json).toMatchObject({ delete_id: id, room_id: alpha, status: "complete" });
    const result = done.json.shutdown_room;
    expect(result.kicked_users.sort()).toEqual(["@alice:weft.test", "@bob:weft.test", "@carol:weft.test"]);
    expect(result.failed_to_kick_users).toEqual([]);
    expect(result.local_aliases).toEqual(["#alpha:weft.test"]);
    const notice = result.new_room_id;
    expect(notice).toMatch(/^!/);
    expect((await call("GET", `${V2[0]}/rooms/${alpha}/delete_status`)).json.results).toEqual([done.json]);

    // Gone from the admin API and the users' rooms; the alias names the notice room.
    expect((await call("GET", `${V1[0]}/rooms/${alpha}`)).status).toBe(404);
    expect((await call("GET", `${V1[0]}/rooms`)).json.rooms.map((x: any) => x.room_id)).not.toContain(alpha);
    expect((await call("GET", `/_matrix/client/v3/joined_rooms`, undefined, bob.access_token)).json.joined_rooms).toContain(notice);
    expect((await call("GET", `/_matrix/client/v3/joined_rooms`, undefined, bob.access_token)).json.joined_rooms).not.toContain(alpha);
    expect((await call("GET", `/_matrix/client/v3/directory/room/%23alpha:weft.test`)).json.room_id).toBe(notice);
    const msgs = await call("GET", `${V1[0]}/rooms/${notice}/messages?dir=b&limit=20`);
    expect(msgs.json.chunk.some((e: any) => e.content.body === "Alpha was closed.")).toBe(true);
    expect((await call("GET", `${V1[0]}/rooms/${notice}`)).json.name).toBe("Closed");
    // Blocked: the room id cannot be joined again; sync keeps working for former members.
    expect((await call("GET", `${V1[0]}/rooms/${alpha}/block`)).json.block).toBe(true);
    expect((await call("POST", `/_matrix/client/v3/join/${alpha}`, {}, bob.access_token)).status).toBe(403);
    const sync = await call("GET", `/_matrix/client/v3/sync?timeout=0&since=${since}`, undefined, bob.access_token);
    expect(sync.status).toBe(200);
    expect((await call("GET", "/_matrix/client/v3/sync?timeout=0", undefined, bob.access_token)).status).toBe(200);
    // Nothing of the room is left in storage.
    const left = await t.hs.services.storage.sql.get<{ n: number | string }>(`SELECT COUNT(*) AS n FROM events WHERE room_id = ?`, [alpha]);
    expect(Number(left!.n)).toBe(0);

    expect((await call("GET", `${V2[0]}/rooms/delete_status/nope`)).status).toBe(404);
    expect((await call("GET", `${V2[0]}/rooms/${beta}/delete_status`)).status).toBe(404);
  });

  it("deletes without purge: the room stays, its members gone", async () => {
    const delta = (await call("POST", "/_matrix/client/v3/createRoom", { preset: "public_chat" }, alice.access_token)).json.room_id;
    const del = await call("DELETE", `${V2[0]}/rooms/${delta}`, { purge: false });
    const done = await waitFor(() => call("GET", `${V2[0]}/rooms/delete_status/${del.json.delete_id}`), (r) => r.json.status !== "active");
    expect(done.json.status).toBe("complete");
    expect(done.json.shutdown_room).toMatchObject({ kicked_users: [alice.user_id], new_room_id: null });
    const d = await call("GET", `${V1[0]}/rooms/${delta}`);
    expect(d.status).toBe(200);
    expect(d.json).toMatchObject({ joined_members: 0, forgotten: true });
  });
});
