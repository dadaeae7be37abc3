// The room directory over GraphQL on each storage backend: createAlias / deleteAlias and Room.aliases /
// Room.canonicalAlias (the same aliases REST sees), setRoomDirectoryVisibility and the publicRooms
// connection (filter, paging, auth), upgradeRoom, and the errcodes of each.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { errcode, gql, REGISTER } from "./client.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

const CREATE = `mutation ($input: CreateRoomInput!) { createRoom(input: $input) { roomId canonicalAlias aliases } }`;
const ROOM = `query ($roomId: String!) { room(roomId: $roomId) { roomId name canonicalAlias aliases } }`;
const CREATE_ALIAS = `mutation ($alias: String!, $roomId: String!) { createAlias(alias: $alias, roomId: $roomId) { roomId aliases } }`;
const DELETE_ALIAS = `mutation ($alias: String!) { deleteAlias(alias: $alias) }`;
const SET_VISIBILITY = `mutation ($roomId: String!, $v: RoomVisibility!) { setRoomDirectoryVisibility(roomId: $roomId, visibility: $v) { roomId } }`;
const PUBLIC = `query ($filter: PublicRoomsFilter, $first: Int, $after: String, $server: String) {
  publicRooms(filter: $filter, first: $first, after: $after, server: $server) {
    edges { cursor node { roomId name topic canonicalAlias numJoinedMembers worldReadable guestCanJoin avatarUrl joinRule roomType } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    totalRoomCountEstimate
  }
}`;
const UPGRADE = `mutation ($roomId: String!, $v: String!) { upgradeRoom(roomId: $roomId, newVersion: $v) { roomId roomVersion name canonicalAlias aliases } }`;

interface User {
  userId: string;
  token: string;
}

