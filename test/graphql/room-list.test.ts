// The GraphQL roomList subscription (simplified sliding sync's engine) on SQLite and PostgreSQL: the first
// update holds every list's window in activity order with each room's data (typed: name, heroes, counts,
// unread, timeline and required state as Events); later updates move a room up the window when it gets a
// message and carry only that room; an invite comes with its stripped state; bad input is refused with
// the REST face's errcodes; the connection is forgotten when the subscription ends.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { errcode, subscribe, wsClient } from "./client.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

const ROOM_LIST = `subscription ($lists: [RoomListInput!]!, $subscriptions: [RoomSubscriptionInput!]) {
  roomList(lists: $lists, subscriptions: $subscriptions) {
    lists { key count windows { start end roomIds } }
    rooms {
      roomId initial name avatar isDm joinedCount invitedCount bumpStamp limited prevBatch numLive expandedTimeline
      heroes { userId displayName }
      unread { notifications highlights }
      timeline { eventId type sender body }
      requiredState { type stateKey sender }
      inviteState { type stateKey sender content }
    }
  }
}`;

describe.each(backends())("GraphQL roomList on %s", (backend) => {
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

  const send = async (who: Session, roomId: string, body: string) => {
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/g${++txn}`, { token: who.access_token, body: { msgtype: "m.text", body } });
    expect(res.status).toBe(200);
    return res.json.event_id as string;
  };

  it("a sorted, windowed list with typed rooms, then live changes with only the rooms that changed", async () => {
    const named = await createRoom(t, alice, { name: "Named", preset: "public_chat" });
    const unnamed = await createRoom(t, alice, { preset: "public_chat" });
    for (const id of [named, unnamed]) expect((await t.call("POST", `${V3}/join/${enc(id)}`, { token: bob.access_token, body: {} })).status).toBe(200);
    await send(alice, named, "n1");
    await send(alice, unnamed, "u1");
    const c = wsClient(t, { authorization: `Bearer ${bob.access_token}` });
    try {
      const sub = subscribe(c, ROOM_LIST, {
        lists: [{ key: "all", ranges: [{ start: 0, end: 9 }], timelineLimit: 2, requiredState: [{ type: "m.room.create", stateKey: "" }, { type: "m.room.member", stateKey: "$ME" }] }],
      });
      await sub.until(1);
      expect(sub.error).toBeUndefined();
      const first = sub.results[0].data.roomList;
      expect(first.lists).toEqual([{ key: "all", count: 2, windows: [{ start: 0, end: 9, roomIds: [unnamed, named] }] }]);
      const byId = new Map(first.rooms.map((r: any) => [r.roomId, r]));
      const n: any = byId.get(named);
      const u: any = byId.get(unnamed);
      expect([n.initial, n.name, n.heroes, n.joinedCount, n.invitedCount, n.isDm]).toEqual([true, "Named", null, 2, 0, false]);
      expect(u.name).toBeNull();
      expect(u.heroes.map((h: any) => [h.userId, h.displayName])).toEqual([[alice.user_id, "alice"]]);
      expect(u.unread).toEqual({ notifications: 1, highlights: 0 });
      expect(u.timeline.length).toBe(2);
      expect(u.timeline.at(-1)).toMatchObject({ type: "m.room.message", sender: alice.user_id, body: "u1" });
      expect([u.limited, u.numLive, typeof u.prevBatch, typeof u.bumpStamp]).toEqual([true, 0, "string", "number"]);
      expect(u.requiredState.map((e: any) => [e.type, e.stateKey]).sort()).toEqual([["m.room.create", ""], ["m.room.member", bob.user_id]]);

      // A message in `named`: it moves to the top, and only it is in the update, not initial.
      const eventId = await send(alice, named, "n2");
      await sub.until(2);
      const second = sub.results[1].data.roomList;
      expect(second.lists[0].windows[0].roomIds).toEqual([named, unnamed]);
      expect(second.rooms.map((r: any) => r.roomId)).toEqual([named]);
      const r = second.rooms[0];
      expect([r.initial, r.name, r.numLive, r.limited]).toEqual([false, null, 1, false]);
      expect(r.timeline.map((e: any) => e.eventId)).toEqual([eventId]);
      expect(r.unread).toEqual({ notifications: 2, highlights: 0 });

      // An invite enters the list with its stripped state.
      const invite = await createRoom(t, alice, { name: "Come in", invite: [bob.user_id] });
      await sub.until(3);
      const third = sub.results[2].data.roomList;
      expect(third.lists[0].count).toBe(3);
      expect(third.lists[0].windows[0].roomIds[0]).toBe(invite);
      const inv = third.rooms.find((x: any) => x.roomId === invite);
      expect(inv.inviteState.map((e: any) => e.type)).toEqual(expect.arrayContaining(["m.room.create", "m.room.name", "m.room.member"]));
      expect(inv.timeline).toEqual([]);
      const conns = (t.hs.services.sync.sliding as unknown as { connections: { size: number } }).connections;
      const held = conns.size;
      expect(held).toBeGreaterThan(0);
      sub.stop();
      // The subscription's connection is dropped with it.
      await new Promise<void>((resolve, reject) => {
        const deadline = Date.now() + 5000;
        const check = () => (conns.size < held ? resolve() : Date.now() > deadline ? reject(new Error("connection still held")) : setImmediate(check));
        check();
      });
    } finally {
      await c.dispose();
    }
  });

  it("bad input gets the REST face's errcodes", async () => {
    const c = wsClient(t, { authorization: `Bearer ${bob.access_token}` });
    try {
      for (const [lists, code] of [
        [[{ key: "a", ranges: [{ start: 5, end: 1 }], timelineLimit: 1 }], "M_INVALID_PARAM"],
        [[{ key: "a", ranges: [{ start: 0, end: 1 }], timelineLimit: 5000 }], "M_BAD_JSON"],
        [[{ key: "k".repeat(65), ranges: [], timelineLimit: 1 }], "M_BAD_JSON"],
      ] as const) {
        const sub = subscribe(c, ROOM_LIST, { lists });
        await sub.until(1);
        expect(errcode(sub.results[0])).toBe(code);
      }
    } finally {
      await c.dispose();
    }
  });
});
