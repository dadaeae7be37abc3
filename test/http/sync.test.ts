// GET /sync over HTTP on SQLite and PostgreSQL: initial and incremental syncs after each kind of change
// (message, state, membership, account data, tags), the long poll woken by a send (not by its timeout),
// limited timelines whose prev_batch continues exactly with /messages, state at the timeline start,
// lazy-loaded members, invite/knock/leave/kick/ban transitions, summaries, filters in /sync, and the
// spec's response schema.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { parkedNow, untilParked } from "../helpers/parked.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("sync on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let bob: Session;
  let carol: Session;
  let txn = 0;

  beforeAll(async () => {
    t = await startTestServer({ backend });
    alice = await registerUser(t, "alice");
    bob = await registerUser(t, "bob");
    carol = await registerUser(t, "carol");
  });
  afterAll(async () => {
    await t?.close();
  });

  async function sync(who: Session, params: Record<string, string | number | boolean> = {}, checkSpec = true) {
    const qs = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)] as [string, string])).toString();
    const path = `${V3}/sync${qs ? `?${qs}` : ""}`;
    const res = await t.call("GET", path, { token: who.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    // event_fields may leave out fields the spec's schema requires, as the client asked.
    if (checkSpec) expectMatchesSpec(res, "GET", `${V3}/sync`);
    return res.json;
  }
  async function send(who: Session, roomId: string, body = "hi", type = "m.room.message") {
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/${enc(type)}/t${++txn}`, { token: who.access_token, body: { msgtype: "m.text", body } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  }
  async function post(who: Session, path: string, body: unknown = {}) {
    const res = await t.call("POST", `${V3}${path}`, { token: who.access_token, body });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json;
  }
  async function putState(who: Session, roomId: string, type: string, content: unknown, stateKey = "") {
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/${enc(type)}/${enc(stateKey)}`, { token: who.access_token, body: content });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  }
  const join = (who: Session, roomId: string) => post(who, `/join/${enc(roomId)}`);
  const bodies = (events: any[]) => events.filter((e) => e.type === "m.room.message").map((e) => e.content.body);

  it("initial sync: joined room with timeline, state, summary; next_batch token shape", async () => {
    const roomId = await createRoom(t, alice, { name: "First" });
    await send(alice, roomId, "hello");
    const r = await sync(alice);
    expect(r.next_batch).toMatch(/^s\d+(_\d+)+$/);
    const room = r.rooms.join[roomId];
    expect(room).toBeDefined();
    expect(bodies(room.timeline.events)).toEqual(["hello"]);
    expect(room.timeline.events.every((e: any) => e.room_id === undefined)).toBe(true);
    expect(typeof room.timeline.prev_batch).toBe("string");
    // Everything fits in the default limit of 10 → the whole history, state at its start is empty.
    const all = [...room.state.events, ...room.timeline.events];
    expect(all.map((e: any) => e.type)).toEqual(expect.arrayContaining(["m.room.create", "m.room.member", "m.room.power_levels", "m.room.name"]));
    expect(room.summary["m.joined_member_count"]).toBe(1);
    expect(room.summary["m.invited_member_count"]).toBe(0);
    // Alice's own messages never count for her.
    expect(room.unread_notifications).toEqual({ notification_count: 0, highlight_count: 0 });
    expect(room.ephemeral).toEqual({ events: [] });
  });

  it("incremental sync after a message, a state change and nothing", async () => {
    const roomId = await createRoom(t, alice);
    const first = await sync(alice);
    await send(alice, roomId, "m1");
    const second = await sync(alice, { since: first.next_batch });
    expect(bodies(second.rooms.join[roomId].timeline.events)).toEqual(["m1"]);
    expect(second.rooms.join[roomId].timeline.limited).toBe(false);
    expect(second.rooms.join[roomId].state.events).toEqual([]);
    await putState(alice, roomId, "m.room.topic", { topic: "new topic" });
    const third = await sync(alice, { since: second.next_batch });
    const tl = third.rooms.join[roomId].timeline.events;
    expect(tl).toHaveLength(1);
    expect(tl[0]).toMatchObject({ type: "m.room.topic", state_key: "", content: { topic: "new topic" } });
    // Nothing new: an empty answer (after a zero timeout) with a usable token.
    const fourth = await sync(alice, { since: third.next_batch, timeout: 0 });
    expect(fourth.rooms?.join).toBeUndefined(); // an empty section is left out, as Synapse
    expect(fourth.next_batch).toBe(third.next_batch);
  });

  it("long poll: returns at once on a send, well before its timeout; at once when something is pending", async () => {
    const roomId = await createRoom(t, alice);
    const base = await sync(alice);
    const started = Date.now();
    const parked = parkedNow(t);
    const pending = sync(alice, { since: base.next_batch, timeout: 30000 });
    await untilParked(t, parked + 1);
    await send(alice, roomId, "wake up");
    const r = await pending;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(bodies(r.rooms.join[roomId].timeline.events)).toEqual(["wake up"]);
    // Already pending at the time of the request: no wait at all.
    const again = Date.now();
    const r2 = await sync(alice, { since: base.next_batch, timeout: 30000 });
    expect(Date.now() - again).toBeLessThan(5000);
    expect(bodies(r2.rooms.join[roomId].timeline.events)).toEqual(["wake up"]);
    // A change in a room the user is not in does not end the poll; the timeout does.
    const other = await createRoom(t, bob);
    const quiet = sync(alice, { since: r.next_batch, timeout: 600 });
    await send(bob, other, "not for alice");
    const q = await quiet;
    expect(q.rooms?.join).toBeUndefined();
  });

  it("long poll from the current position: woken by an invite, by a message to the device; at its timeout the usual answer", async () => {
    const roomId = await createRoom(t, bob);
    const now = (await sync(carol)).next_batch as string;
    // Nothing new: it waits (parked), and its answer at the timeout is a full incremental one.
    const parked = parkedNow(t);
    const quiet = sync(carol, { since: now, timeout: 400 });
    await untilParked(t, parked + 1);
    const q = await quiet;
    expect(q.next_batch).toBe(now);
    expect(q.rooms?.join).toBeUndefined();
    expect(q.device_one_time_keys_count).toMatchObject({ signed_curve25519: 0 });
    // An invite into a room the user is not in yet wakes it.
    const invited = sync(carol, { since: now, timeout: 30000 });
    await untilParked(t, parked + 1);
    const started = Date.now();
    await post(bob, `/rooms/${enc(roomId)}/invite`, { user_id: carol.user_id });
    const r = await invited;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(Object.keys(r.rooms.invite)).toEqual([roomId]);
    // So does a message to one of the user's devices.
    const toDevice = sync(carol, { since: r.next_batch, timeout: 30000 });
    await untilParked(t, parked + 1);
    const res = await t.call("PUT", `${V3}/sendToDevice/m.test/td${++txn}`, { token: bob.access_token, body: { messages: { [carol.user_id]: { [carol.device_id]: { n: 1 } } } } });
    expect(res.status).toBe(200);
    const d = await toDevice;
    expect(d.to_device.events).toEqual([{ type: "m.test", sender: bob.user_id, content: { n: 1 } }]);
  });

  it("limited timeline: prev_batch continues exactly with /messages; state is at the timeline start", async () => {
    const roomId = await createRoom(t, alice);
    const base = await sync(alice);
    const sent: string[] = [];
    for (let i = 0; i < 8; i++) sent.push(await send(alice, roomId, `n${i}`));
    await putState(alice, roomId, "m.room.topic", { topic: "early" });
    for (let i = 8; i < 15; i++) sent.push(await send(alice, roomId, `n${i}`));
    const filter = JSON.stringify({ room: { timeline: { limit: 5 } } });
    const r = await sync(alice, { since: base.next_batch, filter });
    const room = r.rooms.join[roomId];
    expect(room.timeline.limited).toBe(true);
    expect(bodies(room.timeline.events)).toEqual(["n10", "n11", "n12", "n13", "n14"]);
    // The topic changed inside the gap: it is in state (the state at the start of the timeline).
    expect(room.state.events.map((e: any) => e.type)).toEqual(["m.room.topic"]);
    const page = await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=5&from=${enc(room.timeline.prev_batch)}`, { token: alice.access_token });
    expect(page.status).toBe(200);
    // Five events just before the timeline: n9, n8, the topic, n7, n6.
    expect(page.json.chunk.map((e: any) => e.event_id)).toEqual([sent[9], sent[8], expect.any(String), sent[7], sent[6]]);
    expect(page.json.chunk[2].type).toBe("m.room.topic");
    // Initial sync with the default limit (10): limited, the rest before prev_batch.
    const init = await sync(alice, { filter: JSON.stringify({ room: { rooms: [roomId] } }) });
    const ir = init.rooms.join[roomId];
    expect(ir.timeline.events).toHaveLength(10);
    expect(ir.timeline.limited).toBe(true);
    expect(Object.keys(init.rooms.join)).toEqual([roomId]);
    const before = await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=100&from=${enc(ir.timeline.prev_batch)}`, { token: alice.access_token });
    const allIds = [...before.json.chunk.map((e: any) => e.event_id).reverse(), ...ir.timeline.events.map((e: any) => e.event_id)];
    const everything = await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=100`, { token: alice.access_token });
    expect(allIds).toEqual(everything.json.chunk.map((e: any) => e.event_id).reverse());
    // The state of the initial sync is the state before the first timeline event (no timeline event repeated).
    const timelineIds = new Set(ir.timeline.events.map((e: any) => e.event_id));
    expect(ir.state.events.some((e: any) => timelineIds.has(e.event_id))).toBe(false);
    expect(ir.state.events.map((e: any) => e.type)).toEqual(expect.arrayContaining(["m.room.create", "m.room.power_levels", "m.room.member"]));
    // prev_batch of an incremental sync is also accepted by /messages as a from token (s<pos>_... tokens too).
    const withNext = await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=1&from=${enc(r.next_batch)}`, { token: alice.access_token });
    expect(bodies(withNext.json.chunk)).toEqual(["n14"]);
  });

  it("membership transitions: invite (stripped state), join, kick, ban, re-invite and reject", async () => {
    const roomId = await createRoom(t, alice, { name: "Invites", preset: "private_chat" });
    const base = await sync(bob);
    await post(alice, `/rooms/${enc(roomId)}/invite`, { user_id: bob.user_id });
    const inv = await sync(bob, { since: base.next_batch, timeout: 5000 });
    const state = inv.rooms.invite[roomId].invite_state.events;
    expect(state.map((e: any) => e.type)).toEqual(expect.arrayContaining(["m.room.create", "m.room.join_rules", "m.room.name", "m.room.member"]));
    const invite = state.find((e: any) => e.type === "m.room.member" && e.state_key === bob.user_id);
    expect(invite).toMatchObject({ sender: alice.user_id, content: { membership: "invite" } });
    expect(state.find((e: any) => e.type === "m.room.member" && e.state_key === alice.user_id)).toMatchObject({ content: { membership: "join" } });
    await join(bob, roomId);
    const joined = await sync(bob, { since: inv.next_batch });
    const jr = joined.rooms.join[roomId];
    expect(jr).toBeDefined();
    expect(inv.rooms.join?.[roomId]).toBeUndefined();
    // Newly joined: full state (create event somewhere in state or timeline) and a summary.
    expect([...jr.state.events, ...jr.timeline.events].map((e: any) => e.type)).toContain("m.room.create");
    expect(jr.summary["m.joined_member_count"]).toBe(2);
    // Alice sees bob's join incrementally with a new summary.
    // Kick: bob's sync shows the room under leave with the kick in the timeline.
    await post(alice, `/rooms/${enc(roomId)}/kick`, { user_id: bob.user_id, reason: "bye" });
    const kicked = await sync(bob, { since: joined.next_batch });
    expect(kicked.rooms.join?.[roomId]).toBeUndefined();
    const left = kicked.rooms.leave[roomId];
    expect(left.timeline.events.at(-1)).toMatchObject({ type: "m.room.member", state_key: bob.user_id, sender: alice.user_id, content: { membership: "leave", reason: "bye" } });
    // Messages after the kick are not delivered to bob.
    await send(alice, roomId, "after kick");
    const quiet = await sync(bob, { since: kicked.next_batch, timeout: 0 });
    expect(quiet.rooms?.leave?.[roomId]).toBeUndefined();
    expect(quiet.rooms?.join?.[roomId]).toBeUndefined();
    // Ban.
    await post(alice, `/rooms/${enc(roomId)}/invite`, { user_id: bob.user_id });
    await join(bob, roomId);
    const rejoined = await sync(bob, { since: quiet.next_batch });
    expect(rejoined.rooms.join[roomId]).toBeDefined();
    await post(alice, `/rooms/${enc(roomId)}/ban`, { user_id: bob.user_id });
    const banned = await sync(bob, { since: rejoined.next_batch });
    expect(banned.rooms.leave[roomId].timeline.events.at(-1)).toMatchObject({ type: "m.room.member", content: { membership: "ban" } });
    // Archived rooms: in an initial sync only with include_leave.
    expect((await sync(bob)).rooms?.leave?.[roomId]).toBeUndefined();
    const archived = await sync(bob, { filter: JSON.stringify({ room: { include_leave: true } }) });
    expect(archived.rooms.leave[roomId].timeline.events.at(-1)).toMatchObject({ content: { membership: "ban" } });
    // Reject an invite: the room goes from invite to leave.
    const other = await createRoom(t, alice);
    const b2 = await sync(carol);
    await post(alice, `/rooms/${enc(other)}/invite`, { user_id: carol.user_id });
    const ci = await sync(carol, { since: b2.next_batch });
    expect(ci.rooms.invite[other]).toBeDefined();
    await post(carol, `/rooms/${enc(other)}/leave`);
    const cl = await sync(carol, { since: ci.next_batch });
    expect(cl.rooms.leave[other].timeline.events.at(-1)).toMatchObject({ state_key: carol.user_id, content: { membership: "leave" } });
  });

  it("knock: the room appears under rooms.knock with knock_state", async () => {
    const roomId = await createRoom(t, alice, { room_version: "10", initial_state: [{ type: "m.room.join_rules", state_key: "", content: { join_rule: "knock" } }] });
    const base = await sync(carol);
    await post(carol, `/knock/${enc(roomId)}`, {});
    const r = await sync(carol, { since: base.next_batch });
    const events = r.rooms.knock[roomId].knock_state.events;
    expect(events.find((e: any) => e.type === "m.room.join_rules").content.join_rule).toBe("knock");
    expect(events.find((e: any) => e.type === "m.room.member" && e.state_key === carol.user_id).content.membership).toBe("knock");
  });

  it("lazy-loaded members: only timeline senders and the user, and each member once per device", async () => {
    // A named room: an unnamed one also brings its heroes' member events (sync-gaps-and-summaries.test.ts).
    const roomId = await createRoom(t, alice, { preset: "public_chat", name: "named" });
    await join(bob, roomId);
    await join(carol, roomId);
    await send(bob, roomId, "from bob");
    for (let i = 0; i < 3; i++) await send(alice, roomId, `a${i}`);
    const lazy = { room: { rooms: [roomId], timeline: { limit: 3 }, state: { lazy_load_members: true } } };
    const r = await sync(alice, { filter: JSON.stringify(lazy) });
    const room = r.rooms.join[roomId];
    const members = room.state.events.filter((e: any) => e.type === "m.room.member").map((e: any) => e.state_key);
    expect(members).toEqual([alice.user_id]);
    expect(room.state.events.map((e: any) => e.type)).toContain("m.room.create");
    // Without lazy-loading every member is there.
    const full = await sync(alice, { filter: JSON.stringify({ room: { rooms: [roomId], timeline: { limit: 3 } } }) });
    expect(full.rooms.join[roomId].state.events.filter((e: any) => e.type === "m.room.member").map((e: any) => e.state_key).sort()).toEqual(
      [alice.user_id, bob.user_id, carol.user_id].sort(),
    );
    // Incremental: a message from bob brings bob's member event once; a second one does not repeat it.
    const fresh = await sync(alice, { filter: JSON.stringify(lazy) });
    await send(bob, roomId, "bob again");
    const inc = await sync(alice, { since: fresh.next_batch, filter: JSON.stringify(lazy) });
    expect(inc.rooms.join[roomId].state.events.map((e: any) => e.state_key)).toEqual([bob.user_id]);
    await send(bob, roomId, "bob thrice");
    const inc2 = await sync(alice, { since: inc.next_batch, filter: JSON.stringify(lazy) });
    expect(bodies(inc2.rooms.join[roomId].timeline.events)).toEqual(["bob thrice"]);
    expect(inc2.rooms.join[roomId].state.events).toEqual([]);
    // include_redundant_members sends it again.
    const redundant = { room: { rooms: [roomId], state: { lazy_load_members: true, include_redundant_members: true } } };
    await send(bob, roomId, "bob four");
    const inc3 = await sync(alice, { since: inc2.next_batch, filter: JSON.stringify(redundant) });
    expect(inc3.rooms.join[roomId].state.events.map((e: any) => e.state_key)).toEqual(expect.arrayContaining([bob.user_id]));
  });

  it("timeline filters (types, not_senders, contains_url), event_fields, event_format, state filter, not_rooms", async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat" });
    await join(bob, roomId);
    const base = await sync(alice);
    await send(alice, roomId, "from alice");
    await send(bob, roomId, "from bob");
    await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/u${++txn}`, { token: alice.access_token, body: { msgtype: "m.image", body: "pic", url: "mxc://x/y" } });
    const bySender = await sync(alice, { since: base.next_batch, filter: JSON.stringify({ room: { timeline: { not_senders: [bob.user_id] } } }) });
    expect(bodies(bySender.rooms.join[roomId].timeline.events)).toEqual(["from alice", "pic"]);
    const urls = await sync(alice, { since: base.next_batch, filter: JSON.stringify({ room: { timeline: { contains_url: true } } }) });
    expect(bodies(urls.rooms.join[roomId].timeline.events)).toEqual(["pic"]);
    const types = await sync(alice, { since: base.next_batch, filter: JSON.stringify({ room: { timeline: { types: ["m.room.member"] } } }) });
    expect(types.rooms?.join?.[roomId]).toBeUndefined();
    const fields = await sync(alice, { since: base.next_batch, filter: JSON.stringify({ event_fields: ["type", "content.body"] }) }, false);
    expect(fields.rooms.join[roomId].timeline.events[0]).toEqual({ type: "m.room.message", content: { body: "from alice" } });
    const fed = await t.call("GET", `${V3}/sync?since=${enc(base.next_batch)}&filter=${enc(JSON.stringify({ event_format: "federation" }))}`, { token: alice.access_token });
    const pdu = fed.json.rooms.join[roomId].timeline.events[0];
    expect(pdu).toHaveProperty("hashes");
    expect(pdu).toHaveProperty("auth_events");
    const stateOnly = await sync(alice, { filter: JSON.stringify({ room: { rooms: [roomId], timeline: { limit: 1 }, state: { types: ["m.room.create"] } } }) });
    expect(stateOnly.rooms.join[roomId].state.events.map((e: any) => e.type)).toEqual(["m.room.create"]);
    const none = await sync(alice, { since: base.next_batch, filter: JSON.stringify({ room: { not_rooms: [roomId] } }) });
    expect(none.rooms?.join?.[roomId]).toBeUndefined();
  });

  it("account data and tags arrive in sync, waking a long poll", async () => {
    const roomId = await createRoom(t, alice);
    const base = await sync(alice);
    const parked = parkedNow(t);
    const poll = sync(alice, { since: base.next_batch, timeout: 30000 });
    const started = Date.now();
    await untilParked(t, parked + 1);
    const put = await t.call("PUT", `${V3}/user/${enc(alice.user_id)}/account_data/org.example.config`, { token: alice.access_token, body: { a: 1 } });
    expect(put.status).toBe(200);
    const r = await poll;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(r.account_data.events).toEqual([{ type: "org.example.config", content: { a: 1 } }]);
    await t.call("PUT", `${V3}/user/${enc(alice.user_id)}/rooms/${enc(roomId)}/account_data/org.example.room`, { token: alice.access_token, body: { b: 2 } });
    const tag = await t.call("PUT", `${V3}/user/${enc(alice.user_id)}/rooms/${enc(roomId)}/tags/m.favourite`, { token: alice.access_token, body: { order: 0.5 } });
    expect(tag.status).toBe(200);
    const r2 = await sync(alice, { since: r.next_batch });
    expect(r2.account_data.events).toEqual([]);
    expect(r2.rooms.join[roomId].account_data.events).toEqual([
      { type: "org.example.room", content: { b: 2 } },
      { type: "m.tag", content: { tags: { "m.favourite": { order: 0.5 } } } },
    ]);
    expect(r2.rooms.join[roomId].timeline.events).toEqual([]);
    await t.call("DELETE", `${V3}/user/${enc(alice.user_id)}/rooms/${enc(roomId)}/tags/m.favourite`, { token: alice.access_token });
    const r3 = await sync(alice, { since: r2.next_batch });
    expect(r3.rooms.join[roomId].account_data.events).toEqual([{ type: "m.tag", content: { tags: {} } }]);
    // Initial sync carries all of it; an account_data filter narrows it.
    const init = await sync(alice);
    expect(init.account_data.events).toContainEqual({ type: "org.example.config", content: { a: 1 } });
    const filtered = await sync(alice, { filter: JSON.stringify({ account_data: { not_types: ["org.example.*"] } }) });
    expect(filtered.account_data.events.map((e: any) => e.type)).not.toContain("org.example.config");
  });

  it("full_state, set_presence, and bad parameters", async () => {
    const roomId = await createRoom(t, alice);
    const base = await sync(alice);
    const full = await sync(alice, { since: base.next_batch, full_state: true, set_presence: "online" });
    expect(full.rooms.join[roomId].state.events.length + full.rooms.join[roomId].timeline.events.length).toBeGreaterThan(3);
    const cases: [string, number, string][] = [
      ["since=nonsense", 400, "M_INVALID_PARAM"],
      ["timeout=abc", 400, "M_INVALID_PARAM"],
      ["set_presence=busy", 400, "M_INVALID_PARAM"],
      ["full_state=yes", 400, "M_INVALID_PARAM"],
      ["filter=" + enc("{not json"), 400, "M_NOT_JSON"],
      ["filter=" + enc(JSON.stringify({ room: { timeline: { limit: "ten" } } })), 400, "M_BAD_JSON"],
      ["filter=9999", 404, "M_NOT_FOUND"],
      ["filter=abc", 400, "M_INVALID_PARAM"],
    ];
    for (const [qs, status, errcode] of cases) {
      const res = await t.call("GET", `${V3}/sync?${qs}`, { token: alice.access_token });
      expect([qs, res.status, res.json.errcode]).toEqual([qs, status, errcode]);
    }
    expect((await t.call("GET", `${V3}/sync`)).json.errcode).toBe("M_MISSING_TOKEN");
  });
});