describe.each(backends())("GraphQL room directory (%s)", (backend) => {
  let t: TestServer;
  let alice: User;
  let bob: User;

  async function register(username: string): Promise<User> {
    const r = await gql(t, REGISTER, { input: { username, password: `${username}-pw` } });
    expect(r.body.errors).toBeUndefined();
    return { userId: r.body.data.register.userId, token: r.body.data.register.accessToken };
  }
  async function ok(u: User | undefined, query: string, variables?: Record<string, unknown>): Promise<any> {
    const r = await gql(t, query, variables, u?.token);
    expect(r.body.errors, JSON.stringify(r.body.errors)).toBeUndefined();
    return r.body.data;
  }
  async function fails(u: User | undefined, query: string, variables: Record<string, unknown>, code: string): Promise<void> {
    const r = await gql(t, query, variables, u?.token);
    expect(errcode(r.body), JSON.stringify(r.body)).toBe(code);
  }

  beforeAll(async () => {
    t = await startTestServer({ backend });
    alice = await register("alice");
    bob = await register("bob");
  });
  afterAll(async () => {
    await t?.close();
  });

  it("createRoom with roomAliasName; createAlias, aliases and canonicalAlias agree with REST", async () => {
    const c = await ok(alice, CREATE, { input: { name: "Pond", roomAliasName: "pond", preset: "PUBLIC_CHAT" } });
    const roomId = c.createRoom.roomId;
    expect(c.createRoom.canonicalAlias).toBe("#pond:weft.test");
    expect(c.createRoom.aliases).toEqual(["#pond:weft.test"]);

    const a = await ok(alice, CREATE_ALIAS, { alias: "#pond2:weft.test", roomId });
    expect(a.createAlias.aliases.sort()).toEqual(["#pond2:weft.test", "#pond:weft.test"]);
    const rest = await t.call("GET", `${V3}/directory/room/${enc("#pond2:weft.test")}`);
    expect(rest.json.room_id).toBe(roomId);

    await fails(alice, CREATE_ALIAS, { alias: "#pond2:weft.test", roomId }, "M_UNKNOWN");
    await fails(alice, CREATE_ALIAS, { alias: "pond3", roomId }, "M_INVALID_PARAM");
    await fails(bob, CREATE_ALIAS, { alias: "#pond3:weft.test", roomId }, "M_FORBIDDEN");
    await fails(undefined, CREATE_ALIAS, { alias: "#pond3:weft.test", roomId }, "M_MISSING_TOKEN");
    await fails(alice, CREATE, { input: { roomAliasName: "pond" } }, "M_ROOM_IN_USE");

    // bob is not in the room: its aliases are not his to see.
    await fails(bob, ROOM, { roomId }, "M_FORBIDDEN");
    await ok(bob, `mutation ($id: String!) { joinRoom(roomIdOrAlias: $id) { roomId } }`, { id: "#pond:weft.test" });
    expect((await ok(bob, ROOM, { roomId })).room).toEqual({ roomId, name: "Pond", canonicalAlias: "#pond:weft.test", aliases: ["#pond:weft.test", "#pond2:weft.test"] });

    await fails(bob, DELETE_ALIAS, { alias: "#pond2:weft.test" }, "M_FORBIDDEN");
    expect((await ok(alice, DELETE_ALIAS, { alias: "#pond2:weft.test" })).deleteAlias).toBe(true);
    await fails(alice, DELETE_ALIAS, { alias: "#pond2:weft.test" }, "M_NOT_FOUND");
    expect((await ok(alice, ROOM, { roomId })).room.aliases).toEqual(["#pond:weft.test"]);
  });

  it("reads aliases of many rooms in one batch", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await ok(alice, CREATE, { input: { roomAliasName: `batch${i}` } })).createRoom.roomId);
    const q = `query { ${ids.map((id, i) => `r${i}: room(roomId: "${id}") { aliases canonicalAlias }`).join(" ")} }`;
    const spy: string[] = [];
    const directory = t.hs.services.directory;
    const original = directory.aliasesOfRooms.bind(directory);
    directory.aliasesOfRooms = async (roomIds) => {
      spy.push(roomIds.join(","));
      return original(roomIds);
    };
    try {
      const data = await ok(alice, q);
      ids.forEach((_, i) => expect(data[`r${i}`]).toEqual({ aliases: [`#batch${i}:weft.test`], canonicalAlias: `#batch${i}:weft.test` }));
    } finally {
      directory.aliasesOfRooms = original;
    }
    expect(spy).toHaveLength(1);
  });

  it("setRoomDirectoryVisibility and the publicRooms connection", async () => {
    const big = (await ok(alice, CREATE, { input: { name: "Big lake", topic: "Water", roomAliasName: "lake" } })).createRoom.roomId;
    const small = (await ok(alice, CREATE, { input: { name: "Small creek", creationContent: { type: "m.space" } } })).createRoom.roomId;
    await fails(bob, SET_VISIBILITY, { roomId: big, v: "PUBLIC" }, "M_FORBIDDEN");
    await fails(alice, SET_VISIBILITY, { roomId: "!nope:weft.test", v: "PUBLIC" }, "M_NOT_FOUND");
    expect((await ok(alice, SET_VISIBILITY, { roomId: big, v: "PUBLIC" })).setRoomDirectoryVisibility.roomId).toBe(big);
    await ok(alice, SET_VISIBILITY, { roomId: small, v: "PUBLIC" });
    await ok(alice, `mutation ($r: String!, $u: String!) { invite(roomId: $r, userId: $u) { roomId } }`, { r: big, u: bob.userId });
    await ok(bob, `mutation ($id: String!) { joinRoom(roomIdOrAlias: $id) { roomId } }`, { id: big });

    const all = (await ok(alice, PUBLIC, {})).publicRooms;
    expect(all.totalRoomCountEstimate).toBe(2);
    expect(all.edges.map((e: any) => e.node.roomId)).toEqual([big, small]);
    expect(all.edges[0].node).toEqual({
      roomId: big, name: "Big lake", topic: "Water", canonicalAlias: "#lake:weft.test", numJoinedMembers: 2,
      worldReadable: false, guestCanJoin: true, avatarUrl: null, joinRule: "invite", roomType: null,
    });
    expect(all.edges[1].node.roomType).toBe("m.space");
    // The same list over REST.
    const rest = await t.call("GET", `${V3}/publicRooms`, { token: alice.token });
    expect(rest.json.chunk.map((c: any) => c.room_id)).toEqual([big, small]);

    const p1 = (await ok(alice, PUBLIC, { first: 1 })).publicRooms;
    expect(p1.edges.map((e: any) => e.node.roomId)).toEqual([big]);
    expect(p1.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    const p2 = (await ok(alice, PUBLIC, { first: 1, after: p1.pageInfo.endCursor })).publicRooms;
    expect(p2.edges.map((e: any) => e.node.roomId)).toEqual([small]);
    expect(p2.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });

    expect((await ok(alice, PUBLIC, { filter: { genericSearchTerm: "CREEK" } })).publicRooms.edges.map((e: any) => e.node.roomId)).toEqual([small]);
    expect((await ok(alice, PUBLIC, { filter: { roomTypes: [null] } })).publicRooms.edges.map((e: any) => e.node.roomId)).toEqual([big]);

    await fails(undefined, PUBLIC, {}, "M_MISSING_TOKEN");
    await fails(alice, PUBLIC, { after: "garbage" }, "M_INVALID_PARAM");
    await fails(alice, PUBLIC, { first: -1 }, "M_INVALID_PARAM");
    await fails(alice, PUBLIC, { server: "other.example" }, "M_UNKNOWN"); // unreachable server: "Failed to fetch room list", as Synapse
  });

  it("upgradeRoom returns the replacement with the aliases moved", async () => {
    const roomId = (await ok(alice, CREATE, { input: { name: "Versioned", roomAliasName: "versioned", roomVersion: "10" } })).createRoom.roomId;
    const up = (await ok(alice, UPGRADE, { roomId, v: "11" })).upgradeRoom;
    expect(up.roomId).not.toBe(roomId);
    expect(up).toMatchObject({ roomVersion: "11", name: "Versioned", canonicalAlias: "#versioned:weft.test", aliases: ["#versioned:weft.test"] });
    expect((await ok(alice, ROOM, { roomId })).room.aliases).toEqual([]);
    await fails(alice, UPGRADE, { roomId: up.roomId, v: "999" }, "M_UNSUPPORTED_ROOM_VERSION");
    await fails(bob, UPGRADE, { roomId: up.roomId, v: "11" }, "M_FORBIDDEN");
  });
});
