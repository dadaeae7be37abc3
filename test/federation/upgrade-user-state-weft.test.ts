// Joining another server's replacement of a room, across two Weft servers over TLS on loopback (SQLite and
// PostgreSQL): when B's first user joins the new room, every B user of the old room carries over their
// push rules for it, their tags and m.direct entries, and B's aliases of it move (as Synapse does on a
// remote join); a room that
// names a predecessor whose tombstone does not point at it gets nothing (its word alone is not taken).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("joining a remote room's replacement on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let alice: Session;
  let bob: Session;
  let bob2: Session;

  beforeAll(async () => {
    [a, b] = await Promise.all([startFederatedServer({ backend }), startFederatedServer({ backend })]);
    alice = await registerUser(a, "alice");
    [bob, bob2] = await Promise.all([registerUser(b, "bob"), registerUser(b, "bob2")]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  async function ok(t: FederatedServer, who: Session, method: string, path: string, body: unknown = method === "GET" ? undefined : {}) {
    const res = await t.call(method, `${V3}${path}`, { token: who.access_token, body });
    expect(res.status, `${method} ${path}: ${JSON.stringify(res.json)}`).toBe(200);
    return res.json;
  }

  /** A room of A that both B users joined, with a push rule each (and bob's tag and m.direct entry). */
  async function roomWithState(): Promise<string> {
    const roomId = await createRoom(a, alice, { preset: "public_chat", room_version: "10" });
    await ok(b, bob, "POST", `/join/${enc(roomId)}?via=${enc(a.serverName)}`);
    await ok(b, bob2, "POST", `/join/${enc(roomId)}`);
    for (const who of [bob, bob2]) await ok(b, who, "PUT", `/pushrules/global/room/${enc(roomId)}`, { actions: ["dont_notify"] });
    await ok(b, bob, "PUT", `/user/${enc(bob.user_id)}/rooms/${enc(roomId)}/tags/m.favourite`, { order: 0.5 });
    await ok(b, bob, "PUT", `/user/${enc(bob.user_id)}/account_data/m.direct`, { [alice.user_id]: [roomId] });
    return roomId;
  }

  const ruleOf = async (who: Session, roomId: string) => (await b.call("GET", `${V3}/pushrules/global/room/${enc(roomId)}`, { token: who.access_token })).json;

  it("B's users of the old room carry their push rules, tags and m.direct over when B joins the new room", async () => {
    const roomId = await roomWithState();
    const alias = `#followed${Date.now()}:${b.serverName}`;
    await ok(b, bob, "PUT", `/directory/room/${enc(alias)}`, { room_id: roomId });
    const up = await ok(a, alice, "POST", `/rooms/${enc(roomId)}/upgrade`, { new_version: "11" });
    const newRoom = up.replacement_room as string;
    await eventually(async () => (await b.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.tombstone`, { token: bob.access_token })).status === 200, "the tombstone reaching B");

    await ok(b, bob, "POST", `/join/${enc(newRoom)}?via=${enc(a.serverName)}`);
    // Both B users: bob2 has not joined the new room yet.
    for (const who of [bob, bob2]) expect(await ruleOf(who, newRoom)).toMatchObject({ rule_id: newRoom, actions: ["dont_notify"], enabled: true });
    const tags = await ok(b, bob, "GET", `/user/${enc(bob.user_id)}/rooms/${enc(newRoom)}/tags`);
    expect(tags.tags).toEqual({ "m.favourite": { order: 0.5 } });
    const direct = await ok(b, bob, "GET", `/user/${enc(bob.user_id)}/account_data/m.direct`);
    expect(direct[alice.user_id]).toEqual([roomId, newRoom]);
    // The old room's rules stay; B's alias of it now names the new room.
    expect(await ruleOf(bob, roomId)).toMatchObject({ rule_id: roomId });
    expect((await ok(b, bob, "GET", `/directory/room/${enc(alias)}`)).room_id).toBe(newRoom);
  });

  it("a room naming a predecessor whose tombstone does not point at it carries nothing over", async () => {
    const roomId = await roomWithState();
    const claimant = await createRoom(a, alice, { preset: "public_chat", room_version: "11", creation_content: { predecessor: { room_id: roomId } } });
    await ok(b, bob, "POST", `/join/${enc(claimant)}?via=${enc(a.serverName)}`);
    for (const who of [bob, bob2]) expect((await b.call("GET", `${V3}/pushrules/global/room/${enc(claimant)}`, { token: who.access_token })).status).toBe(404);
    const direct = await ok(b, bob, "GET", `/user/${enc(bob.user_id)}/account_data/m.direct`);
    expect(direct[alice.user_id]).toEqual([roomId]);
  });
});
