// Rooms over the GraphQL face against a real server, on each storage backend: createRoom, invite, join,
// members and viewer.rooms connections, sendMessage with transaction IDs (shared with REST), the
// backward timeline against REST /messages, state, redaction, kick/ban/leave, and the errcodes. Plus a
// sendMessage over WebSocket (graphql-ws).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { errcode, gql, REGISTER, wsClient, wsRun } from "./client.ts";

const ROOM_FIELDS = "roomId roomVersion name topic avatarUrl membership";
const EVENT_FIELDS = "eventId roomId type sender stateKey originServerTs content unsigned redacted redacts transactionId body msgtype membership";

const CREATE = `mutation ($input: CreateRoomInput!) { createRoom(input: $input) { ${ROOM_FIELDS} } }`;
const ROOM = `query ($roomId: String!) { room(roomId: $roomId) { ${ROOM_FIELDS} } }`;
const SEND = `mutation ($roomId: String!, $txnId: String!, $type: String, $content: JSONObject, $body: String, $msgtype: String) {
  sendMessage(roomId: $roomId, txnId: $txnId, type: $type, content: $content, body: $body, msgtype: $msgtype) { ${EVENT_FIELDS} }
}`;
const TIMELINE = `query ($roomId: String!, $last: Int, $before: String) {
  room(roomId: $roomId) { timeline(last: $last, before: $before) {
    edges { cursor node { eventId type body redacted } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  } }
}`;
const MEMBERS = `query ($roomId: String!, $first: Int, $after: String, $membership: [Membership!]) {
  room(roomId: $roomId) { members(first: $first, after: $after, membership: $membership) {
    edges { cursor node { userId membership displayName avatarUrl event { eventId type stateKey membership } } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  } }
}`;
const ROOMS = `query ($first: Int, $after: String, $membership: [Membership!]) {
  viewer { rooms(first: $first, after: $after, membership: $membership) {
    edges { cursor node { roomId name membership } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  } }
}`;
const MEMBERSHIP_OP = (op: string) => `mutation ($roomId: String!, $userId: String!, $reason: String) {
  ${op}(roomId: $roomId, userId: $userId, reason: $reason) { roomId membership }
}`;
const JOIN = `mutation ($id: String!) { joinRoom(roomIdOrAlias: $id) { ${ROOM_FIELDS} } }`;
const LEAVE = `mutation ($roomId: String!) { leaveRoom(roomId: $roomId) }`;

interface User {
  userId: string;
  token: string;
}

async function register(t: TestServer, username: string): Promise<User> {
  const r = await gql(t, REGISTER, { input: { username, password: `${username}-pw` } });
  expect(r.body.errors).toBeUndefined();
  return { userId: r.body.data.register.userId, token: r.body.data.register.accessToken };
}

/** Runs an operation that must succeed and returns its data. */
async function ok(t: TestServer, u: User, query: string, variables?: Record<string, unknown>): Promise<any> {
  const r = await gql(t, query, variables, u.token);
  expect(r.body.errors, JSON.stringify(r.body.errors)).toBeUndefined();
  expect(r.status).toBe(200);
  return r.body.data;
}

const enc = encodeURIComponent;

