// GraphQL typing, receipts, presence and live sync on SQLite and PostgreSQL: the syncUpdates subscription
// receives the same message as a long-polling /sync client and, resubscribed with its last nextBatch,
// misses nothing; typing and receipts subscriptions (private receipts stay private, non-members are
// refused); setTyping, markRead (with the read marker) and setPresence / presence.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { errcode, gql, wsClient, subscribe } from "./client.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

const SYNC_UPDATES = `subscription ($since: String) {
  syncUpdates(since: $since) {
    nextBatch invitedRoomIds leftRoomIds
    joinedRooms { roomId limited prevBatch typing timeline { eventId type sender body } receipts { eventId userId receiptType threadId ts } accountData { type content } }
    presence { userId presence statusMsg currentlyActive }
    json
  }
}`;
const TYPING = `subscription ($roomId: String!) { typing(roomId: $roomId) { roomId userIds } }`;
const RECEIPTS = `subscription ($roomId: String!) { receipts(roomId: $roomId) { roomId receipts { eventId userId receiptType threadId ts } } }`;
const SET_TYPING = `mutation ($roomId: String!, $typing: Boolean!, $timeout: Int) { setTyping(roomId: $roomId, typing: $typing, timeout: $timeout) }`;
const MARK_READ = `mutation ($roomId: String!, $eventId: String!, $threadId: String, $private: Boolean, $fullyRead: Boolean) {
  markRead(roomId: $roomId, eventId: $eventId, threadId: $threadId, private: $private, fullyRead: $fullyRead)
}`;

