// Relations, threads, spaces and reports over GraphQL on each storage backend: Event.thread / edit /
// references (the bundled aggregations), Event.relations paged with first/after, Room.threads with both
// include filters, Room.hierarchy paged with nextBatch, roomSummary, reportEvent / reportRoom and their errcodes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { errcode, gql } from "./client.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

const EVENT = `query ($roomId: String!, $eventId: String!, $first: Int, $after: String, $relType: String) {
  room(roomId: $roomId) { event(eventId: $eventId) {
    eventId body
    thread { count currentUserParticipated latestEvent { eventId body sender } }
    edit { eventId sender originServerTs }
    references
    relations(first: $first, after: $after, relType: $relType) {
      edges { cursor node { eventId type body } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  } }
}`;
const THREADS = `query ($roomId: String!, $include: ThreadInclude, $first: Int, $after: String) {
  room(roomId: $roomId) { threads(include: $include, first: $first, after: $after) {
    edges { cursor node { eventId thread { count currentUserParticipated latestEvent { eventId } } } }
    pageInfo { hasNextPage endCursor }
  } }
}`;
const HIERARCHY = `query ($roomId: String!, $first: Int, $after: String, $suggestedOnly: Boolean, $maxDepth: Int) {
  room(roomId: $roomId) { hierarchy(first: $first, after: $after, suggestedOnly: $suggestedOnly, maxDepth: $maxDepth) {
    rooms { roomId name roomType joinRule numJoinedMembers worldReadable guestCanJoin roomVersion allowedRoomIds childrenState }
    nextBatch
  } }
}`;
const REPORT_EVENT = `mutation ($roomId: String!, $eventId: String!, $reason: String, $score: Int) { reportEvent(roomId: $roomId, eventId: $eventId, reason: $reason, score: $score) }`;
const REPORT_ROOM = `mutation ($roomId: String!, $reason: String!) { reportRoom(roomId: $roomId, reason: $reason) }`;

