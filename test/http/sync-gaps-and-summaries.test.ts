// /sync across gaps, and room summaries (issue 16), over HTTP on SQLite and PostgreSQL: a limited
// incremental timeline brings every state change of the gap in `state`; lazy-loaded members bring the
// timeline's senders and the members who changed in the gap (joins and leaves); current state shows in
// the timeline even under `joined` history visibility (a member who rejoins sees who joined meanwhile);
// summaries give heroes to unnamed rooms only (joined members first, then invited, at most 5), and with
// lazy loading the heroes' member events come along.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { createRoom } from "../helpers/rooms.ts";
import { registerUser, type Session } from "../helpers/users.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("sync gaps and summaries on %s", (backend) => {
  const { t, users: { alice, bob, carol, dave } } = withServer({ backend, users: ["alice", "bob", "carol", "dave"] });
  let txn = 0;

  async function fill(who: Session, roomId: string, n: number) {
    for (let i = 0; i < n; i++) {
      const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/a.made.up.filler.type/f${++txn}`, { token: who.access_token, body: { i } });
      expect(res.status).toBe(200);
    }
  }
  const join = async (who: Session, roomId: string) => expect((await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: who.access_token, body: {} })).status).toBe(200);
  const leave = async (who: Session, roomId: string) => expect((await t.call("POST", `${V3}/rooms/${enc(roomId)}/leave`, { token: who.access_token, body: {} })).status).toBe(200);
  const putState = (who: Session, roomId: string, type: string, key: string, content: unknown) =>
    t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/${enc(type)}/${enc(key)}`, { token: who.access_token, body: content });
  async function sync(who: Session, filter: unknown, since?: string) {
    const res = await t.call("GET", `${V3}/sync?filter=${enc(JSON.stringify(filter))}${since ? `&since=${enc(since)}` : ""}`, { token: who.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json;
  }
  const memberStates = (room: any) => Object.fromEntries(room.state.events.filter((e: any) => e.type === "m.room.member").map((e: any) => [e.state_key, e.content.membership]));

  it("brings every state change of the gap in a limited incremental sync, and only those", async () => {
    const filter = { room: { timeline: { types: ["a.made.up.filler.type"], limit: 1 }, state: { types: ["a.madeup.test.state"] } } };
    const roomId = await createRoom(t, alice);
    await putState(alice, roomId, "a.madeup.test.state", "this_state_changes", { my_key: 1 });
    await putState(alice, roomId, "a.madeup.test.state", "this_state_does_not_change", { my_key: 1 });
    const first = await sync(alice, filter);
    expect(first.rooms.join[roomId].state.events).toHaveLength(2);
    await putState(alice, roomId, "a.madeup.test.state", "this_state_changes", { my_key: 2 });
    await fill(alice, roomId, 20);
    const second = await sync(alice, filter, first.next_batch);
    const room = second.rooms.join[roomId];
    expect(room.timeline.limited).toBe(true);
    expect(room.state.events.map((e: any) => [e.state_key, e.content.my_key])).toEqual([["this_state_changes", 2]]);
  });

  it("with lazy-loaded members, brings the timeline's senders and the members who joined or left in the gap", async () => {
    const filter = { room: { state: { lazy_load_members: true }, timeline: { limit: 10 } } };
    const roomId = await createRoom(t, alice, { preset: "public_chat", name: "A room name" });
    await join(bob, roomId);
    await join(carol, roomId);
    await fill(bob, roomId, 10);
    const first = await sync(alice, filter);
    expect(Object.keys(memberStates(first.rooms.join[roomId])).sort()).toEqual([alice.user_id, bob.user_id].sort());

    await join(dave, roomId);
    await fill(carol, roomId, 20);
    const second = await sync(alice, filter, first.next_batch);
    expect(second.rooms.join[roomId].timeline.limited).toBe(true);
    expect(memberStates(second.rooms.join[roomId])).toEqual({ [carol.user_id]: "join", [dave.user_id]: "join" });

    await leave(dave, roomId);
    await fill(carol, roomId, 20);
    const third = await sync(alice, filter, second.next_batch);
    expect(memberStates(third.rooms.join[roomId])).toEqual({ [dave.user_id]: "leave" });
  });

  it("shows current state in the timeline under joined history visibility: a rejoining member sees who joined meanwhile", async () => {
    const syncer = await registerUser(t, `syncer${++txn}`);
    const invitee = await registerUser(t, `invitee${++txn}`);
    const roomId = await createRoom(t, alice, { preset: "private_chat" });
    await t.call("POST", `${V3}/rooms/${enc(roomId)}/invite`, { token: alice.access_token, body: { user_id: syncer.user_id } });
    await join(syncer, roomId);
    await t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.history_visibility`, { token: alice.access_token, body: { history_visibility: "joined" } });
    await t.call("POST", `${V3}/rooms/${enc(roomId)}/invite`, { token: alice.access_token, body: { user_id: invitee.user_id } });
    const first = await sync(syncer, {});
    await leave(syncer, roomId);
    await join(invitee, roomId);
    await t.call("POST", `${V3}/rooms/${enc(roomId)}/invite`, { token: alice.access_token, body: { user_id: syncer.user_id } });
    await join(syncer, roomId);
    const second = await sync(syncer, {}, first.next_batch);
    const timeline = second.rooms.join[roomId].timeline.events;
    expect(timeline.some((e: any) => e.type === "m.room.member" && e.state_key === invitee.user_id && e.content.membership === "join")).toBe(true);
    // Messages sent while away stay hidden.
    expect(timeline.filter((e: any) => e.type === "m.room.message")).toEqual([]);
  });

  it("gives heroes to unnamed rooms only, joined members first, at most five; lazy loading sends their member events", async () => {
    const filter = { room: { state: { lazy_load_members: true }, timeline: { limit: 1 } } };
    const unnamed = await createRoom(t, alice, { preset: "public_chat" });
    await join(bob, unnamed);
    await join(carol, unnamed);
    await fill(alice, unnamed, 1);
    const first = await sync(alice, filter);
    const s1 = first.rooms.join[unnamed];
    expect(s1.summary).toEqual({ "m.joined_member_count": 3, "m.invited_member_count": 0, "m.heroes": [bob.user_id, carol.user_id] });
    // Bob and carol said nothing in the timeline, yet their member events come with the heroes.
    expect(Object.keys(memberStates(s1)).sort()).toEqual([alice.user_id, bob.user_id, carol.user_id].sort());
    // Later, only the new hero's member event comes (the client has the others).
    await join(dave, unnamed);
    await fill(alice, unnamed, 1);
    const s2 = (await sync(alice, filter, first.next_batch)).rooms.join[unnamed];
    expect(s2.summary["m.heroes"]).toEqual([bob.user_id, carol.user_id, dave.user_id]);
    expect(memberStates(s2)).toEqual({ [dave.user_id]: "join" });

    const named = await createRoom(t, alice, { preset: "public_chat", name: "A room name" });
    await join(bob, named);
    expect((await sync(alice, filter)).rooms.join[named].summary).toEqual({ "m.joined_member_count": 2, "m.invited_member_count": 0 });
    // An emptied name is no name.
    await t.call("PUT", `${V3}/rooms/${enc(named)}/state/m.room.name`, { token: alice.access_token, body: { name: "" } });
    expect((await sync(alice, filter)).rooms.join[named].summary["m.heroes"]).toEqual([bob.user_id]);

    const crowded = await createRoom(t, alice, { preset: "public_chat" });
    const others = [];
    for (let i = 0; i < 6; i++) others.push(await registerUser(t, `hero${i}x${txn}`));
    await t.call("POST", `${V3}/rooms/${enc(crowded)}/invite`, { token: alice.access_token, body: { user_id: bob.user_id } });
    for (const u of others) await join(u, crowded);
    const summary = (await sync(alice, filter)).rooms.join[crowded].summary;
    expect(summary["m.joined_member_count"]).toBe(7);
    expect(summary["m.invited_member_count"]).toBe(1);
    // Joined members (in join order) before the invited bob, five at most.
    expect(summary["m.heroes"]).toEqual(others.slice(0, 5).map((u) => u.user_id));
  });
});
