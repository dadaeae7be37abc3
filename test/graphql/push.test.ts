// Notification counts on the GraphQL face on SQLite and PostgreSQL: `room.unreadCounts` (total, main
// timeline, threads) agrees with /sync and drops after markRead; a `syncUpdates` subscriber receives the
// new counts with the new event.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { gql, subscribe, wsClient } from "./client.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const COUNTS = `query ($roomId: String!) { room(roomId: $roomId) { unreadCounts { total { notifications highlights } main { notifications highlights } threads { threadId count { notifications highlights } } } } }`;
const MARK_READ = `mutation ($roomId: String!, $eventId: String!) { markRead(roomId: $roomId, eventId: $eventId) }`;
const SYNC_UPDATES = `subscription ($since: String) { syncUpdates(since: $since) { nextBatch joinedRooms { roomId timeline { eventId } unreadNotifications { notifications highlights } } } }`;

describe.each(backends())("GraphQL unread counts on %s", (backend) => {
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

  const send = async (who: Session, roomId: string, content: Record<string, unknown>) => {
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/q${++txn}`, { token: who.access_token, body: content });
    expect(res.status).toBe(200);
    return res.json.event_id as string;
  };

  it("room.unreadCounts: total, main timeline and threads; markRead clears them", async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat" });
    await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} });
    const root = await send(alice, roomId, { msgtype: "m.text", body: "root" });
    const last = await send(alice, roomId, { msgtype: "m.text", body: "in thread", "m.mentions": { user_ids: [bob.user_id] }, "m.relates_to": { rel_type: "m.thread", event_id: root } });
    const res = await gql(t, COUNTS, { roomId }, bob.access_token);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.room.unreadCounts).toEqual({
      total: { notifications: 2, highlights: 1 },
      main: { notifications: 1, highlights: 0 },
      threads: [{ threadId: root, count: { notifications: 1, highlights: 1 } }],
    });
    const sync = await t.call("GET", `${V3}/sync?timeout=0`, { token: bob.access_token });
    expect(sync.json.rooms.join[roomId].unread_notifications).toEqual({ notification_count: 2, highlight_count: 1 });
    expect((await gql(t, MARK_READ, { roomId, eventId: last }, bob.access_token)).body.data.markRead).toBe(true);
    expect((await gql(t, COUNTS, { roomId }, bob.access_token)).body.data.room.unreadCounts.total).toEqual({ notifications: 0, highlights: 0 });
  });

  it("syncUpdates carries the counts with the event that changed them", async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat" });
    await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} });
    const base = await t.call("GET", `${V3}/sync?timeout=0`, { token: bob.access_token });
    const c = wsClient(t, { authorization: `Bearer ${bob.access_token}` });
    try {
      const sub = subscribe(c, SYNC_UPDATES, { since: base.json.next_batch });
      const eventId = await send(alice, roomId, { msgtype: "m.text", body: "hi bob", "m.mentions": { user_ids: [bob.user_id] } });
      await sub.until(1);
      expect(sub.error).toBeUndefined();
      const room = sub.results[0].data.syncUpdates.joinedRooms.find((r: any) => r.roomId === roomId);
      expect(room.timeline.map((e: any) => e.eventId)).toEqual([eventId]);
      expect(room.unreadNotifications).toEqual({ notifications: 1, highlights: 1 });
      sub.stop();
    } finally {
      await c.dispose();
    }
  });
});