describe.each(backends())("GraphQL typing, receipts, presence and syncUpdates on %s", (backend) => {
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

  const send = async (who: Session, roomId: string, body: string) => {
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/g${++txn}`, { token: who.access_token, body: { msgtype: "m.text", body } });
    expect(res.status).toBe(200);
    return res.json.event_id as string;
  };
  const sharedRoom = async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat" });
    await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} });
    return roomId;
  };

  it("syncUpdates delivers what a /sync client receives; resubscribing with nextBatch misses nothing", async () => {
    const roomId = await sharedRoom();
    const c = wsClient(t, { authorization: `Bearer ${alice.access_token}` });
    try {
      const base = await t.call("GET", `${V3}/sync`, { token: alice.access_token });
      const sub = subscribe(c, SYNC_UPDATES, { since: base.json.next_batch });
      const poll = t.call("GET", `${V3}/sync?since=${enc(base.json.next_batch)}&timeout=30000`, { token: alice.access_token });
      const eventId = await send(bob, roomId, "to both faces");
      const [synced] = await Promise.all([poll, sub.until(1)]);
      expect(sub.error).toBeUndefined();
      const first = sub.results[0].data.syncUpdates;
      const restIds = synced.json.rooms.join[roomId].timeline.events.map((e: any) => e.event_id);
      expect(restIds).toEqual([eventId]);
      const room = first.joinedRooms.find((r: any) => r.roomId === roomId);
      expect(room.timeline.map((e: any) => e.eventId)).toEqual(restIds);
      expect(room.timeline[0]).toEqual({ eventId, type: "m.room.message", sender: bob.user_id, body: "to both faces" });
      expect(first.json.rooms.join[roomId].timeline.events).toEqual(synced.json.rooms.join[roomId].timeline.events.map((e: any) => ({ ...e, unsigned: { ...e.unsigned, age: expect.any(Number) } })));

      // Typing, receipts and presence arrive typed.
      await gql(t, SET_TYPING, { roomId, typing: true, timeout: 30000 }, bob.access_token);
      await sub.until(2);
      expect(sub.results[1].data.syncUpdates.joinedRooms.find((r: any) => r.roomId === roomId).typing).toEqual([bob.user_id]);
      await gql(t, MARK_READ, { roomId, eventId, threadId: "main" }, bob.access_token);
      await sub.until(3);
      expect(sub.results[2].data.syncUpdates.joinedRooms.find((r: any) => r.roomId === roomId).receipts).toEqual([
        { eventId, userId: bob.user_id, receiptType: "m.read", threadId: "main", ts: expect.any(Number) },
      ]);
      const last = sub.results[2].data.syncUpdates.nextBatch;
      sub.stop();

      // Away: two messages and a typing stop. Resubscribing from the last nextBatch brings all of them.
      const m1 = await send(bob, roomId, "while away 1");
      const m2 = await send(bob, roomId, "while away 2");
      await gql(t, SET_TYPING, { roomId, typing: false }, bob.access_token);
      const again = subscribe(c, SYNC_UPDATES, { since: last });
      await again.until(1);
      const caught = again.results[0].data.syncUpdates.joinedRooms.find((r: any) => r.roomId === roomId);
      expect(caught.timeline.map((e: any) => e.eventId)).toEqual([m1, m2]);
      expect(caught.typing).toEqual([]);
      // And the /sync client agrees with the subscriber from the same token.
      const rest = await t.call("GET", `${V3}/sync?since=${enc(last)}`, { token: alice.access_token });
      expect(rest.json.rooms.join[roomId].timeline.events.map((e: any) => e.event_id)).toEqual([m1, m2]);
      // Live again after the catch-up.
      const m3 = await send(bob, roomId, "live");
      await again.until(2);
      expect(again.results[1].data.syncUpdates.joinedRooms[0].timeline.map((e: any) => e.eventId)).toEqual([m3]);
      again.stop();

      // Without since the first update is an initial sync.
      const fresh = subscribe(c, SYNC_UPDATES, {});
      await fresh.until(1);
      expect(fresh.results[0].data.syncUpdates.joinedRooms.map((r: any) => r.roomId)).toContain(roomId);
      fresh.stop();
      const bad = subscribe(c, SYNC_UPDATES, { since: "garbage" });
      await bad.until(1);
      expect(errcode(bad.results[0])).toBe("M_INVALID_PARAM");
    } finally {
      await c.dispose();
    }
  });

  it("typing subscription: current list, then changes; setTyping checks; non-members refused", async () => {
    const roomId = await sharedRoom();
    const c = wsClient(t, { authorization: `Bearer ${alice.access_token}` });
    try {
      const sub = subscribe(c, TYPING, { roomId });
      await sub.until(1);
      expect(sub.results[0].data.typing).toEqual({ roomId, userIds: [] });
      expect((await gql(t, SET_TYPING, { roomId, typing: true, timeout: 200 }, bob.access_token)).body.data.setTyping).toBe(true);
      await sub.until(2);
      expect(sub.results[1].data.typing.userIds).toEqual([bob.user_id]);
      // The 200 ms timeout expires by itself.
      await sub.until(3);
      expect(sub.results[2].data.typing.userIds).toEqual([]);
      sub.stop();
      expect(errcode((await gql(t, SET_TYPING, { roomId, typing: true }, carol.access_token)).body)).toBe("M_FORBIDDEN");
      expect(errcode((await gql(t, SET_TYPING, { roomId, typing: true, timeout: -5 }, bob.access_token)).body)).toBe("M_BAD_JSON");
    } finally {
      await c.dispose();
    }
    const cc = wsClient(t, { authorization: `Bearer ${carol.access_token}` });
    try {
      const refused = subscribe(cc, TYPING, { roomId });
      await refused.until(1);
      expect(errcode(refused.results[0])).toBe("M_FORBIDDEN");
    } finally {
      await cc.dispose();
    }
  });

  it("receipts subscription and markRead: public receipts reach members, private ones only their owner; fullyRead", async () => {
    const roomId = await sharedRoom();
    const e1 = await send(alice, roomId, "one");
    const e2 = await send(alice, roomId, "two");
    const c = wsClient(t, { authorization: `Bearer ${alice.access_token}` });
    const cb = wsClient(t, { authorization: `Bearer ${bob.access_token}` });
    try {
      const sub = subscribe(c, RECEIPTS, { roomId });
      const own = subscribe(cb, RECEIPTS, { roomId });
      // The first payload is the room's current receipts (alice's own read marker of nothing yet: none).
      await Promise.all([sub.until(1), own.until(1)]);
      expect(sub.results[0].data.receipts).toEqual({ roomId, receipts: [] });
      expect((await gql(t, MARK_READ, { roomId, eventId: e1, private: true }, bob.access_token)).body.data.markRead).toBe(true);
      await own.until(2);
      expect(own.results[1].data.receipts.receipts).toEqual([{ eventId: e1, userId: bob.user_id, receiptType: "m.read.private", threadId: null, ts: expect.any(Number) }]);
      const read = await gql(t, MARK_READ, { roomId, eventId: e2, fullyRead: true }, bob.access_token);
      expect(read.body.data.markRead).toBe(true);
      await sub.until(2);
      // Alice never saw the private receipt: her next payload is the public one.
      expect(sub.results[1].data.receipts).toEqual({ roomId, receipts: [{ eventId: e2, userId: bob.user_id, receiptType: "m.read", threadId: null, ts: expect.any(Number) }] });
      const marker = await t.call("GET", `${V3}/user/${enc(bob.user_id)}/rooms/${enc(roomId)}/account_data/m.fully_read`, { token: bob.access_token });
      expect(marker.json).toEqual({ event_id: e2 });
      // Errors: bad thread id, non-member.
      expect(errcode((await gql(t, MARK_READ, { roomId, eventId: e2, threadId: "" }, bob.access_token)).body)).toBe("M_INVALID_PARAM");
      expect(errcode((await gql(t, MARK_READ, { roomId, eventId: e2 }, carol.access_token)).body)).toBe("M_FORBIDDEN");
      sub.stop();
      own.stop();
    } finally {
      await c.dispose();
      await cb.dispose();
    }
    const cc = wsClient(t, { authorization: `Bearer ${carol.access_token}` });
    try {
      const refused = subscribe(cc, RECEIPTS, { roomId });
      await refused.until(1);
      expect(errcode(refused.results[0])).toBe("M_FORBIDDEN");
    } finally {
      await cc.dispose();
    }
  });

  it("setPresence and presence: own and room-mates', refused for strangers", async () => {
    await sharedRoom();
    const set = await gql(t, `mutation { setPresence(presence: "online", statusMsg: "coding") { userId presence statusMsg currentlyActive } }`, {}, alice.access_token);
    expect(set.body.data.setPresence).toEqual({ userId: alice.user_id, presence: "online", statusMsg: "coding", currentlyActive: true });
    const seen = await gql(t, `query ($u: String!) { presence(userId: $u) { presence statusMsg lastActiveAgo } }`, { u: alice.user_id }, bob.access_token);
    expect(seen.body.data.presence).toEqual({ presence: "online", statusMsg: "coding", lastActiveAgo: expect.any(Number) });
    expect(errcode((await gql(t, `query ($u: String!) { presence(userId: $u) { presence } }`, { u: alice.user_id }, carol.access_token)).body)).toBe("M_FORBIDDEN");
    expect(errcode((await gql(t, `mutation { setPresence(presence: "away") { presence } }`, {}, alice.access_token)).body)).toBe("M_INVALID_PARAM");
  });
});
