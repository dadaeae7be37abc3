// Room membership over HTTP on SQLite and PostgreSQL: join (by id, by /rooms/{id}/join), leave, rejoin,
// forget, invite/kick/ban/unban with power checks, knock (v7+), restricted joins (v8+), guests, and the
// member lists (/joined_rooms, /joined_members, /members with membership, not_membership and at).
import { beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("room membership on %s", (backend) => {
  const { t, users: { alice, bob, carol, dave } } = withServer({ backend, users: ["alice", "bob", "carol", "dave"] });
  let n = 0;

  beforeAll(async () => {
    const p = `${V3}/profile/${enc(bob.user_id)}/displayname`;
    const set = await t.call("PUT", p, { token: bob.access_token, body: { displayname: "Bob B" } });
    expect(set.status, JSON.stringify(set.json)).toBe(200);
  });

  const create = (body: Record<string, unknown> = {}, who: Session = alice) => createRoom(t, who, body);

  async function post(who: Session | string, p: string, body: Record<string, unknown> = {}) {
    return t.call("POST", p, { token: typeof who === "string" ? who : who.access_token, body });
  }

  async function expectOk(res: { status: number; json: any }, method: string, p: string) {
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, method, p);
    return res.json;
  }

  function expectError(res: { status: number; json: any }, status: number, errcode: string) {
    expect([res.status, res.json?.errcode], JSON.stringify(res.json)).toEqual([status, errcode]);
  }

  async function member(roomId: string, userId: string, who: Session = alice): Promise<any> {
    const res = await t.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(userId)}`, { token: who.access_token });
    return res.status === 200 ? res.json : undefined;
  }

  async function joinedRooms(who: Session): Promise<string[]> {
    const p = `${V3}/joined_rooms`;
    return (await expectOk(await t.call("GET", p, { token: who.access_token }), "GET", p)).joined_rooms;
  }

  async function eventCount(): Promise<number> {
    return t.hs.services.db.event.count();
  }

  async function guest(): Promise<Session> {
    const res = await t.call("POST", `${V3}/register?kind=guest`, { body: {} });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json as Session;
  }

  it("joins a public room by /join/{roomIdOrAlias} and by /rooms/{roomId}/join", async () => {
    const roomId = await create({ preset: "public_chat" });
    const p1 = `${V3}/join/${enc(roomId)}`;
    expect(await expectOk(await post(bob, p1, { reason: "hello" }), "POST", p1)).toEqual({ room_id: roomId });
    expect(await member(roomId, bob.user_id)).toEqual({ membership: "join", displayname: "Bob B", reason: "hello" });
    const p2 = `${V3}/rooms/${enc(roomId)}/join`;
    expect(await expectOk(await post(carol, p2), "POST", p2)).toEqual({ room_id: roomId });
    expect((await member(roomId, carol.user_id)).membership).toBe("join");
    expect(await joinedRooms(bob)).toContain(roomId);
    expect(await joinedRooms(carol)).toContain(roomId);
    // Joining again with the same content is a no-op: no new event (other content is a new member event).
    const before = await eventCount();
    await expectOk(await post(bob, p2, { reason: "hello" }), "POST", p2);
    expect(await eventCount()).toBe(before);
    // r0 works too.
    const p3 = `/_matrix/client/r0/rooms/${enc(roomId)}/join`;
    await expectOk(await post(dave, p3), "POST", p3);
  });

  it("joins neither an unknown room nor a malformed id", async () => {
    expectError(await post(bob, `${V3}/join/${enc("!nope:weft.test")}`), 404, "M_NOT_FOUND");
    expectError(await post(bob, `${V3}/join/nope`), 400, "M_INVALID_PARAM");
  });

  it("refuses to join an invite-only room without an invite (403), and joins after one", async () => {
    const roomId = await create({ preset: "private_chat" });
    const before = await eventCount();
    expectError(await post(bob, `${V3}/join/${enc(roomId)}`), 403, "M_FORBIDDEN");
    expectError(await post(bob, `${V3}/rooms/${enc(roomId)}/join`), 403, "M_FORBIDDEN");
    expect(await eventCount()).toBe(before);
    expect(await joinedRooms(bob)).not.toContain(roomId);
    const ip = `${V3}/rooms/${enc(roomId)}/invite`;
    expect(await expectOk(await post(alice, ip, { user_id: bob.user_id, reason: "come" }), "POST", ip)).toEqual({});
    expect(await member(roomId, bob.user_id)).toMatchObject({ membership: "invite", reason: "come", displayname: "Bob B" });
    await expectOk(await post(bob, `${V3}/join/${enc(roomId)}`), "POST", `${V3}/join/${enc(roomId)}`);
    expect((await member(roomId, bob.user_id)).membership).toBe("join");
  });

  it("refuses to leave a room one was never in (403) or that the server does not know (404), as Synapse", async () => {
    const roomId = await create({ preset: "public_chat" });
    const before = await eventCount();
    const lp = `${V3}/rooms/${enc(roomId)}/leave`;
    expectError(await post(bob, lp), 403, "M_FORBIDDEN");
    expectError(await post(bob, `${V3}/rooms/${enc("!nowhere:weft.test")}/leave`), 404, "M_NOT_FOUND");
    expect(await eventCount()).toBe(before);
    expect(await member(roomId, bob.user_id)).toBeUndefined();
    // A banned user cannot leave either (the authorization rules: ban → leave by oneself).
    await expectOk(await post(bob, `${V3}/join/${enc(roomId)}`), "POST", `${V3}/join/${enc(roomId)}`);
    expect((await post(alice, `${V3}/rooms/${enc(roomId)}/ban`, { user_id: bob.user_id })).status).toBe(200);
    expectError(await post(bob, lp), 403, "M_FORBIDDEN");
    expect((await member(roomId, bob.user_id)).membership).toBe("ban");
    // Forgetting a room one was never in is accepted and does nothing (Synapse and Tuwunel answer 200;
    // the spec lists only 400, for a room not yet left).
    const other = await create({ preset: "public_chat" });
    expect(await expectOk(await post(bob, `${V3}/rooms/${enc(other)}/forget`), "POST", `${V3}/rooms/${enc(other)}/forget`)).toEqual({});
    expect(await t.hs.services.rooms.store.membership(other, bob.user_id)).toBeUndefined();
  });

  it("leaves, rejoins a public room, and forgets only after leaving", async () => {
    const roomId = await create({ preset: "public_chat" });
    await expectOk(await post(bob, `${V3}/join/${enc(roomId)}`), "POST", `${V3}/join/${enc(roomId)}`);
    const fp = `${V3}/rooms/${enc(roomId)}/forget`;
    expectError(await post(bob, fp), 400, "M_UNKNOWN");
    const lp = `${V3}/rooms/${enc(roomId)}/leave`;
    expect(await expectOk(await post(bob, lp, { reason: "bye" }), "POST", lp)).toEqual({});
    expect(await member(roomId, bob.user_id)).toEqual({ membership: "leave", reason: "bye" });
    expect(await joinedRooms(bob)).not.toContain(roomId);
    // Leaving again changes nothing.
    const before = await eventCount();
    await expectOk(await post(bob, lp), "POST", lp);
    expect(await eventCount()).toBe(before);
    // Rejoin.
    await expectOk(await post(bob, `${V3}/rooms/${enc(roomId)}/join`), "POST", `${V3}/rooms/${enc(roomId)}/join`);
    expect(await joinedRooms(bob)).toContain(roomId);
    expectError(await post(bob, fp), 400, "M_UNKNOWN");
    await expectOk(await post(bob, lp), "POST", lp);
    expect(await expectOk(await post(bob, fp), "POST", fp)).toEqual({});
    expect((await t.hs.services.rooms.store.membership(roomId, bob.user_id))?.forgotten).toBe(true);
    expect(await joinedRooms(bob)).not.toContain(roomId);
    // A forgotten room's history is no longer readable.
    expectError(await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b`, { token: bob.access_token }), 403, "M_FORBIDDEN");
    // Joining again clears the forgotten flag.
    await expectOk(await post(bob, `${V3}/join/${enc(roomId)}`), "POST", `${V3}/join/${enc(roomId)}`);
    expect((await t.hs.services.rooms.store.membership(roomId, bob.user_id))?.forgotten).toBe(false);
  });

  it("forgetting a room one was never in is a no-op", async () => {
    const roomId = await create({ preset: "public_chat" });
    const fp = `${V3}/rooms/${enc(roomId)}/forget`;
    expect(await expectOk(await post(dave, fp), "POST", fp)).toEqual({});
    expect(await t.hs.services.rooms.store.membership(roomId, dave.user_id)).toBeUndefined();
  });

  it("invite, kick, ban and unban follow the power levels", async () => {
    const roomId = await create({ preset: "public_chat" });
    const r = (x: string) => `${V3}/rooms/${enc(roomId)}/${x}`;
    for (const u of [bob, carol]) await expectOk(await post(u, `${V3}/join/${enc(roomId)}`), "POST", `${V3}/join/${enc(roomId)}`);

    // bob (level 0) may not invite to a public room (invite 50, as in Synapse), kick or ban (50).
    const before = await eventCount();
    expectError(await post(bob, r("invite"), { user_id: dave.user_id }), 403, "M_FORBIDDEN");
    expectError(await post(bob, r("kick"), { user_id: carol.user_id }), 403, "M_FORBIDDEN");
    expectError(await post(bob, r("ban"), { user_id: carol.user_id }), 403, "M_FORBIDDEN");
    expect(await eventCount()).toBe(before);
    expect((await member(roomId, carol.user_id)).membership).toBe("join");

    // alice invites dave.
    await expectOk(await post(alice, r("invite"), { user_id: dave.user_id }), "POST", r("invite"));
    expect((await member(roomId, dave.user_id)).membership).toBe("invite");
    const before2 = await eventCount();
    // Inviting someone already joined, or an unknown user, is refused.
    expectError(await post(alice, r("invite"), { user_id: carol.user_id }), 403, "M_FORBIDDEN");
    expectError(await post(alice, r("invite"), { user_id: "@nobody:weft.test" }), 404, "M_NOT_FOUND");
    expectError(await post(alice, r("invite"), {}), 400, "M_MISSING_PARAM");
    expectError(await post(alice, r("invite"), { user_id: 5 }), 400, "M_BAD_JSON");
    expectError(await post(alice, r("kick"), { user_id: "@dave:weft.test", reason: 5 }), 400, "M_BAD_JSON");
    expect(await eventCount()).toBe(before2);

    // alice (100) kicks carol with a reason; kicking the uninvited fails.
    expect(await expectOk(await post(alice, r("kick"), { user_id: carol.user_id, reason: "spam" }), "POST", r("kick"))).toEqual({});
    const kicked = await t.call("GET", `${r("state/m.room.member")}/${enc(carol.user_id)}?format=event`, { token: alice.access_token });
    expect(kicked.json).toMatchObject({ sender: alice.user_id, state_key: carol.user_id, content: { membership: "leave", reason: "spam" } });
    expectError(await post(alice, r("kick"), { user_id: carol.user_id }), 403, "M_FORBIDDEN");
    // A kicked user may rejoin a public room.
    await expectOk(await post(carol, r("join")), "POST", r("join"));

    // Ban: a banned user can join neither by invite nor directly.
    expect(await expectOk(await post(alice, r("ban"), { user_id: carol.user_id, reason: "really" }), "POST", r("ban"))).toEqual({});
    expect(await member(roomId, carol.user_id)).toEqual({ membership: "ban", reason: "really" });
    expect(await joinedRooms(carol)).not.toContain(roomId);
    const b2 = await eventCount();
    expectError(await post(carol, r("join")), 403, "M_FORBIDDEN");
    expectError(await post(carol, `${V3}/join/${enc(roomId)}`), 403, "M_FORBIDDEN");
    expectError(await post(alice, r("invite"), { user_id: carol.user_id }), 403, "M_FORBIDDEN");
    // bob may not unban; unbanning a user who is not banned fails.
    expectError(await post(bob, r("unban"), { user_id: carol.user_id }), 403, "M_FORBIDDEN");
    expectError(await post(alice, r("unban"), { user_id: bob.user_id }), 403, "M_FORBIDDEN");
    expect(await eventCount()).toBe(b2);

    expect(await expectOk(await post(alice, r("unban"), { user_id: carol.user_id }), "POST", r("unban"))).toEqual({});
    expect((await member(roomId, carol.user_id)).membership).toBe("leave");
    await expectOk(await post(carol, r("join")), "POST", r("join"));
    expect((await member(roomId, carol.user_id)).membership).toBe("join");

    // Banning a user who never was in the room works (pre-emptive ban).
    await expectOk(await post(alice, r("ban"), { user_id: "@stranger:weft.test" }), "POST", r("ban"));
    expect((await member(roomId, "@stranger:weft.test")).membership).toBe("ban");
  });

  it("in a private room any member may invite (invite 0)", async () => {
    const roomId = await create({ preset: "private_chat", invite: [bob.user_id] });
    await expectOk(await post(bob, `${V3}/join/${enc(roomId)}`), "POST", `${V3}/join/${enc(roomId)}`);
    await expectOk(await post(bob, `${V3}/rooms/${enc(roomId)}/invite`, { user_id: carol.user_id, is_direct: true }), "POST", `${V3}/rooms/${enc(roomId)}/invite`);
    expect(await member(roomId, carol.user_id)).toMatchObject({ membership: "invite", is_direct: true });
    const ev = await t.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(carol.user_id)}?format=event`, { token: alice.access_token });
    expect(ev.json.sender).toBe(bob.user_id);
  });

  it("a non-member can neither invite nor kick", async () => {
    const roomId = await create({ preset: "public_chat" });
    const before = await eventCount();
    expectError(await post(dave, `${V3}/rooms/${enc(roomId)}/invite`, { user_id: bob.user_id }), 403, "M_FORBIDDEN");
    expectError(await post(dave, `${V3}/rooms/${enc(roomId)}/kick`, { user_id: alice.user_id }), 403, "M_FORBIDDEN");
    expect(await eventCount()).toBe(before);
  });

  it.each(["1", "6"])("refuses to knock in a v%s room (403)", async (v) => {
    const roomId = await create({ room_version: v, preset: "private_chat" });
    const before = await eventCount();
    expectError(await post(bob, `${V3}/knock/${enc(roomId)}`), 403, "M_FORBIDDEN");
    expect(await eventCount()).toBe(before);
  });

  it.each(["7", "8", "9", "10", "11", "12"])("v%s: knock on a knock room, then invite, then join", async (v) => {
    const roomId = await create({ room_version: v, initial_state: [{ type: "m.room.join_rules", content: { join_rule: "knock" } }] });
    const kp = `${V3}/knock/${enc(roomId)}`;
    expect(await expectOk(await post(bob, kp, { reason: "let me in" }), "POST", kp)).toEqual({ room_id: roomId });
    expect(await member(roomId, bob.user_id)).toMatchObject({ membership: "knock", reason: "let me in" });
    // A knock is not a join.
    expectError(await post(bob, `${V3}/join/${enc(roomId)}`), 403, "M_FORBIDDEN");
    await expectOk(await post(alice, `${V3}/rooms/${enc(roomId)}/invite`, { user_id: bob.user_id }), "POST", `${V3}/rooms/${enc(roomId)}/invite`);
    expect((await member(roomId, bob.user_id)).membership).toBe("invite");
    await expectOk(await post(bob, `${V3}/join/${enc(roomId)}`), "POST", `${V3}/join/${enc(roomId)}`);
    expect((await member(roomId, bob.user_id)).membership).toBe("join");
    // Knocking on a room whose join rule is not knock is refused.
    const invOnly = await create({ room_version: v, preset: "private_chat" });
    expectError(await post(bob, `${V3}/knock/${enc(invOnly)}`), 403, "M_FORBIDDEN");
  });

  it.each(["8", "9", "10", "11", "12"])("v%s: a restricted join needs membership of an allowed room", async (v) => {
    const space = await create({ room_version: v, preset: "public_chat" });
    const roomId = await create({
      room_version: v,
      initial_state: [{ type: "m.room.join_rules", content: { join_rule: "restricted", allow: [{ type: "m.room_membership", room_id: space }] } }],
    });
    const before = await eventCount();
    expectError(await post(bob, `${V3}/join/${enc(roomId)}`), 403, "M_FORBIDDEN");
    expect(await eventCount()).toBe(before);
    await expectOk(await post(bob, `${V3}/join/${enc(space)}`), "POST", `${V3}/join/${enc(space)}`);
    await expectOk(await post(bob, `${V3}/rooms/${enc(roomId)}/join`), "POST", `${V3}/rooms/${enc(roomId)}/join`);
    const m = await member(roomId, bob.user_id);
    expect(m).toMatchObject({ membership: "join", join_authorised_via_users_server: alice.user_id });
  });

  it("a restricted join cannot be authorised by the client naming a member itself", async () => {
    const space = await create({ room_version: "10", preset: "public_chat" });
    const roomId = await create({
      room_version: "10",
      initial_state: [{ type: "m.room.join_rules", content: { join_rule: "restricted", allow: [{ type: "m.room_membership", room_id: space }] } }],
    });
    const before = await eventCount();
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(carol.user_id)}`, {
      token: carol.access_token,
      body: { membership: "join", join_authorised_via_users_server: alice.user_id },
    });
    expectError(res, 403, "M_FORBIDDEN");
    expect(await eventCount()).toBe(before);
  });

  it("v10+: knock_restricted allows knocking and restricted joins", async () => {
    const space = await create({ room_version: "10", preset: "public_chat" });
    const roomId = await create({
      room_version: "10",
      initial_state: [{ type: "m.room.join_rules", content: { join_rule: "knock_restricted", allow: [{ type: "m.room_membership", room_id: space }] } }],
    });
    await expectOk(await post(carol, `${V3}/knock/${enc(roomId)}`), "POST", `${V3}/knock/${enc(roomId)}`);
    expect((await member(roomId, carol.user_id)).membership).toBe("knock");
    expectError(await post(dave, `${V3}/join/${enc(roomId)}`), 403, "M_FORBIDDEN");
    await expectOk(await post(dave, `${V3}/join/${enc(space)}`), "POST", `${V3}/join/${enc(space)}`);
    await expectOk(await post(dave, `${V3}/join/${enc(roomId)}`), "POST", `${V3}/join/${enc(roomId)}`);
    expect(await member(roomId, dave.user_id)).toMatchObject({ membership: "join", join_authorised_via_users_server: alice.user_id });
  });

  it("guests join only rooms whose guest_access is can_join", async () => {
    const g = await guest();
    const closed = await create({ preset: "public_chat" });
    const before = await eventCount();
    expectError(await post(g.access_token, `${V3}/join/${enc(closed)}`), 403, "M_FORBIDDEN");
    expect(await eventCount()).toBe(before);
    const open = await create({ preset: "public_chat", initial_state: [{ type: "m.room.guest_access", content: { guest_access: "can_join" } }] });
    const jp = `${V3}/rooms/${enc(open)}/join`;
    await expectOk(await post(g.access_token, jp), "POST", jp);
    expect((await member(open, g.user_id)).membership).toBe("join");
    const jr = await t.call("GET", `${V3}/joined_rooms`, { token: g.access_token });
    expect(jr.json.joined_rooms).toEqual([open]);
    // A guest may not invite, knock, kick or ban (those endpoints are not open to guests).
    expectError(await post(g.access_token, `${V3}/rooms/${enc(open)}/invite`, { user_id: bob.user_id }), 403, "M_GUEST_ACCESS_FORBIDDEN");
    // ... and may leave.
    await expectOk(await post(g.access_token, `${V3}/rooms/${enc(open)}/leave`), "POST", `${V3}/rooms/${enc(open)}/leave`);
    expect((await member(open, g.user_id)).membership).toBe("leave");
  });

  it("/joined_members lists the joined members with profiles; non-members get 403", async () => {
    const roomId = await create({ preset: "public_chat" });
    await post(bob, `${V3}/join/${enc(roomId)}`);
    await post(alice, `${V3}/rooms/${enc(roomId)}/invite`, { user_id: carol.user_id });
    const p = `${V3}/rooms/${enc(roomId)}/joined_members`;
    const body = await expectOk(await t.call("GET", p, { token: bob.access_token }), "GET", p);
    // Registration gives every user a displayname (the localpart) until they set one.
    // Both fields are always there, null when unset (as Synapse).
    expect(body).toEqual({ joined: { [alice.user_id]: { display_name: "alice", avatar_url: null }, [bob.user_id]: { display_name: "Bob B", avatar_url: null } } });
    expectError(await t.call("GET", p, { token: carol.access_token }), 403, "M_FORBIDDEN");
    expectError(await t.call("GET", p, { token: dave.access_token }), 403, "M_FORBIDDEN");
  });

  it("/members filters by membership, not_membership and at", async () => {
    const roomId = await create({ preset: "public_chat" });
    const p = (q = "") => `${V3}/rooms/${enc(roomId)}/members${q}`;
    await post(bob, `${V3}/join/${enc(roomId)}`);
    // A token from before carol's invite and dave's join.
    const m = await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=1`, { token: alice.access_token });
    const at = m.json.start as string;
    await post(alice, `${V3}/rooms/${enc(roomId)}/invite`, { user_id: carol.user_id });
    await post(dave, `${V3}/join/${enc(roomId)}`);
    await post(dave, `${V3}/rooms/${enc(roomId)}/leave`);

    const list = async (q: string) => {
      const body = await expectOk(await t.call("GET", p(q), { token: bob.access_token }), "GET", p(q));
      for (const e of body.chunk) expect(e.type).toBe("m.room.member");
      return Object.fromEntries((body.chunk as any[]).map((e) => [e.state_key, e.content.membership]));
    };
    expect(await list("")).toEqual({ [alice.user_id]: "join", [bob.user_id]: "join", [carol.user_id]: "invite", [dave.user_id]: "leave" });
    expect(await list("?membership=join")).toEqual({ [alice.user_id]: "join", [bob.user_id]: "join" });
    expect(await list("?membership=invite")).toEqual({ [carol.user_id]: "invite" });
    expect(await list("?not_membership=leave")).toEqual({ [alice.user_id]: "join", [bob.user_id]: "join", [carol.user_id]: "invite" });
    expect(await list("?not_membership=join&membership=leave")).toEqual({ [dave.user_id]: "leave" });
    expect(await list(`?at=${enc(at)}`)).toEqual({ [alice.user_id]: "join", [bob.user_id]: "join" });
    // A non-member of a shared-history room may not list its members.
    const stranger = await t.call("GET", p(), { token: carol.access_token });
    expectError(stranger, 403, "M_FORBIDDEN");
    // A former member sees the members as they were when they left.
    const formerly = await t.call("GET", p(), { token: dave.access_token });
    expect(formerly.status).toBe(200);
    expect(Object.fromEntries((formerly.json.chunk as any[]).map((e) => [e.state_key, e.content.membership]))).toEqual({
      [alice.user_id]: "join", [bob.user_id]: "join", [carol.user_id]: "invite", [dave.user_id]: "leave",
    });
  });

  it("/joined_rooms lists only joined rooms", async () => {
    const [a, b] = [await create({ preset: "public_chat" }), await create({ preset: "public_chat" })];
    n++;
    const u = await registerUser(t, `joiner${n}`);
    expect(await joinedRooms(u)).toEqual([]);
    await post(u, `${V3}/join/${enc(a)}`);
    await post(u, `${V3}/join/${enc(b)}`);
    expect((await joinedRooms(u)).sort()).toEqual([a, b].sort());
    await post(u, `${V3}/rooms/${enc(b)}/leave`);
    expect(await joinedRooms(u)).toEqual([a]);
  });

  it("a per-room displayname set through the state API is kept", async () => {
    const roomId = await create({ preset: "public_chat" });
    await post(bob, `${V3}/join/${enc(roomId)}`);
    const sp = `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(bob.user_id)}`;
    const res = await t.call("PUT", sp, { token: bob.access_token, body: { membership: "join", displayname: "Bob in here" } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(await member(roomId, bob.user_id)).toEqual({ membership: "join", displayname: "Bob in here" });
    expect(res.json.event_id).toBe((await t.call("GET", `${sp}?format=event`, { token: alice.access_token })).json.event_id);
    const jm = await t.call("GET", `${V3}/rooms/${enc(roomId)}/joined_members`, { token: alice.access_token });
    expect(jm.json.joined[bob.user_id]).toEqual({ display_name: "Bob in here", avatar_url: null });
    // The same content again is a no-op.
    const before = await eventCount();
    const again = await t.call("PUT", sp, { token: bob.access_token, body: { membership: "join", displayname: "Bob in here" } });
    expect(again.json.event_id).toBe(res.json.event_id);
    expect(await eventCount()).toBe(before);
  });

  it("membership changes through the state API follow the same rules", async () => {
    const roomId = await create({ preset: "public_chat" });
    const sp = (u: string) => `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(u)}`;
    const j = await t.call("PUT", sp(bob.user_id), { token: bob.access_token, body: { membership: "join" } });
    expect(j.status, JSON.stringify(j.json)).toBe(200);
    expectMatchesSpec(j, "PUT", sp(bob.user_id));
    expect((await member(roomId, bob.user_id)).membership).toBe("join");
    // bob can't kick alice through the state API either.
    const k = await t.call("PUT", sp(alice.user_id), { token: bob.access_token, body: { membership: "leave" } });
    expectError(k, 403, "M_FORBIDDEN");
    const l = await t.call("PUT", sp(bob.user_id), { token: bob.access_token, body: { membership: "leave", reason: "done" } });
    expect(l.status, JSON.stringify(l.json)).toBe(200);
    expect(await member(roomId, bob.user_id)).toEqual({ membership: "leave", reason: "done" });
  });
});
