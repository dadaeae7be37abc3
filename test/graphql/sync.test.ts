// GraphQL over the sync machinery, on SQLite and PostgreSQL: viewer.accountData / setAccountData (the same
// store and refusals as REST, and delivered by /sync), and the roomTimeline subscription over graphql-ws
// receiving the same message as a long-polling /sync client, resuming from a cursor without gaps, fanned
// out to several subscribers (each its own transaction id and history visibility), and refused for rooms
// the viewer cannot read.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { errcode, gql, wsClient, subscribe } from "./client.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

const TIMELINE = `subscription ($roomId: String!, $since: String) {
  roomTimeline(roomId: $roomId, since: $since) { cursor event { eventId roomId type sender body } }
}`;

describe.each(backends())("GraphQL sync on %s", (backend) => {
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

  it("setAccountData and viewer.accountData share the REST store and reach /sync", async () => {
    const roomId = await createRoom(t, alice);
    const base = await t.call("GET", `${V3}/sync`, { token: alice.access_token });
    const set = await gql(t, `mutation { setAccountData(type: "org.example.gql", content: { theme: "dark" }) { type roomId content } }`, {}, alice.access_token);
    expect(set.body.data.setAccountData).toEqual({ type: "org.example.gql", roomId: null, content: { theme: "dark" } });
    const perRoom = await gql(t, `mutation ($r: String) { setAccountData(type: "org.example.gqlroom", content: { a: 1 }, roomId: $r) { roomId } }`, { r: roomId }, alice.access_token);
    expect(perRoom.body.data.setAccountData.roomId).toBe(roomId);
    const rest = await t.call("GET", `${V3}/user/${enc(alice.user_id)}/account_data/org.example.gql`, { token: alice.access_token });
    expect(rest.json).toEqual({ theme: "dark" });
    const read = await gql(t, `query ($r: String) { viewer { a: accountData(type: "org.example.gql") b: accountData(type: "nope") c: accountData(type: "org.example.gqlroom", roomId: $r) } }`, { r: roomId }, alice.access_token);
    expect(read.body.data.viewer).toEqual({ a: { theme: "dark" }, b: null, c: { a: 1 } });
    const inc = await t.call("GET", `${V3}/sync?since=${enc(base.json.next_batch)}`, { token: alice.access_token });
    expect(inc.json.account_data.events).toEqual([{ type: "org.example.gql", content: { theme: "dark" } }]);
    expect(inc.json.rooms.join[roomId].account_data.events).toEqual([{ type: "org.example.gqlroom", content: { a: 1 } }]);
    const refused = await gql(t, `mutation { setAccountData(type: "m.fully_read", content: {}) { type } }`, {}, alice.access_token);
    expect(errcode(refused.body)).toBe("M_BAD_JSON");
  });

  it("roomTimeline delivers the same message as a long-polling /sync client; resumes from a cursor", async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat" });
    await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} });
    const c = wsClient(t, { authorization: `Bearer ${alice.access_token}` });
    try {
      const base = await t.call("GET", `${V3}/sync`, { token: alice.access_token });
      // From the sync token: whenever the subscription becomes live, nothing after the token is missed.
      const sub = subscribe(c, TIMELINE, { roomId, since: base.json.next_batch });
      const poll = t.call("GET", `${V3}/sync?since=${enc(base.json.next_batch)}&timeout=30000`, { token: alice.access_token });
      const started = Date.now();
      const eventId = await send(bob, roomId, "to both faces");
      const [synced] = await Promise.all([poll, sub.until(1)]);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(synced.json.rooms.join[roomId].timeline.events.map((e: any) => e.event_id)).toEqual([eventId]);
      expect(sub.error).toBeUndefined();
      const first = sub.results[0].data.roomTimeline;
      expect(first.event).toEqual({ eventId, roomId, type: "m.room.message", sender: bob.user_id, body: "to both faces" });
      // Events of other rooms are not delivered.
      const other = await createRoom(t, alice);
      await send(alice, other, "elsewhere");
      const second = await send(bob, roomId, "second");
      await sub.until(2);
      expect(sub.results.map((r) => r.data.roomTimeline.event.eventId)).toEqual([eventId, second]);
      sub.stop();
      // Resubscribing from the first cursor: the missed events come first, then live ones.
      const missed = await send(bob, roomId, "while away");
      const again = subscribe(c, TIMELINE, { roomId, since: first.cursor });
      await again.until(2);
      expect(again.results.map((r) => r.data.roomTimeline.event.eventId)).toEqual([second, missed]);
      const live = await send(alice, roomId, "live again");
      await again.until(3);
      expect(again.results[2].data.roomTimeline.event.eventId).toBe(live);
      again.stop();
    } finally {
      await c.dispose();
    }
  });

  it("roomTimeline fans one event out to many subscribers: each its own transactionId, a leaver stops at its leave", async () => {
    const roomId = await createRoom(t, alice, {
      preset: "public_chat",
      initial_state: [{ type: "m.room.history_visibility", state_key: "", content: { history_visibility: "joined" } }],
    });
    for (const who of [bob, carol]) expect((await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: who.access_token, body: {} })).status).toBe(200);
    const FULL = `subscription ($roomId: String!, $since: String) { roomTimeline(roomId: $roomId, since: $since) { cursor event { eventId type sender body membership transactionId } } }`;
    const clients = [alice, bob, carol].map((who) => wsClient(t, { authorization: `Bearer ${who.access_token}` }));
    try {
      const base = (await t.call("GET", `${V3}/sync`, { token: alice.access_token })).json.next_batch;
      const [a, b, c] = clients.map((cl) => subscribe(cl, FULL, { roomId, since: base }));
      const put = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/fan1`, { token: alice.access_token, body: { msgtype: "m.text", body: "to all" } });
      expect(put.status).toBe(200);
      await Promise.all([a!.until(1), b!.until(1), c!.until(1)]);
      const got = [a!, b!, c!].map((x) => x.results[0].data.roomTimeline.event);
      for (const e of got) expect(e).toMatchObject({ eventId: put.json.event_id, sender: alice.user_id, body: "to all" });
      // Only the sending device sees its transaction id.
      expect(got.map((e) => e.transactionId)).toEqual(["fan1", null, null]);
      // Carol leaves: she gets her own leave, nothing sent while she is away (history "joined"), then her rejoin.
      expect((await t.call("POST", `${V3}/rooms/${enc(roomId)}/leave`, { token: carol.access_token, body: {} })).status).toBe(200);
      const away = await send(bob, roomId, "while carol is away");
      expect((await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: carol.access_token, body: {} })).status).toBe(200);
      await Promise.all([a!.until(4), b!.until(4), c!.until(3)]);
      expect(a!.results.map((r) => r.data.roomTimeline.event.body ?? r.data.roomTimeline.event.membership)).toEqual(["to all", "leave", "while carol is away", "join"]);
      expect(b!.results.map((r) => r.data.roomTimeline.event.eventId)).toEqual(a!.results.map((r) => r.data.roomTimeline.event.eventId));
      expect(c!.results.map((r) => r.data.roomTimeline.event.membership ?? r.data.roomTimeline.event.body)).toEqual(["to all", "leave", "join"]);
      expect(c!.results.some((r) => r.data.roomTimeline.event.eventId === away)).toBe(false);
      for (const x of [a!, b!, c!]) expect(x.error).toBeUndefined();
    } finally {
      await Promise.all(clients.map((cl) => cl.dispose()));
    }
  });

  it("roomTimeline is refused for a room the viewer cannot read", async () => {
    const roomId = await createRoom(t, alice, { preset: "private_chat" });
    const c = wsClient(t, { authorization: `Bearer ${carol.access_token}` });
    try {
      const sub = subscribe(c, TIMELINE, { roomId });
      await sub.until(1);
      expect(errcode(sub.results[0])).toBe("M_FORBIDDEN");
    } finally {
      await c.dispose();
    }
  });
});