describe.each(backends())("GraphQL rooms (%s)", (backend) => {
  let t: TestServer;
  let alice: User;
  let bob: User;
  let carol: User;
  let roomId: string;
  let bobMessage: string;

  beforeAll(async () => {
    t = await startTestServer({ backend });
    alice = await register(t, "alice");
    bob = await register(t, "bob");
    carol = await register(t, "carol");
  });
  afterAll(async () => { await t?.close(); });

  it("creates a room, invites and joins, with members as a connection", async () => {
    const c = await ok(t, alice, CREATE, { input: { name: "Garden", topic: "Plants", preset: "PRIVATE_CHAT" } });
    roomId = c.createRoom.roomId;
    expect(c.createRoom).toEqual({ roomId, roomVersion: t.config.default_room_version, name: "Garden", topic: "Plants", avatarUrl: null, membership: "JOIN" });

    // Bob sees nothing of the room before he is invited.
    const before = await gql(t, ROOM, { roomId }, bob.token);
    expect(before.body.data).toEqual({ room: null });
    expect(errcode(before.body)).toBe("M_FORBIDDEN");

    const inv = await ok(t, alice, MEMBERSHIP_OP("invite"), { roomId, userId: bob.userId, reason: "Come in" });
    expect(inv.invite).toEqual({ roomId, membership: "JOIN" });

    // Invited: the room's name and topic (stripped state) and the membership, but not its timeline.
    expect((await ok(t, bob, ROOM, { roomId })).room).toMatchObject({ name: "Garden", topic: "Plants", membership: "INVITE" });
    const invited = await ok(t, bob, ROOMS, { membership: ["INVITE"] });
    expect(invited.viewer.rooms.edges.map((e: any) => e.node)).toEqual([{ roomId, name: "Garden", membership: "INVITE" }]);
    const tl = await gql(t, TIMELINE, { roomId }, bob.token);
    expect(errcode(tl.body)).toBe("M_FORBIDDEN");

    const j = await ok(t, bob, JOIN, { id: roomId });
    expect(j.joinRoom).toMatchObject({ roomId, membership: "JOIN", name: "Garden" });

    // Members, ordered by user ID, one per page.
    const p1 = (await ok(t, bob, MEMBERS, { roomId, first: 1 })).room.members;
    expect(p1.edges.map((e: any) => e.node.userId)).toEqual([alice.userId]);
    expect(p1.edges[0].node).toMatchObject({ membership: "JOIN", displayName: "alice", event: { type: "m.room.member", stateKey: alice.userId, membership: "join" } });
    expect(p1.pageInfo).toEqual({ hasNextPage: true, hasPreviousPage: false, startCursor: alice.userId, endCursor: alice.userId });
    const p2 = (await ok(t, bob, MEMBERS, { roomId, first: 1, after: p1.pageInfo.endCursor })).room.members;
    expect(p2.edges.map((e: any) => e.node.userId)).toEqual([bob.userId]);
    expect(p2.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const rest = await t.call("GET", `/_matrix/client/v3/rooms/${enc(roomId)}/members`, { token: bob.token });
    expect(rest.json.chunk.map((e: any) => e.state_key).sort()).toEqual([alice.userId, bob.userId]);
    const p3 = (await ok(t, bob, MEMBERS, { roomId, first: 10, after: p2.pageInfo.endCursor })).room.members;
    expect(p3).toEqual({ edges: [], pageInfo: { hasNextPage: false, hasPreviousPage: true, startCursor: null, endCursor: null } });
  });

  it("sends messages with transaction IDs shared with REST", async () => {
    const s1 = (await ok(t, bob, SEND, { roomId, txnId: "t1", body: "hello" })).sendMessage;
    expect(s1).toMatchObject({
      roomId, type: "m.room.message", sender: bob.userId, stateKey: null, body: "hello", msgtype: "m.text",
      content: { msgtype: "m.text", body: "hello" }, redacted: false, transactionId: "t1",
    });
    expect(s1.originServerTs).toEqual(expect.any(Number));
    bobMessage = s1.eventId;

    // The same txnId again, from GraphQL or from REST, is the same event.
    const s2 = (await ok(t, bob, SEND, { roomId, txnId: "t1", body: "hello" })).sendMessage;
    expect(s2.eventId).toBe(s1.eventId);
    const r = await t.call("PUT", `/_matrix/client/v3/rooms/${enc(roomId)}/send/m.room.message/t1`, { token: bob.token, body: { msgtype: "m.text", body: "hello" } });
    expect(r.json).toEqual({ event_id: s1.eventId });
    // ... even with a different body (as Synapse: the transaction id alone decides).
    expect((await ok(t, bob, SEND, { roomId, txnId: "t1", body: "other" })).sendMessage.eventId).toBe(s1.eventId);

    // Any type with raw content; the other user sees no transaction ID.
    const custom = (await ok(t, bob, SEND, { roomId, txnId: "t2", type: "org.example.ping", content: { n: 1, nested: { ok: true } } })).sendMessage;
    expect(custom).toMatchObject({ type: "org.example.ping", content: { n: 1, nested: { ok: true } }, body: null, msgtype: null });
    const seen = await ok(t, alice, `query ($roomId: String!, $id: String!) { room(roomId: $roomId) { event(eventId: $id) { eventId transactionId body } } }`, { roomId, id: s1.eventId });
    expect(seen.room.event).toEqual({ eventId: s1.eventId, transactionId: null, body: "hello" });

    const notice = (await ok(t, alice, SEND, { roomId, txnId: "n1", body: "note", msgtype: "m.notice" })).sendMessage;
    expect(notice.content).toEqual({ msgtype: "m.notice", body: "note" });
  });

  it("pages the timeline backwards in the order of REST /messages", async () => {
    for (let i = 0; i < 7; i++) await ok(t, alice, SEND, { roomId, txnId: `page-${i}`, body: `message ${i}` });
    const head = (await ok(t, alice, TIMELINE, { roomId, last: 3 })).room.timeline;
    expect(head.edges.map((e: any) => e.node.body)).toEqual(["message 4", "message 5", "message 6"]);
    expect(head.pageInfo.hasNextPage).toBe(false);

    let before: string | undefined;
    let from: string | undefined;
    let pages = 0;
    for (;;) {
      const g = (await ok(t, alice, TIMELINE, { roomId, last: 3, before })).room.timeline;
      const q = from === undefined ? "" : `&from=${from}`;
      const rest = await t.call("GET", `/_matrix/client/v3/rooms/${enc(roomId)}/messages?dir=b&limit=3${q}`, { token: alice.token });
      expect(rest.status).toBe(200);
      // GraphQL edges run oldest first; /messages?dir=b newest first.
      expect(g.edges.map((e: any) => e.node.eventId).reverse()).toEqual(rest.json.chunk.map((e: any) => e.event_id));
      pages++;
      if (!g.pageInfo.hasPreviousPage) {
        // REST still names an end for the last non-empty page (as Synapse); the page from it is empty and ends.
        if (rest.json.end !== undefined) {
          const after = await t.call("GET", `/_matrix/client/v3/rooms/${enc(roomId)}/messages?dir=b&limit=3&from=${rest.json.end}`, { token: alice.token });
          expect([after.json.chunk, after.json.end]).toEqual([[], undefined]);
        }
        break;
      }
      expect(rest.json.end).toBeDefined();
      // The cursors are the stream tokens of /messages.
      expect(g.pageInfo.startCursor).toBe(rest.json.end);
      expect(g.edges[g.edges.length - 1].cursor).toBe(g.pageInfo.endCursor);
      before = g.pageInfo.startCursor;
      from = rest.json.end;
    }
    expect(pages).toBeGreaterThan(4);
    // The last page ends with the room's creation.
    const first = await ok(t, alice, TIMELINE, { roomId, last: 1000 });
    expect(first.room.timeline.edges[0].node.type).toBe("m.room.create");
    expect(first.room.timeline.pageInfo.hasPreviousPage).toBe(false);
  });

  it("reads and sets state", async () => {
    const q = `query ($roomId: String!, $type: String, $stateKey: String) { room(roomId: $roomId) { state(type: $type, stateKey: $stateKey) { type stateKey sender content } } }`;
    expect((await ok(t, bob, q, { roomId, type: "m.room.name", stateKey: "" })).room.state).toEqual([
      { type: "m.room.name", stateKey: "", sender: alice.userId, content: { name: "Garden" } },
    ]);
    expect((await ok(t, bob, q, { roomId, type: "m.room.name", stateKey: "nope" })).room.state).toEqual([]);
    const members = (await ok(t, bob, q, { roomId, type: "m.room.member" })).room.state;
    expect(members.map((e: any) => e.stateKey).sort()).toEqual([alice.userId, bob.userId]);
    const all = (await ok(t, bob, q, { roomId })).room.state;
    const rest = await t.call("GET", `/_matrix/client/v3/rooms/${enc(roomId)}/state`, { token: bob.token });
    expect(all.map((e: any) => `${e.type}|${e.stateKey}`).sort()).toEqual(rest.json.map((e: any) => `${e.type}|${e.state_key}`).sort());

    const set = `mutation ($roomId: String!, $type: String!, $content: JSONObject!) { sendStateEvent(roomId: $roomId, type: $type, content: $content) { eventId type stateKey content sender } }`;
    const topic = (await ok(t, alice, set, { roomId, type: "m.room.topic", content: { topic: "Trees" } })).sendStateEvent;
    expect(topic).toMatchObject({ type: "m.room.topic", stateKey: "", content: { topic: "Trees" }, sender: alice.userId });
    // An identical re-send is the same event.
    expect((await ok(t, alice, set, { roomId, type: "m.room.topic", content: { topic: "Trees" } })).sendStateEvent.eventId).toBe(topic.eventId);
    await ok(t, alice, set, { roomId, type: "m.room.avatar", content: { url: "mxc://weft.test/garden" } });
    expect((await ok(t, bob, ROOM, { roomId })).room).toMatchObject({ topic: "Trees", avatarUrl: "mxc://weft.test/garden" });
    // Mutations run in order, and a room returned after a change shows it (no stale per-request cache).
    const seq = await ok(t, alice, `mutation ($roomId: String!) {
      a: joinRoom(roomIdOrAlias: $roomId) { name }
      b: sendStateEvent(roomId: $roomId, type: "m.room.name", content: { name: "Orchard" }) { eventId content }
      c: joinRoom(roomIdOrAlias: $roomId) { name }
    }`, { roomId });
    expect(seq).toEqual({ a: { name: "Garden" }, b: { eventId: expect.any(String), content: { name: "Orchard" } }, c: { name: "Orchard" } });
    expect((await ok(t, bob, ROOM, { roomId })).room.name).toBe("Orchard");
    // Bob (power level 0) may not.
    expect(errcode((await gql(t, set, { roomId, type: "m.room.name", content: { name: "Mine" } }, bob.token)).body)).toBe("M_FORBIDDEN");
  });

  it("redacts an event, which then reads as redacted", async () => {
    const m = `mutation ($roomId: String!, $eventId: String!, $txnId: String!, $reason: String) {
      redactEvent(roomId: $roomId, eventId: $eventId, txnId: $txnId, reason: $reason) { ${EVENT_FIELDS} }
    }`;
    const r = (await ok(t, alice, m, { roomId, eventId: bobMessage, txnId: "r1", reason: "spam" })).redactEvent;
    expect(r).toMatchObject({ type: "m.room.redaction", sender: alice.userId, redacts: bobMessage, transactionId: "r1" });
    expect(r.content.reason).toBe("spam");
    expect((await ok(t, alice, m, { roomId, eventId: bobMessage, txnId: "r1", reason: "spam" })).redactEvent.eventId).toBe(r.eventId);

    const q = `query ($roomId: String!, $id: String!) { room(roomId: $roomId) { event(eventId: $id) { eventId redacted content body unsigned } } }`;
    const e = (await ok(t, bob, q, { roomId, id: bobMessage })).room.event;
    expect(e).toMatchObject({ eventId: bobMessage, redacted: true, content: {}, body: null });
    expect(e.unsigned.redacted_because.event_id).toBe(r.eventId);
    const rest = await t.call("GET", `/_matrix/client/v3/rooms/${enc(roomId)}/event/${enc(bobMessage)}`, { token: bob.token });
    expect(rest.json.content).toEqual({});
    const tl = (await ok(t, bob, TIMELINE, { roomId, last: 100 })).room.timeline.edges.map((x: any) => x.node);
    expect(tl.find((x: any) => x.eventId === bobMessage)).toMatchObject({ redacted: true, body: null });
    // Bob may not redact Alice's events.
    const own = (await ok(t, alice, SEND, { roomId, txnId: "mine", body: "mine" })).sendMessage.eventId;
    expect(errcode((await gql(t, m, { roomId, eventId: own, txnId: "r2" }, bob.token)).body)).toBe("M_FORBIDDEN");
  });

  it("kicks, bans and leaves", async () => {
    await ok(t, alice, MEMBERSHIP_OP("invite"), { roomId, userId: carol.userId });
    await ok(t, carol, JOIN, { id: roomId });
    const k = await ok(t, alice, MEMBERSHIP_OP("kick"), { roomId, userId: carol.userId, reason: "cool off" });
    expect(k.kick).toEqual({ roomId, membership: "JOIN" });
    const left = (await ok(t, alice, MEMBERS, { roomId, membership: ["LEAVE"] })).room.members.edges.map((e: any) => e.node);
    expect(left).toEqual([expect.objectContaining({ userId: carol.userId, membership: "LEAVE" })]);
    // Carol, kicked, still sees the room as it was when she left, and cannot rejoin an invite-only room.
    expect((await ok(t, carol, ROOM, { roomId })).room).toMatchObject({ membership: "LEAVE", name: "Orchard" });
    expect(errcode((await gql(t, JOIN, { id: roomId }, carol.token)).body)).toBe("M_FORBIDDEN");
    expect(errcode((await gql(t, SEND, { roomId, txnId: "c1", body: "hi" }, carol.token)).body)).toBe("M_FORBIDDEN");

    const b = await ok(t, alice, MEMBERSHIP_OP("ban"), { roomId, userId: carol.userId, reason: "enough" });
    expect(b.ban.roomId).toBe(roomId);
    const banned = (await ok(t, alice, MEMBERS, { roomId, membership: ["BAN"] })).room.members.edges.map((e: any) => e.node);
    expect(banned).toEqual([expect.objectContaining({ userId: carol.userId, membership: "BAN" })]);
    expect((await ok(t, carol, ROOM, { roomId })).room.membership).toBe("BAN");
    expect(errcode((await gql(t, MEMBERSHIP_OP("invite"), { roomId, userId: carol.userId }, alice.token)).body)).toBe("M_FORBIDDEN");
    const unban = await ok(t, alice, MEMBERSHIP_OP("unban"), { roomId, userId: carol.userId });
    expect(unban.unban.roomId).toBe(roomId);
    expect((await ok(t, carol, ROOM, { roomId })).room.membership).toBe("LEAVE");

    // Bob leaves: his room list moves the room from JOIN to LEAVE.
    expect((await ok(t, bob, LEAVE, { roomId })).leaveRoom).toBe(true);
    expect((await ok(t, bob, LEAVE, { roomId })).leaveRoom).toBe(true); // leaving again is a no-op
    expect((await ok(t, bob, ROOMS, {})).viewer.rooms.edges).toEqual([]);
    expect((await ok(t, bob, ROOMS, { membership: ["LEAVE"] })).viewer.rooms.edges.map((e: any) => e.node)).toEqual([
      { roomId, name: "Orchard", membership: "LEAVE" },
    ]);
    expect(errcode((await gql(t, SEND, { roomId, txnId: "after-leave", body: "hi" }, bob.token)).body)).toBe("M_FORBIDDEN");
  });

  it("pages the viewer's rooms with first/after", async () => {
    const created: string[] = [roomId];
    for (let i = 0; i < 5; i++) created.push((await ok(t, alice, CREATE, { input: { name: `Room ${i}` } })).createRoom.roomId);
    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    for (;;) {
      const r = (await ok(t, alice, ROOMS, { first: 2, after })).viewer.rooms;
      expect(r.edges.length).toBeLessThanOrEqual(2);
      for (const e of r.edges) {
        expect(e.cursor).toMatch(/^s\d+$/);
        expect(e.node.membership).toBe("JOIN");
      }
      seen.push(...r.edges.map((e: any) => e.node.roomId));
      pages++;
      if (!r.pageInfo.hasNextPage) break;
      after = r.pageInfo.endCursor;
    }
    expect(pages).toBe(3);
    // Newest membership first, nothing twice, the same set as REST /joined_rooms.
    expect(seen).toEqual([...created].reverse());
    const rest = await t.call("GET", "/_matrix/client/v3/joined_rooms", { token: alice.token });
    expect([...seen].sort()).toEqual([...rest.json.joined_rooms].sort());
    // A room created now does not move the pages after an old cursor.
    const fromSecond = (await ok(t, alice, ROOMS, { first: 10, after: (await ok(t, alice, ROOMS, { first: 1 })).viewer.rooms.pageInfo.endCursor })).viewer.rooms;
    await ok(t, alice, CREATE, { input: { name: "Newest" } });
    const again = (await ok(t, alice, ROOMS, { first: 10, after: (await ok(t, alice, ROOMS, { first: 2 })).viewer.rooms.pageInfo.endCursor })).viewer.rooms;
    expect(again.edges.map((e: any) => e.node.roomId)).toEqual(fromSecond.edges.map((e: any) => e.node.roomId));
    expect(errcode((await gql(t, ROOMS, { after: "garbage" }, alice.token)).body)).toBe("M_INVALID_PARAM");
  });

  it("maps errors to Matrix errcodes", async () => {
    const dave = await register(t, "dave");
    const bad = await gql(t, CREATE, { input: { roomVersion: "999" } }, dave.token);
    expect(bad.body.data).toEqual({ createRoom: null });
    expect(errcode(bad.body)).toBe("M_UNSUPPORTED_ROOM_VERSION");
    expect(errcode((await gql(t, SEND, { roomId, txnId: "d1", body: "hi" }, dave.token)).body)).toBe("M_FORBIDDEN");
    expect(errcode((await gql(t, ROOM, { roomId: "!nowhere:weft.test" }, dave.token)).body)).toBe("M_FORBIDDEN");
    expect(errcode((await gql(t, SEND, { roomId, txnId: "d2" }, alice.token)).body)).toBe("M_MISSING_PARAM");
    expect(errcode((await gql(t, SEND, { roomId, txnId: "d3", body: "x", content: { body: "y" } }, alice.token)).body)).toBe("M_INVALID_PARAM");
    expect(errcode((await gql(t, TIMELINE, { roomId, before: "not-a-token" }, alice.token)).body)).toBe("M_INVALID_PARAM");
    expect(errcode((await gql(t, TIMELINE, { roomId, last: -1 }, alice.token)).body)).toBe("M_INVALID_PARAM");
    expect(errcode((await gql(t, JOIN, { id: "!nowhere:weft.test" }, dave.token)).body)).toBe("M_NOT_FOUND");
    expect(errcode((await gql(t, CREATE, { input: { name: "x" } })).body)).toBe("M_MISSING_TOKEN");
  });
});

describe("GraphQL rooms over WebSocket", () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer(); });
  afterAll(async () => { await t?.close(); });

  it("runs createRoom and sendMessage (idempotent by txnId, shared with HTTP)", async () => {
    const erin = await register(t, "erin");
    const c = wsClient(t, { authorization: `Bearer ${erin.token}` });
    try {
      const created = await wsRun(c, CREATE, { input: { name: "Socket room" } });
      expect(created.errors).toBeUndefined();
      const roomId = created.data.createRoom.roomId as string;
      const sent = await wsRun(c, SEND, { roomId, txnId: "ws-1", body: "over the socket" });
      expect(sent.errors).toBeUndefined();
      expect(sent.data.sendMessage).toMatchObject({ roomId, sender: erin.userId, body: "over the socket", transactionId: "ws-1" });
      const again = await wsRun(c, SEND, { roomId, txnId: "ws-1", body: "over the socket" });
      expect(again.data.sendMessage.eventId).toBe(sent.data.sendMessage.eventId);
      const http = await ok(t, erin, SEND, { roomId, txnId: "ws-1", body: "over the socket" });
      expect(http.sendMessage.eventId).toBe(sent.data.sendMessage.eventId);
      const tl = await wsRun(c, TIMELINE, { roomId, last: 1 });
      expect(tl.data.room.timeline.edges.map((e: any) => e.node.eventId)).toEqual([sent.data.sendMessage.eventId]);
      // Errors keep their errcode on the socket too.
      const stranger = await register(t, "frank");
      const c2 = wsClient(t, { authorization: `Bearer ${stranger.token}` });
      try {
        expect(errcode(await wsRun(c2, SEND, { roomId, txnId: "x", body: "let me in" }))).toBe("M_FORBIDDEN");
      } finally {
        await c2.dispose();
      }
    } finally {
      await c.dispose();
    }
  });
});
