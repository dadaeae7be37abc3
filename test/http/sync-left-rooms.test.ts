// Left rooms in /sync over HTTP on SQLite and PostgreSQL: a leave made since the token shows in an
// incremental sync even when the room was forgotten right after (never in an initial one), and an invite
// declined after everyone here left the room is a leave of the room's own timeline, shown in rooms.leave.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import type { Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const INCLUDE_LEAVE = enc(JSON.stringify({ room: { include_leave: true } }));

describe.each(backends())("left rooms in /sync on %s", (backend) => {
  const { t, users: { alice, bob } } = withServer({ backend, users: ["alice", "bob"] });

  async function post(who: Session, path: string, body: Record<string, unknown> = {}) {
    const res = await t.call("POST", path, { token: who.access_token, body });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json;
  }

  async function sync(who: Session, since?: string): Promise<any> {
    const p = `${V3}/sync?timeout=0&filter=${INCLUDE_LEAVE}${since ? `&since=${enc(since)}` : ""}`;
    const res = await t.call("GET", p, { token: who.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "GET", `${V3}/sync`);
    return res.json;
  }

  it("a leave since the token shows in an incremental sync even once the room is forgotten; an initial sync leaves it out", async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat" });
    await post(bob, `${V3}/join/${enc(roomId)}`);
    const before = (await sync(bob)).next_batch;
    await post(bob, `${V3}/rooms/${enc(roomId)}/leave`);
    await post(bob, `${V3}/rooms/${enc(roomId)}/forget`);
    await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/f1`, { token: alice.access_token, body: { msgtype: "m.text", body: "after" } });

    const incremental = await sync(bob, before);
    const left = incremental.rooms.leave[roomId];
    expect(left, JSON.stringify(incremental.rooms)).toBeDefined();
    const own = left.timeline.events.filter((e: any) => e.type === "m.room.member" && e.state_key === bob.user_id);
    expect(own.map((e: any) => e.content.membership)).toEqual(["leave"]);
    // Nothing after the leave reaches the user who left.
    expect(left.timeline.events.some((e: any) => e.content.body === "after")).toBe(false);

    expect((await sync(bob)).rooms.leave[roomId]).toBeUndefined();
    expect((await sync(bob, incremental.next_batch)).rooms.leave[roomId]).toBeUndefined();
  });

  it("an invite declined after the inviter left, leaving the room without members here, is a leave in the room's timeline", async () => {
    const roomId = await createRoom(t, alice, { preset: "private_chat" });
    await post(alice, `${V3}/rooms/${enc(roomId)}/invite`, { user_id: bob.user_id });
    const invited = await sync(bob);
    expect(invited.rooms.invite[roomId]).toBeDefined();
    await post(alice, `${V3}/rooms/${enc(roomId)}/leave`);
    await post(bob, `${V3}/rooms/${enc(roomId)}/leave`);

    const res = await sync(bob, invited.next_batch);
    const events = res.rooms.leave[roomId]?.timeline.events ?? [];
    const decline = events.find((e: any) => e.type === "m.room.member" && e.state_key === bob.user_id);
    expect(decline?.content.membership, JSON.stringify(res.rooms)).toBe("leave");
    // Made in the room's DAG (the invite before it), not out of band.
    const stored = await t.hs.services.rooms.events.get(decline.event_id);
    expect(stored?.outlier).toBe(false);
    expect(stored?.replacesState).toBe((await t.hs.services.rooms.events.get(decline.unsigned.replaces_state))?.eventId);
    expect((await t.hs.services.rooms.store.membership(roomId, bob.user_id))?.membership).toBe("leave");
    // The invite is gone from later syncs.
    expect((await sync(bob, res.next_batch)).rooms.invite[roomId]).toBeUndefined();
  });
});
