// DataLoader batching of the room list: a page of N rooms with name, topic, avatar, version and the
// viewer's membership costs the same number of SQL queries as a page of one room. Observed by counting
// the calls on the server's raw SQL handle (storage.sql.all/get), on cold caches after a restart.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import type { Sql } from "../../src/storage/sql.ts";
import { gql, REGISTER } from "./client.ts";

const N = 15;
const PAGE = `{ viewer { rooms(first: 100) { edges { cursor node { roomId roomVersion name topic avatarUrl membership } } pageInfo { hasNextPage } } } }`;

/** Counts read queries on the live server's SQL handle until `stop()`. */
function countQueries(sql: Sql) {
  const all = sql.all;
  const get = sql.get;
  let n = 0;
  sql.all = ((text: string, params?: unknown[]) => (n++, all.call(sql, text, params as never))) as Sql["all"];
  sql.get = ((text: string, params?: unknown[]) => (n++, get.call(sql, text, params as never))) as Sql["get"];
  return {
    get count() {
      return n;
    },
    stop() {
      sql.all = all;
      sql.get = get;
    },
  };
}

describe("GraphQL room list batching", () => {
  let t: TestServer;
  const tokens: Record<string, string> = {};
  beforeAll(async () => {
    t = await startTestServer();
    for (const u of ["many", "one", "former"]) {
      const r = await gql(t, REGISTER, { input: { username: u, password: `${u}-pw` } });
      tokens[u] = r.body.data.register.accessToken;
    }
  });
  afterAll(async () => { await t?.close(); });

  async function page(user: string): Promise<{ queries: number; rooms: any[] }> {
    const counter = countQueries(t.hs.services.storage.sql);
    try {
      const r = await gql(t, PAGE, undefined, tokens[user]);
      expect(r.body.errors).toBeUndefined();
      return { queries: counter.count, rooms: r.body.data.viewer.rooms.edges.map((e: any) => e.node) };
    } finally {
      counter.stop();
    }
  }

  it(`reads a page of ${N} rooms in as many queries as a page of 1`, async () => {
    const create = `mutation ($input: CreateRoomInput!) { createRoom(input: $input) { roomId } }`;
    for (let i = 0; i < N; i++) {
      const r = await gql(t, create, { input: { name: `Room ${i}`, topic: `Topic ${i}`, initialState: [{ type: "m.room.avatar", content: { url: `mxc://weft.test/a${i}` } }] } }, tokens.many);
      expect(r.body.errors).toBeUndefined();
    }
    const single = await gql(t, create, { input: { name: "Only", topic: "Alone" } }, tokens.one);
    expect(single.body.errors).toBeUndefined();

    // Cold caches: a fresh process over the same database.
    await t.restart();
    const one = await page("one");
    const many = await page("many");
    expect(one.rooms).toEqual([{ roomId: expect.any(String), roomVersion: t.config.default_room_version, name: "Only", topic: "Alone", avatarUrl: null, membership: "JOIN" }]);
    expect(many.rooms).toHaveLength(N);
    expect(many.rooms.map((r) => r.name)).toEqual(Array.from({ length: N }, (_, i) => `Room ${N - 1 - i}`));
    expect(many.rooms.every((r, i) => r.topic === `Topic ${N - 1 - i}` && r.avatarUrl === `mxc://weft.test/a${N - 1 - i}`)).toBe(true);
    // Warm caches (events cached): fewer queries, still the same for both.
    const oneWarm = await page("one");
    const manyWarm = await page("many");
    console.log(`room list SQL reads: cold 1 room ${one.queries}, ${N} rooms ${many.queries}; warm 1 room ${oneWarm.queries}, ${N} rooms ${manyWarm.queries}`);
    expect(many.queries).toBe(one.queries);
    expect(manyWarm.queries).toBe(oneWarm.queries);
    // Cold: the access token and the account (authentication, raw SQL since Prisma loads on first use)
    // and four room-list reads (memberships, rooms, state ids, events).
    expect(many.queries).toBeLessThanOrEqual(6);
  });

  it("shows rooms the viewer left as they were at the leave", async () => {
    // Rooms "former" joined and left: their summaries show the state at the leave.
    const create = `mutation ($input: CreateRoomInput!) { createRoom(input: $input) { roomId } }`;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await gql(t, create, { input: { name: `Old ${i}`, preset: "PUBLIC_CHAT" } }, tokens.many);
      ids.push(r.body.data.createRoom.roomId);
      await gql(t, `mutation ($id: String!) { joinRoom(roomIdOrAlias: $id) { roomId } }`, { id: r.body.data.createRoom.roomId }, tokens.former);
      await gql(t, `mutation ($id: String!) { leaveRoom(roomId: $id) }`, { id: r.body.data.createRoom.roomId }, tokens.former);
      // Renamed after the leave: the former member keeps seeing the old name.
      await gql(t, `mutation ($id: String!) { sendStateEvent(roomId: $id, type: "m.room.name", content: { name: "Renamed" }) { eventId } }`, { id: r.body.data.createRoom.roomId }, tokens.many);
    }
    const r = await gql(t, `{ viewer { rooms(membership: [LEAVE]) { edges { node { roomId name membership } } } } }`, undefined, tokens.former);
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.viewer.rooms.edges.map((e: any) => e.node)).toEqual([...ids].reverse().map((roomId, i) => ({ roomId, name: `Old ${2 - i}`, membership: "LEAVE" })));
  });
});
