// Directories across two Weft servers over TLS (SQLite and PostgreSQL), the gaps left by issue 15: A's
// /hierarchy over federation applies each room's server ACL to the requesting server (a denied room is
// 403 M_FORBIDDEN, a denied child is named inaccessible), and A's federation /publicRooms leaves the rooms
// that do not federate out before paging, so each page is full and its tokens continue where it stops.
// B's local /hierarchy that walks into A's rooms asks A once for each remote room, however many pages its
// client reads (the answers are cached, as Synapse's). A is named `localhost:PORT` and B by IP literal, so
// an ACL denying "127.0.0.1" shuts out B only.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { signedCall, signerOf } from "../helpers/by-hand.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const V3 = "/_matrix/client/v3";
const FED = "/_matrix/federation/v1";
const V1 = "/_matrix/client/v1";
const enc = encodeURIComponent;

describe.each(backends())("directory gaps across Weft servers on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let alice: Session;
  let carol: Session;

  beforeAll(async () => {
    [a, b] = await Promise.all([startFederatedServer({ backend, name: "localhost", config: { allow_public_rooms_over_federation: true } }), startFederatedServer({ backend })]);
    [alice, carol] = await Promise.all([registerUser(a, "alice"), registerUser(a, "carol")]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  const fromB = (method: "GET" | "POST", path: string, body?: unknown) => signedCall(signerOf(b), a, method, path, body);
  const put = async (roomId: string, type: string, stateKey: string, content: Record<string, unknown>) => {
    const res = await a.call("PUT", `${V3}/rooms/${enc(roomId)}/state/${type}/${enc(stateKey)}`, { token: alice.access_token, body: content });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
  };
  const DENY_B = { allow: ["*"], deny: ["127.0.0.1"], allow_ip_literals: true };

  it("/hierarchy over federation: a room whose ACL denies the requesting server is 403, a denied child inaccessible", async () => {
    const space = await createRoom(a, alice, { preset: "public_chat", name: "ACL space", creation_content: { type: "m.space" } });
    const open = await createRoom(a, alice, { preset: "public_chat", name: "Open to B" });
    const shut = await createRoom(a, alice, { preset: "public_chat", name: "Shut to B" });
    await put(space, "m.space.child", open, { via: [a.serverName] });
    await put(space, "m.space.child", shut, { via: [a.serverName] });

    // Before any ACL: both children summarised.
    const before = await fromB("GET", `${FED}/hierarchy/${enc(space)}`);
    expect(before.status, JSON.stringify(before.json)).toBe(200);
    expect(before.json.children.map((c: { room_id: string }) => c.room_id).sort()).toEqual([open, shut].sort());

    await put(shut, "m.room.server_acl", "", DENY_B);
    const res = await fromB("GET", `${FED}/hierarchy/${enc(space)}`);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "GET", "/_matrix/federation/v1/hierarchy/{roomId}");
    expect(res.json.children.map((c: { room_id: string }) => c.room_id)).toEqual([open]);
    expect(res.json.inaccessible_children).toEqual([shut]);
    const direct = await fromB("GET", `${FED}/hierarchy/${enc(shut)}`);
    expect([direct.status, direct.json.errcode]).toEqual([403, "M_FORBIDDEN"]);

    // The space itself denying B: 403 for the whole answer.
    await put(space, "m.room.server_acl", "", DENY_B);
    const denied = await fromB("GET", `${FED}/hierarchy/${enc(space)}`);
    expect([denied.status, denied.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    // A room B could not see anyway stays a 404, ACL or not (the answer reveals nothing of it).
    const hidden = await createRoom(a, alice, { preset: "private_chat", name: "Hidden" });
    await put(hidden, "m.room.server_acl", "", DENY_B);
    const unknown = await fromB("GET", `${FED}/hierarchy/${enc(hidden)}`);
    expect([unknown.status, unknown.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    // Lifted: the space answers again.
    await put(space, "m.room.server_acl", "", { allow: ["*"] });
    expect((await fromB("GET", `${FED}/hierarchy/${enc(space)}`)).status).toBe(200);
  });

  it("/publicRooms over federation with a filter: rooms that do not federate are left out before paging", async () => {
    // Three rooms that do not federate with two members each (first in the directory's order), then three that do.
    const local: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = await createRoom(a, alice, { preset: "public_chat", visibility: "public", name: `pagetest local ${i}`, creation_content: { "m.federate": false } });
      const join = await a.call("POST", `${V3}/join/${enc(id)}`, { token: carol.access_token, body: {} });
      expect(join.status).toBe(200);
      local.push(id);
    }
    const federating: string[] = [];
    for (let i = 0; i < 3; i++) federating.push(await createRoom(a, alice, { preset: "public_chat", visibility: "public", name: `pagetest shared ${i}` }));
    const order = [...federating].sort();

    // A's own clients see all six, the rooms that do not federate first.
    const own = await a.call("POST", `${V3}/publicRooms`, { token: alice.access_token, body: { filter: { generic_search_term: "pagetest" } } });
    expect(own.json.chunk.map((c: { room_id: string }) => c.room_id)).toEqual([...[...local].sort(), ...order]);

    const filter = { generic_search_term: "pagetest" };
    const first = await fromB("POST", `${FED}/publicRooms`, { limit: 2, filter });
    expect(first.status, JSON.stringify(first.json)).toBe(200);
    expect(first.json.chunk.map((c: { room_id: string }) => c.room_id)).toEqual(order.slice(0, 2));
    expect(first.json.next_batch).toEqual(expect.any(String));
    expect(first.json.prev_batch).toBeUndefined();
    const second = await fromB("POST", `${FED}/publicRooms`, { limit: 2, filter, since: first.json.next_batch });
    expect(second.status).toBe(200);
    expect(second.json.chunk.map((c: { room_id: string }) => c.room_id)).toEqual(order.slice(2));
    expect(second.json.next_batch).toBeUndefined();
    // Back from the second page: the first again, and nothing before it (the rooms that do not federate are not there).
    const back = await fromB("POST", `${FED}/publicRooms`, { limit: 2, filter, since: second.json.prev_batch });
    expect(back.json.chunk.map((c: { room_id: string }) => c.room_id)).toEqual(order.slice(0, 2));
    expect(back.json.prev_batch).toBeUndefined();
    // The page B's client reads through its own server is the same.
    const bob = await registerUser(b, "bob");
    const viaB = await b.call("POST", `${V3}/publicRooms?server=${enc(a.serverName)}`, { token: bob.access_token, body: { limit: 2, filter } });
    expect(viaB.status, JSON.stringify(viaB.json)).toBe(200);
    expect(viaB.json.chunk.map((c: { room_id: string }) => c.room_id)).toEqual(order.slice(0, 2));
  });

  it("a local /hierarchy paging through rooms on A asks A once per remote room", async () => {
    const bob = await registerUser(b, "bobwalker");
    const remoteSpace = await createRoom(a, alice, { preset: "public_chat", name: "A's paged space", creation_content: { type: "m.space" } });
    const rooms: string[] = [];
    for (let i = 0; i < 4; i++) {
      const id = await createRoom(a, alice, { preset: "public_chat", name: `A room ${i}` });
      await put(remoteSpace, "m.space.child", id, { via: [a.serverName], order: String(i) });
      rooms.push(id);
    }
    const home = await createRoom(b, bob, { preset: "public_chat", name: "B's walking space", creation_content: { type: "m.space" } });
    const child = await b.call("PUT", `${V3}/rooms/${enc(home)}/state/m.space.child/${enc(remoteSpace)}`, { token: bob.access_token, body: { via: [a.serverName] } });
    expect(child.status).toBe(200);

    // Count B's requests for A's rooms' hierarchy.
    const fed = b.hs.services.federation;
    const original = fed.getJson.bind(fed);
    const asked: string[] = [];
    fed.getJson = (async (dest: string, path: string, ...rest: unknown[]) => {
      if (path.startsWith(`${FED}/hierarchy/`)) asked.push(decodeURIComponent(path.slice(`${FED}/hierarchy/`.length)));
      return (original as (...x: unknown[]) => Promise<unknown>)(dest, path, ...rest);
    }) as typeof fed.getJson;
    try {
      const seen: string[] = [];
      let from: string | undefined;
      let pages = 0;
      do {
        const res = await b.call("GET", `${V1}/rooms/${enc(home)}/hierarchy?limit=2${from ? `&from=${enc(from)}` : ""}`, { token: bob.access_token });
        expect(res.status, JSON.stringify(res.json)).toBe(200);
        seen.push(...res.json.rooms.map((r: { room_id: string }) => r.room_id));
        from = res.json.next_batch;
        pages++;
      } while (from && pages < 10);
      expect(seen).toEqual([home, remoteSpace, ...rooms]);
      expect(pages).toBe(3);
      // A's space was asked once; its rooms came with its answer.
      expect(asked).toEqual([remoteSpace]);
    } finally {
      fed.getJson = original as typeof fed.getJson;
    }
  });
});
