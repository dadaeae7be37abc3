// Searching over the GraphQL face on each storage backend: searchMessages (ranked and recent, rooms,
// cursor paging until hasNextPage is false, the same hits as REST POST /search, only rooms the viewer is
// in) and searchUsers (the user directory: shared rooms, display names, limit/limited), with errcodes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { errcode, gql } from "./client.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

const SEARCH = `query ($term: String!, $roomIds: [String!], $orderBy: SearchOrder, $first: Int, $after: String) {
  searchMessages(term: $term, roomIds: $roomIds, orderBy: $orderBy, first: $first, after: $after) {
    count highlights
    edges { cursor node { rank event { eventId roomId sender body type } room { roomId name } } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;
const USERS = `query ($term: String!, $limit: Int) { searchUsers(term: $term, limit: $limit) { limited results { userId displayName avatarUrl } } }`;

describe.each(backends())("GraphQL search on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let bob: Session;
  let eve: Session;
  let roomA: string;
  let roomB: string;
  const sent: string[] = [];
  let txn = 0;

  async function send(who: Session, roomId: string, body: string): Promise<string> {
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/g${++txn}`, { token: who.access_token, body: { msgtype: "m.text", body } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  }

  async function ok(who: Session, query: string, variables: Record<string, unknown>): Promise<any> {
    const r = await gql(t, query, variables, who.access_token);
    expect(r.body.errors, JSON.stringify(r.body.errors)).toBeUndefined();
    return r.body.data;
  }

  beforeAll(async () => {
    t = await startTestServer({ backend });
    alice = await registerUser(t, "alice");
    bob = await registerUser(t, "bob");
    eve = await registerUser(t, "eve");
    roomA = await createRoom(t, alice, { preset: "public_chat", name: "Spiny club" });
    roomB = await createRoom(t, alice, { preset: "private_chat", invite: [bob.user_id] });
    expect((await t.call("POST", `${V3}/join/${enc(roomB)}`, { token: bob.access_token, body: {} })).status).toBe(200);
    sent.push(await send(alice, roomA, "hedgehog one"));
    sent.push(await send(alice, roomB, "hedgehog hedgehog two"));
    sent.push(await send(bob, roomB, "hedgehog three"));
    sent.push(await send(alice, roomA, "hedgehog four"));
  });
  afterAll(async () => {
    await t?.close();
  });

  it("finds messages with their rank and room, in rank or recent order, as REST does", async () => {
    const ranked = (await ok(alice, SEARCH, { term: "hedgehog", roomIds: [roomA, roomB] })).searchMessages;
    expect(ranked.count).toBe(4);
    expect(ranked.highlights).toEqual(["hedgehog"]);
    expect(ranked.edges.map((e: any) => e.node.event.eventId).sort()).toEqual([...sent].sort());
    const ranks = ranked.edges.map((e: any) => e.node.rank);
    expect([...ranks].sort((a: number, b: number) => b - a)).toEqual(ranks);
    const hitA = ranked.edges.find((e: any) => e.node.event.roomId === roomA);
    expect(hitA.node.room).toEqual({ roomId: roomA, name: "Spiny club" });

    const rest = await t.call("POST", `${V3}/search`, {
      token: alice.access_token,
      body: { search_categories: { room_events: { search_term: "hedgehog", order_by: "recent", filter: { rooms: [roomA, roomB] } } } },
    });
    const recent = (await ok(alice, SEARCH, { term: "hedgehog", orderBy: "RECENT", roomIds: [roomA, roomB] })).searchMessages;
    expect(recent.edges.map((e: any) => e.node.event.eventId)).toEqual([...sent].reverse());
    expect(recent.edges.map((e: any) => e.node.event.eventId)).toEqual(rest.json.search_categories.room_events.results.map((x: any) => x.result.event_id));
    expect(recent.edges[0].node.event).toMatchObject({ body: "hedgehog four", sender: alice.user_id, type: "m.room.message" });

    const onlyB = (await ok(alice, SEARCH, { term: "hedgehog", roomIds: [roomB], orderBy: "RECENT" })).searchMessages;
    expect(onlyB.edges.map((e: any) => e.node.event.eventId)).toEqual([sent[2], sent[1]]);
  });

  it("pages with first/after until hasNextPage is false", async () => {
    for (const orderBy of ["RANK", "RECENT"]) {
      const seen: string[] = [];
      let after: string | undefined;
      let pages = 0;
      for (;;) {
        const page = (await ok(alice, SEARCH, { term: "hedgehog", orderBy, first: 3, after, roomIds: [roomA, roomB] })).searchMessages;
        seen.push(...page.edges.map((e: any) => e.node.event.eventId));
        pages++;
        expect(page.pageInfo.hasPreviousPage).toBe(after !== undefined);
        if (!page.pageInfo.hasNextPage) break;
        after = page.pageInfo.endCursor;
        expect(pages).toBeLessThan(5);
      }
      expect(pages).toBe(2);
      expect(seen.sort()).toEqual([...sent].sort());
    }
  });

  it("searches only rooms the viewer is in", async () => {
    const bobs = (await ok(bob, SEARCH, { term: "hedgehog", orderBy: "RECENT" })).searchMessages;
    expect(bobs.edges.map((e: any) => e.node.event.eventId)).toEqual([sent[2], sent[1]]);
    const eves = (await ok(eve, SEARCH, { term: "hedgehog" })).searchMessages;
    expect(eves).toMatchObject({ count: 0, edges: [], pageInfo: { hasNextPage: false, endCursor: null } });
  });

  it("searchUsers finds users sharing a room, with display names, and applies the limit", async () => {
    const all = (await ok(alice, USERS, { term: "bo" })).searchUsers;
    expect(all).toEqual({ limited: false, results: [{ userId: bob.user_id, displayName: "bob", avatarUrl: null }] });
    // Eve shares no room with alice and is in no public room.
    expect((await ok(alice, USERS, { term: "eve" })).searchUsers.results).toEqual([]);
    // Alice is in a public room: eve finds her.
    expect((await ok(eve, USERS, { term: "ali" })).searchUsers.results.map((u: any) => u.userId)).toEqual([alice.user_id]);
    const limited = (await ok(bob, USERS, { term: "a", limit: 0 })).searchUsers;
    expect(limited).toEqual({ limited: false, results: [] });
    const one = (await ok(bob, USERS, { term: `@alice:${t.config.server_name}`, limit: 1 })).searchUsers;
    expect(one.results.map((u: any) => u.userId)).toEqual([alice.user_id]);
  });

  it("answers errors with their errcodes", async () => {
    expect(errcode((await gql(t, SEARCH, { term: "x" })).body)).toBe("M_MISSING_TOKEN");
    expect(errcode((await gql(t, USERS, { term: "x" })).body)).toBe("M_MISSING_TOKEN");
    expect(errcode((await gql(t, SEARCH, { term: "x", after: "garbage" }, alice.access_token)).body)).toBe("M_INVALID_PARAM");
    expect(errcode((await gql(t, SEARCH, { term: "x", first: -1 }, alice.access_token)).body)).toBe("M_INVALID_PARAM");
    expect(errcode((await gql(t, USERS, { term: "x", limit: -2 }, alice.access_token)).body)).toBe("M_INVALID_PARAM");
  });
});
