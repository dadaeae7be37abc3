// /sync details two mature conformance suites check (issue 34), over HTTP on SQLite and PostgreSQL: a room
// joined since the last sync is `limited` unless its timeline shows every visible event, and brings its
// members' presence once; a filtered timeline is `limited` only when events the filter matches were left
// out (its gap's state still comes along); a room joined and left within one batch comes in `leave` with
// its full state; lazy-loaded members: `include_redundant_members` sends the senders' memberships again
// (not the user's own), without it exactly the senders' memberships not yet sent.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import type { Session } from "../helpers/users.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("sync details (conformance) on %s", (backend) => {
  const { t, users: { alice, bob, carol, dave } } = withServer({ backend, users: ["alice", "bob", "carol", "dave"] });
  let txn = 0;

  async function sync(who: Session, filter: unknown, since?: string) {
    const res = await t.call("GET", `${V3}/sync?filter=${enc(JSON.stringify(filter))}${since ? `&since=${enc(since)}` : ""}`, { token: who.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "GET", `${V3}/sync`);
    return res.json;
  }
  async function send(who: Session, roomId: string, type = "m.room.message", content: Record<string, unknown> = { msgtype: "m.text", body: "hello" }) {
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/${enc(type)}/c${++txn}`, { token: who.access_token, body: content });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  }
  async function putState(who: Session, roomId: string, type: string, content: unknown, key = "") {
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/${enc(type)}/${enc(key)}`, { token: who.access_token, body: content });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  }
  const post = async (who: Session, path: string, body: unknown = {}) => {
    const res = await t.call("POST", `${V3}${path}`, { token: who.access_token, body });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
  };
  const presenceOf = (body: any) => (body.presence?.events ?? []).map((e: any) => e.sender).sort();
  const members = (room: any) => (room?.state.events ?? []).filter((e: any) => e.type === "m.room.member").map((e: any) => e.state_key).sort();

  it("a room joined since the last sync: limited unless every visible event is shown, with its members' presence once", async () => {
    const messagesOnly = { room: { timeline: { types: ["m.room.message"], limit: 10 }, state: { types: [] } } };
    const roomId = await createRoom(t, alice, { preset: "public_chat" });
    expect((await t.call("PUT", `${V3}/presence/${enc(alice.user_id)}/status`, { token: alice.access_token, body: { presence: "online", status_msg: "here" } })).status).toBe(200);
    for (let i = 0; i < 4; i++) await send(alice, roomId);
    const before = await sync(bob, messagesOnly);
    const aliceBefore = await sync(alice, {});
    for (let i = 0; i < 4; i++) await send(alice, roomId);
    await post(bob, `/join/${enc(roomId)}`);

    // Every message fits, but the room's state events (and bob's join) were left out by the filter: the
    // client, new to the room, has not seen the whole room.
    const joined = await sync(bob, messagesOnly, before.next_batch);
    const timeline = joined.rooms.join[roomId].timeline;
    expect(timeline.events.map((e: any) => e.type)).toEqual(Array(8).fill("m.room.message"));
    expect(timeline.limited).toBe(true);
    // Alice's presence comes along although it did not change since bob's last sync.
    const alicePresence = joined.presence.events.filter((e: any) => e.sender !== bob.user_id);
    expect(alicePresence).toHaveLength(1);
    expect(alicePresence[0]).toMatchObject({ type: "m.presence", sender: alice.user_id, content: { presence: "online", status_msg: "here" } });
    // Once only.
    const again = await sync(bob, messagesOnly, joined.next_batch);
    expect(presenceOf(again)).toEqual([]);
    // And alice's next sync, which shows bob's join, brings bob's presence, which never changed.
    expect(presenceOf(await sync(alice, {}, aliceBefore.next_batch))).toContain(bob.user_id);

    // A room whose timeline shows every event is not limited for a newcomer either.
    const small = await createRoom(t, carol, { preset: "public_chat" });
    const daveBefore = await sync(dave, { room: { timeline: { limit: 50 } } });
    await post(dave, `/join/${enc(small)}`);
    const whole = (await sync(dave, { room: { timeline: { limit: 50 } } }, daveBefore.next_batch)).rooms.join[small].timeline;
    expect(whole.events[0].type).toBe("m.room.create");
    expect(whole.limited).toBe(false);
  });

  it("a filtered timeline that reaches its limit is limited only when matching events were left out", async () => {
    const filter = { room: { timeline: { limit: 1, types: ["m.room.message"] }, state: { types: [] } }, presence: { types: [] } };
    const roomId = await createRoom(t, alice);
    const message = await send(alice, roomId);
    for (let i = 0; i < 11; i++) await send(alice, roomId, "a.made.up.filler.type", { filler: i });
    const first = (await sync(alice, filter)).rooms.join[roomId];
    expect(first.timeline.events.map((e: any) => e.event_id)).toEqual([message]);
    expect(first.timeline.limited).toBe(false);
    expect(first.state.events).toEqual([]);

    // A second message: now one the filter matches is left out.
    const second = await send(alice, roomId);
    const room = (await sync(alice, filter)).rooms.join[roomId];
    expect(room.timeline.events.map((e: any) => e.event_id)).toEqual([second]);
    expect(room.timeline.limited).toBe(true);

    // Incremental: a state change before the only matching event still comes in `state`.
    const stateFilter = { room: { timeline: { limit: 1, types: ["m.room.message"] }, state: { types: ["a.madeup.test.state"] } } };
    const since = await sync(alice, stateFilter);
    await putState(alice, roomId, "a.madeup.test.state", { my_key: 2 });
    for (let i = 0; i < 3; i++) await send(alice, roomId, "a.made.up.filler.type", { filler: i });
    const third = await send(alice, roomId);
    const next = (await sync(alice, stateFilter, since.next_batch)).rooms.join[roomId];
    expect(next.timeline.events.map((e: any) => e.event_id)).toEqual([third]);
    expect(next.timeline.limited).toBe(false);
    expect(next.state.events.map((e: any) => [e.type, e.content.my_key])).toEqual([["a.madeup.test.state", 2]]);
  });

  it("a room joined and left within one sync batch comes in `leave` with its full state", async () => {
    const filter = {
      room: { timeline: { types: [] }, state: { types: ["a.madeup.test.state"] }, ephemeral: { types: [] }, include_leave: true },
      presence: { types: [] },
    };
    const roomId = await createRoom(t, alice);
    await putState(alice, roomId, "a.madeup.test.state", { my_key: 1 });
    await post(alice, `/rooms/${enc(roomId)}/invite`, { user_id: carol.user_id });
    const before = await sync(carol, filter);
    expect(Object.keys(before.rooms.invite)).toContain(roomId);
    await post(carol, `/join/${enc(roomId)}`);
    await post(carol, `/rooms/${enc(roomId)}/leave`);
    const after = await sync(carol, filter, before.next_batch);
    const left = after.rooms.leave[roomId];
    expect(left.state.events).toHaveLength(1);
    expect(left.state.events[0]).toMatchObject({ type: "a.madeup.test.state", state_key: "", content: { my_key: 1 } });

    // A member who was joined at the token and leaves gets only what changed, as before.
    await post(bob, `/join/${enc(await createRoom(t, alice, { preset: "public_chat" }))}`);
    const bobRoom = await createRoom(t, alice, { preset: "public_chat" });
    await putState(alice, bobRoom, "a.madeup.test.state", { my_key: 1 });
    await post(bob, `/join/${enc(bobRoom)}`);
    const joined = await sync(bob, filter);
    await post(bob, `/rooms/${enc(bobRoom)}/leave`);
    expect((await sync(bob, filter, joined.next_batch)).rooms.leave[bobRoom].state.events).toEqual([]);
  });

  it("lazy-loaded members: redundant ones again when asked (the senders', not the user's own), else only those not yet sent", async () => {
    for (const redundant of [false, true]) {
      const filter = { room: { state: { lazy_load_members: true, ...(redundant ? { include_redundant_members: true } : {}) }, timeline: { limit: 10 } } };
      const roomId = await createRoom(t, alice, { preset: "public_chat", name: "A room name" });
      await post(bob, `/join/${enc(roomId)}`);
      await post(carol, `/join/${enc(roomId)}`);
      for (let i = 0; i < 10; i++) await send(bob, roomId, "a.made.up.filler.type", { i });
      for (let i = 0; i < 5; i++) await send(carol, roomId, "a.made.up.filler.type", { i });
      const first = await sync(alice, filter);
      expect(members(first.rooms.join[roomId])).toEqual([alice.user_id, bob.user_id, carol.user_id].sort());
      await send(bob, roomId);
      await send(carol, roomId);
      const second = await sync(alice, filter, first.next_batch);
      expect(members(second.rooms.join[roomId]), `include_redundant_members: ${redundant}`).toEqual(redundant ? [bob.user_id, carol.user_id].sort() : []);

      // A sender whose join is in the timeline needs no membership in state; the others' are sent again
      // only when asked.
      await post(dave, `/join/${enc(roomId)}`);
      await send(dave, roomId);
      await send(bob, roomId);
      const third = await sync(alice, filter, second.next_batch);
      expect(members(third.rooms.join[roomId])).toEqual(redundant ? [bob.user_id] : []);
    }
  });
});