describe.each(backends())("GraphQL relations on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let bob: Session;
  let roomId: string;
  let root: string;
  let replies: string[];
  let edit: string;
  let ref: string;
  let other: string;
  let txn = 0;

  async function send(who: Session, room: string, content: Record<string, unknown>, type = "m.room.message"): Promise<string> {
    const res = await t.call("PUT", `${V3}/rooms/${enc(room)}/send/${enc(type)}/g${++txn}`, { token: who.access_token, body: content });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  }
  const inThread = (rootId: string, body: string) => ({ msgtype: "m.text", body, "m.relates_to": { rel_type: "m.thread", event_id: rootId } });

  beforeAll(async () => {
    t = await startTestServer({ backend });
    alice = await registerUser(t, "alice");
    bob = await registerUser(t, "bob");
    roomId = await createRoom(t, alice, { preset: "public_chat", name: "Main" });
    expect((await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} })).status).toBe(200);
    root = await send(alice, roomId, { msgtype: "m.text", body: "root" });
    other = await send(bob, roomId, { msgtype: "m.text", body: "bob's root" });
    replies = [];
    replies.push(await send(bob, roomId, inThread(other, "r0")));
    replies.push(await send(alice, roomId, inThread(root, "r1")));
    replies.push(await send(bob, roomId, inThread(root, "r2")));
    replies.push(await send(bob, roomId, inThread(root, "r3")));
    edit = await send(alice, roomId, { msgtype: "m.text", body: "* root!", "m.new_content": { msgtype: "m.text", body: "root!" }, "m.relates_to": { rel_type: "m.replace", event_id: root } });
    ref = await send(bob, roomId, { msgtype: "m.text", body: "ref", "m.relates_to": { rel_type: "m.reference", event_id: root } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("an event's aggregations and its relations, paged forwards", async () => {
    const r = await gql(t, EVENT, { roomId, eventId: root, first: 2 }, bob.access_token);
    expect(r.body.errors).toBeUndefined();
    const ev = r.body.data.room.event;
    expect(ev.body).toBe("root");
    expect(ev.thread).toEqual({ count: 3, currentUserParticipated: true, latestEvent: { eventId: replies[3], body: "r3", sender: bob.user_id } });
    expect(ev.edit.eventId).toBe(edit);
    expect(ev.edit.sender).toBe(alice.user_id);
    expect(ev.references).toEqual([ref]);
    const seen: string[] = ev.relations.edges.map((e: any) => e.node.eventId);
    expect(ev.relations.pageInfo.hasNextPage).toBe(true);
    let after = ev.relations.pageInfo.endCursor;
    for (let i = 0; i < 5 && after; i++) {
      const next = (await gql(t, EVENT, { roomId, eventId: root, first: 2, after }, bob.access_token)).body.data.room.event.relations;
      seen.push(...next.edges.map((e: any) => e.node.eventId));
      expect(next.pageInfo.hasPreviousPage).toBe(true);
      after = next.pageInfo.hasNextPage ? next.pageInfo.endCursor : null;
    }
    expect(seen).toEqual([replies[1], replies[2], replies[3], edit, ref]);
    const onlyThread = (await gql(t, EVENT, { roomId, eventId: root, first: 10, relType: "m.thread" }, bob.access_token)).body.data.room.event.relations;
    expect(onlyThread.edges.map((e: any) => e.node.eventId)).toEqual(replies.slice(1));
    const plain = (await gql(t, EVENT, { roomId, eventId: ref }, bob.access_token)).body.data.room.event;
    expect([plain.thread, plain.edit, plain.references]).toEqual([null, null, []]);
  });

  it("threads: all and participated, paged", async () => {
    const all = (await gql(t, THREADS, { roomId }, alice.access_token)).body.data.room.threads;
    expect(all.edges.map((e: any) => e.node.eventId)).toEqual([root, other]);
    expect(all.edges[0].node.thread.latestEvent.eventId).toBe(replies[3]);
    expect(all.edges[1].node.thread).toMatchObject({ count: 1, currentUserParticipated: false });
    const p1 = (await gql(t, THREADS, { roomId, first: 1 }, alice.access_token)).body.data.room.threads;
    expect(p1.pageInfo.hasNextPage).toBe(true);
    const p2 = (await gql(t, THREADS, { roomId, first: 1, after: p1.pageInfo.endCursor }, alice.access_token)).body.data.room.threads;
    expect(p2.edges.map((e: any) => e.node.eventId)).toEqual([other]);
    expect(p2.pageInfo.hasNextPage).toBe(false);
    const mine = (await gql(t, THREADS, { roomId, include: "PARTICIPATED" }, alice.access_token)).body.data.room.threads;
    expect(mine.edges.map((e: any) => e.node.eventId)).toEqual([root]);
  });

  it("hierarchy of a space, paged", async () => {
    const space = await createRoom(t, alice, { preset: "public_chat", name: "Space", creation_content: { type: "m.space" } });
    const kids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const kid = await createRoom(t, alice, { preset: "public_chat", name: `kid${i}` });
      kids.push(kid);
      const res = await t.call("PUT", `${V3}/rooms/${enc(space)}/state/m.space.child/${enc(kid)}`, { token: alice.access_token, body: { via: ["weft.test"], order: String(i), suggested: i === 1 } });
      expect(res.status).toBe(200);
    }
    // Room(roomId) is for rooms the viewer may read: bob browses a space he is in.
    expect((await t.call("POST", `${V3}/join/${enc(space)}`, { token: bob.access_token, body: {} })).status).toBe(200);
    const p1 = (await gql(t, HIERARCHY, { roomId: space, first: 2 }, bob.access_token)).body.data.room.hierarchy;
    expect(p1.rooms.map((r: any) => r.roomId)).toEqual([space, kids[0]]);
    expect(p1.rooms[0]).toMatchObject({ name: "Space", roomType: "m.space", joinRule: "public", numJoinedMembers: 2, allowedRoomIds: null });
    expect(p1.rooms[0].childrenState.map((c: any) => c.state_key)).toEqual(kids);
    const p2 = (await gql(t, HIERARCHY, { roomId: space, first: 2, after: p1.nextBatch }, bob.access_token)).body.data.room.hierarchy;
    expect(p2.rooms.map((r: any) => r.roomId)).toEqual(kids.slice(1));
    expect(p2.nextBatch).toBeNull();
    const suggested = (await gql(t, HIERARCHY, { roomId: space, suggestedOnly: true }, bob.access_token)).body.data.room.hierarchy;
    expect(suggested.rooms.map((r: any) => r.roomId)).toEqual([space, kids[1]]);
    const bad = await gql(t, HIERARCHY, { roomId: space, first: 2, after: p1.nextBatch, maxDepth: 1 }, bob.access_token);
    expect(errcode(bad.body)).toBe("M_INVALID_PARAM");
  });

  it("spaceHierarchy: a public space the viewer has not joined, and a private one refused", async () => {
    const carol = await registerUser(t, "carol");
    const space = await createRoom(t, alice, { preset: "public_chat", name: "Open space", creation_content: { type: "m.space" } });
    const kid = await createRoom(t, alice, { preset: "public_chat", name: "open kid" });
    expect((await t.call("PUT", `${V3}/rooms/${enc(space)}/state/m.space.child/${enc(kid)}`, { token: alice.access_token, body: { via: ["weft.test"] } })).status).toBe(200);
    const q = `query ($roomId: String!) { spaceHierarchy(roomId: $roomId) { rooms { roomId name roomType } nextBatch } }`;
    const res = await gql(t, q, { roomId: space }, carol.access_token);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.spaceHierarchy.rooms.map((r: any) => [r.roomId, r.name])).toEqual([[space, "Open space"], [kid, "open kid"]]);
    // Room(roomId) stays for rooms the viewer can read; the public space is not one of them for carol.
    expect(errcode((await gql(t, HIERARCHY, { roomId: space }, carol.access_token)).body)).not.toBeUndefined();
    const closed = await createRoom(t, alice, { preset: "private_chat", name: "Closed", creation_content: { type: "m.space" } });
    expect(errcode((await gql(t, q, { roomId: closed }, carol.access_token)).body)).toBe("M_FORBIDDEN");
  });

  it("roomSummary: a restricted room's allowed rooms and the viewer's membership; none without a token; a hidden room not found", async () => {
    const carol = await registerUser(t, "carol2");
    const space = await createRoom(t, alice, { preset: "public_chat", name: "Summary space", creation_content: { type: "m.space" } });
    const restricted = await createRoom(t, alice, {
      name: "Members only",
      room_version: "10",
      initial_state: [{ type: "m.room.join_rules", state_key: "", content: { join_rule: "restricted", allow: [{ type: "m.room_membership", room_id: space }] } }],
    });
    const q = `query ($r: String!) { roomSummary(roomIdOrAlias: $r) { membership room { roomId name joinRule allowedRoomIds childrenState } } }`;
    const own = await gql(t, q, { r: restricted }, alice.access_token);
    expect(own.body.errors).toBeUndefined();
    expect(own.body.data.roomSummary).toEqual({ membership: "join", room: { roomId: restricted, name: "Members only", joinRule: "restricted", allowedRoomIds: [space], childrenState: [] } });
    const anon = await gql(t, q, { r: space });
    expect(anon.body.errors).toBeUndefined();
    expect(anon.body.data.roomSummary.membership).toBeNull();
    expect(errcode((await gql(t, q, { r: restricted }, carol.access_token)).body)).toBe("M_NOT_FOUND");
  });

  it("reports, and their errors", async () => {
    const ok = await gql(t, REPORT_EVENT, { roomId, eventId: root, reason: "spam", score: -50 }, bob.access_token);
    expect(ok.body).toEqual({ data: { reportEvent: true } });
    expect((await gql(t, REPORT_ROOM, { roomId, reason: "bad room" }, bob.access_token)).body).toEqual({ data: { reportRoom: true } });
    const rows = await t.hs.services.db.contentReport.findMany({ orderBy: { id: "asc" } });
    expect(rows.map((r) => [r.eventId, r.userId, r.reason, r.score])).toEqual([[root, bob.user_id, "spam", -50], [null, bob.user_id, "bad room", null]]);
    expect(errcode((await gql(t, REPORT_EVENT, { roomId, eventId: "$nope" }, bob.access_token)).body)).toBe("M_NOT_FOUND");
    expect(errcode((await gql(t, REPORT_EVENT, { roomId, eventId: root, score: 3 }, bob.access_token)).body)).toBe("M_INVALID_PARAM");
    expect(errcode((await gql(t, REPORT_ROOM, { roomId: "!nope:weft.test", reason: "x" }, bob.access_token)).body)).toBe("M_NOT_FOUND");
    expect(errcode((await gql(t, REPORT_ROOM, { roomId, reason: "x" })).body)).toBe("M_MISSING_TOKEN");
    expect(await t.hs.services.db.contentReport.count()).toBe(2);
  });
});
