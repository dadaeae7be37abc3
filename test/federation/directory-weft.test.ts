// Directories across two Weft servers over TLS on loopback (SQLite and PostgreSQL): B's client lists A's
// published rooms (/publicRooms?server=A, GET and POST with a filter), never seeing A's rooms that do not
// federate; A answers GET /_matrix/federation/v1/hierarchy/{roomId} (suggested_only, inaccessible
// children, 404 for a room B's server could not peek or join); B's /hierarchy walks from a space of B into
// a space that lives on A (through the child's via) and on into A's rooms, showing only what B's user
// may see. A room's m.room.canonical_alias may list B's aliases only when B says they point at it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { federationCall, signedBy, startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const V3 = "/_matrix/client/v3";
const V1 = "/_matrix/client/v1";
const FED = "/_matrix/federation/v1";
const enc = encodeURIComponent;

describe.each(backends())("directories across Weft servers on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let alice: Session;
  let bob: Session;

  beforeAll(async () => {
    [a, b] = await Promise.all([startFederatedServer({ backend, config: { allow_public_rooms_over_federation: true } }), startFederatedServer({ backend })]);
    [alice, bob] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob")]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  function fed(path: string) {
    const r = { method: "GET" as const, path };
    return federationCall(a.baseUrl, { ...r, authorization: signedBy(b.serverName, b.hs.services.signingKeys[0]!, a.serverName, r) });
  }

  const child = (t: FederatedServer, who: Session, parent: string, childId: string, content: Record<string, unknown>) =>
    t.call("PUT", `${V3}/rooms/${enc(parent)}/state/m.space.child/${enc(childId)}`, { token: who.access_token, body: content });

  it("B's client lists A's published rooms, GET and POST with a filter; A's rooms that do not federate are never listed", async () => {
    const listed = await createRoom(a, alice, { preset: "public_chat", visibility: "public", name: "Federated lobby" });
    const local = await createRoom(a, alice, { preset: "public_chat", visibility: "public", name: "Federated-not lobby", creation_content: { "m.federate": false } });
    // A's own clients see both.
    const own = await a.call("GET", `${V3}/publicRooms`, { token: alice.access_token });
    expect(own.json.chunk.map((c: { room_id: string }) => c.room_id)).toEqual(expect.arrayContaining([listed, local]));

    const got = await b.call("GET", `${V3}/publicRooms?server=${enc(a.serverName)}`, { token: bob.access_token });
    expect(got.status, JSON.stringify(got.json)).toBe(200);
    expectMatchesSpec(got, "GET", "/_matrix/client/v3/publicRooms");
    const ids = got.json.chunk.map((c: { room_id: string }) => c.room_id);
    expect(ids).toContain(listed);
    expect(ids).not.toContain(local);
    expect(got.json.chunk.find((c: { room_id: string }) => c.room_id === listed)).toMatchObject({ name: "Federated lobby", num_joined_members: 1, join_rule: "public" });

    const filtered = await b.call("POST", `${V3}/publicRooms?server=${enc(a.serverName)}`, { token: bob.access_token, body: { filter: { generic_search_term: "lobby" } } });
    expect(filtered.status, JSON.stringify(filtered.json)).toBe(200);
    expect(filtered.json.chunk.map((c: { room_id: string }) => c.room_id)).toEqual([listed]);
    const none = await b.call("POST", `${V3}/publicRooms?server=${enc(a.serverName)}`, { token: bob.access_token, body: { filter: { generic_search_term: "no such room anywhere" } } });
    expect(none.json.chunk).toEqual([]);
  });

  it("A answers /hierarchy over federation: the space, its accessible children (suggested_only), the inaccessible ones named; 404 for a room B could not join", async () => {
    const space = await createRoom(a, alice, { preset: "public_chat", name: "A space", creation_content: { type: "m.space" } });
    const open = await createRoom(a, alice, { preset: "public_chat", name: "Open" });
    const closed = await createRoom(a, alice, { preset: "private_chat", name: "Closed" });
    const other = await createRoom(a, alice, { preset: "public_chat", name: "Other" });
    expect((await child(a, alice, space, open, { via: [a.serverName], suggested: true })).status).toBe(200);
    expect((await child(a, alice, space, closed, { via: [a.serverName], suggested: true })).status).toBe(200);
    expect((await child(a, alice, space, other, { via: [a.serverName] })).status).toBe(200);

    const res = await fed(`${FED}/hierarchy/${enc(space)}`);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "GET", "/_matrix/federation/v1/hierarchy/{roomId}");
    expect(res.json.room).toMatchObject({ room_id: space, name: "A space", room_type: "m.space", join_rule: "public", num_joined_members: 1 });
    expect(res.json.room.children_state.map((e: { state_key: string }) => e.state_key).sort()).toEqual([open, closed, other].sort());
    expect(res.json.children.map((c: { room_id: string }) => c.room_id).sort()).toEqual([open, other].sort());
    expect(res.json.inaccessible_children).toEqual([closed]);

    const suggested = await fed(`${FED}/hierarchy/${enc(space)}?suggested_only=true`);
    expect(suggested.json.children.map((c: { room_id: string }) => c.room_id)).toEqual([open]);
    expect(suggested.json.inaccessible_children).toEqual([closed]);

    const refused = await fed(`${FED}/hierarchy/${enc(closed)}`);
    expect([refused.status, refused.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    const unknown = await fed(`${FED}/hierarchy/${enc(`!nowhere:${a.serverName}`)}`);
    expect([unknown.status, unknown.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
  });

  it("B's /hierarchy walks from B's space into a space on A and its rooms, showing only what bob may see", async () => {
    const remoteSpace = await createRoom(a, alice, { preset: "public_chat", name: "A's space", creation_content: { type: "m.space" } });
    const open = await createRoom(a, alice, { preset: "public_chat", name: "A open room" });
    const closed = await createRoom(a, alice, { preset: "private_chat", name: "A closed room" });
    expect((await child(a, alice, remoteSpace, open, { via: [a.serverName], order: "a" })).status).toBe(200);
    expect((await child(a, alice, remoteSpace, closed, { via: [a.serverName], order: "b" })).status).toBe(200);

    const home = await createRoom(b, bob, { preset: "public_chat", name: "B's space", creation_content: { type: "m.space" } });
    const homeRoom = await createRoom(b, bob, { preset: "public_chat", name: "B room" });
    expect((await child(b, bob, home, remoteSpace, { via: [a.serverName], order: "1" })).status).toBe(200);
    expect((await child(b, bob, home, homeRoom, { via: [b.serverName], order: "2" })).status).toBe(200);
    // B holds nothing of A's rooms.
    expect(await b.hs.services.rooms.store.getRoom(remoteSpace)).toBeUndefined();

    const res = await b.call("GET", `${V1}/rooms/${enc(home)}/hierarchy`, { token: bob.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "GET", "/_matrix/client/v1/rooms/{roomId}/hierarchy");
    // Depth first, in `order`: B's space, A's space, A's open room, then B's room; A's closed room hidden.
    expect(res.json.rooms.map((r: { room_id: string }) => r.room_id)).toEqual([home, remoteSpace, open, homeRoom]);
    const bySummary = new Map(res.json.rooms.map((r: { room_id: string; name?: string }) => [r.room_id, r]));
    expect(bySummary.get(remoteSpace)).toMatchObject({ name: "A's space", room_type: "m.space", num_joined_members: 1 });
    expect(bySummary.get(open)).toMatchObject({ name: "A open room", join_rule: "public" });

    // max_depth 1 stops at A's space.
    const shallow = await b.call("GET", `${V1}/rooms/${enc(home)}/hierarchy?max_depth=1`, { token: bob.access_token });
    expect(shallow.json.rooms.map((r: { room_id: string }) => r.room_id)).toEqual([home, remoteSpace, homeRoom]);
  });

  it("m.room.canonical_alias on A lists an alias of B only when B says it points at the room (else M_BAD_ALIAS)", async () => {
    const roomId = await createRoom(a, alice, { preset: "public_chat" });
    const join = await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: bob.access_token, body: {} });
    expect(join.status, JSON.stringify(join.json)).toBe(200);
    const mine = `#canon-here:${b.serverName}`;
    expect((await b.call("PUT", `${V3}/directory/room/${enc(mine)}`, { token: bob.access_token, body: { room_id: roomId } })).status).toBe(200);
    const bobsRoom = await createRoom(b, bob);
    const elsewhere = `#canon-elsewhere:${b.serverName}`;
    expect((await b.call("PUT", `${V3}/directory/room/${enc(elsewhere)}`, { token: bob.access_token, body: { room_id: bobsRoom } })).status).toBe(200);

    const path = `${V3}/rooms/${enc(roomId)}/state/m.room.canonical_alias/`;
    const put = (content: unknown) => a.call("PUT", path, { token: alice.access_token, body: content });
    for (const content of [{ alias: elsewhere }, { alt_aliases: [`#canon-nobody:${b.serverName}`] }, { alias: mine, alt_aliases: [elsewhere] }]) {
      const res = await put(content);
      expect([res.status, res.json.errcode], JSON.stringify(content)).toEqual([400, "M_BAD_ALIAS"]);
    }
    const ok = await put({ alias: mine, alt_aliases: [mine] });
    expect(ok.status, JSON.stringify(ok.json)).toBe(200);
    expectMatchesSpec(ok, "PUT", path);
    expect((await a.call("GET", path, { token: alice.access_token })).json).toEqual({ alias: mine, alt_aliases: [mine] });
  });
});
