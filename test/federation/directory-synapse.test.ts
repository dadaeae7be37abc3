// Directories and room upgrades between Weft (SQLite and PostgreSQL) and a live Synapse over TLS on
// loopback: each side's client lists the other's published rooms (/publicRooms?server=, with a filter);
// each side's /hierarchy walks into a space held by the other (Synapse reads Weft's federation
// /hierarchy, Weft reads Synapse's); a room upgraded on one server is followed from the other (the
// tombstone arrives, the user joins the replacement through its server). Each side is read from its own
// client API.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { startSynapse, type SynapseServer } from "../helpers/synapse.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";

const V3 = "/_matrix/client/v3";
const V1 = "/_matrix/client/v1";
const enc = encodeURIComponent;

type Caller = { call(method: string, p: string, o?: { body?: unknown; token?: string }): Promise<{ status: number; json: any }> };
type Who = { user_id: string; access_token: string };

const ids = (chunk: { room_id: string }[]) => chunk.map((c) => c.room_id);

async function stateOf(t: Caller, who: Who, roomId: string, type: string): Promise<any> {
  const res = await t.call("GET", `${V3}/rooms/${enc(roomId)}/state/${type}`, { token: who.access_token });
  return res.status === 200 ? res.json : undefined;
}

describe.each(backends())("directories and upgrades between Weft (%s) and Synapse", (backend) => {
  let weft: FederatedServer;
  let syn: SynapseServer;
  let alice: Session;
  let sam: Who;

  beforeAll(async () => {
    weft = await startFederatedServer({ backend, config: { allow_public_rooms_over_federation: true } });
    syn = await startSynapse();
    alice = await registerUser(weft, "alice");
    sam = await syn.register("sam");
  }, 600_000);
  afterAll(async () => {
    await Promise.all([syn?.close(), weft?.close()]);
  });

  it("each side's client lists the other's published rooms, with and without a filter", async () => {
    const weftRoom = await createRoom(weft, alice, { preset: "public_chat", visibility: "public", name: "Weft plaza" });
    const created = await syn.call("POST", `${V3}/createRoom`, { token: sam.access_token, body: { preset: "public_chat", visibility: "public", name: "Synapse plaza" } });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const synRoom = created.json.room_id as string;

    const fromSyn = await syn.call("GET", `${V3}/publicRooms?server=${enc(weft.serverName)}`, { token: sam.access_token });
    expect(fromSyn.status, JSON.stringify(fromSyn.json) + syn.logTail(20)).toBe(200);
    expect(ids(fromSyn.json.chunk)).toContain(weftRoom);
    const filteredSyn = await syn.call("POST", `${V3}/publicRooms?server=${enc(weft.serverName)}`, { token: sam.access_token, body: { filter: { generic_search_term: "plaza" } } });
    expect(ids(filteredSyn.json.chunk)).toEqual([weftRoom]);

    const fromWeft = await weft.call("GET", `${V3}/publicRooms?server=${enc(syn.serverName)}`, { token: alice.access_token });
    expect(fromWeft.status, JSON.stringify(fromWeft.json)).toBe(200);
    expect(fromWeft.json.chunk.find((c: { room_id: string }) => c.room_id === synRoom)).toMatchObject({ name: "Synapse plaza", num_joined_members: 1 });
    const filteredWeft = await weft.call("POST", `${V3}/publicRooms?server=${enc(syn.serverName)}`, { token: alice.access_token, body: { filter: { generic_search_term: "plaza" } } });
    expect(ids(filteredWeft.json.chunk)).toEqual([synRoom]);
  }, 60_000);

  it("Synapse's /hierarchy walks into a Weft space, and Weft's into a Synapse space", async () => {
    // Weft holds a space with a public room; Synapse's space names the Weft space as a child.
    const weftSpace = await createRoom(weft, alice, { preset: "public_chat", name: "Weft space", creation_content: { type: "m.space" } });
    const weftRoom = await createRoom(weft, alice, { preset: "public_chat", name: "Weft child" });
    const weftClosed = await createRoom(weft, alice, { preset: "private_chat", name: "Weft closed" });
    for (const c of [weftRoom, weftClosed])
      expect((await weft.call("PUT", `${V3}/rooms/${enc(weftSpace)}/state/m.space.child/${enc(c)}`, { token: alice.access_token, body: { via: [weft.serverName] } })).status).toBe(200);
    const synSpace = (await syn.call("POST", `${V3}/createRoom`, { token: sam.access_token, body: { preset: "public_chat", name: "Synapse space", creation_content: { type: "m.space" } } })).json.room_id as string;
    const synRoom = (await syn.call("POST", `${V3}/createRoom`, { token: sam.access_token, body: { preset: "public_chat", name: "Synapse child" } })).json.room_id as string;
    expect((await syn.call("PUT", `${V3}/rooms/${enc(synSpace)}/state/m.space.child/${enc(weftSpace)}`, { token: sam.access_token, body: { via: [weft.serverName], order: "1" } })).status).toBe(200);
    expect((await syn.call("PUT", `${V3}/rooms/${enc(synSpace)}/state/m.space.child/${enc(synRoom)}`, { token: sam.access_token, body: { via: [syn.serverName], order: "2" } })).status).toBe(200);

    const onSyn = await syn.call("GET", `${V1}/rooms/${enc(synSpace)}/hierarchy`, { token: sam.access_token });
    expect(onSyn.status, JSON.stringify(onSyn.json) + syn.logTail(20)).toBe(200);
    const synIds = ids(onSyn.json.rooms);
    expect(synIds).toEqual(expect.arrayContaining([synSpace, weftSpace, weftRoom, synRoom]));
    expect(synIds).not.toContain(weftClosed);
    expect(onSyn.json.rooms.find((r: { room_id: string }) => r.room_id === weftSpace)).toMatchObject({ name: "Weft space", room_type: "m.space" });

    // The other way: Weft's space names Synapse's space (which names Weft's space back: visited once).
    const home = await createRoom(weft, alice, { preset: "public_chat", name: "Weft home", creation_content: { type: "m.space" } });
    expect((await weft.call("PUT", `${V3}/rooms/${enc(home)}/state/m.space.child/${enc(synSpace)}`, { token: alice.access_token, body: { via: [syn.serverName] } })).status).toBe(200);
    const onWeft = await weft.call("GET", `${V1}/rooms/${enc(home)}/hierarchy`, { token: alice.access_token });
    expect(onWeft.status, JSON.stringify(onWeft.json)).toBe(200);
    const weftIds = ids(onWeft.json.rooms);
    expect(weftIds.slice(0, 2)).toEqual([home, synSpace]);
    expect(weftIds).toEqual(expect.arrayContaining([synRoom, weftSpace, weftRoom]));
    expect(new Set(weftIds).size).toBe(weftIds.length);
    expect(onWeft.json.rooms.find((r: { room_id: string }) => r.room_id === synRoom)).toMatchObject({ name: "Synapse child", join_rule: "public" });
  }, 60_000);

  it("a Weft room upgraded by Weft's moderator is followed by a Synapse user, and a Synapse room's upgrade by a Weft user", async () => {
    const roomId = await createRoom(weft, alice, { preset: "public_chat", room_version: "10", name: "Upgrading on Weft" });
    expect((await syn.call("POST", `${V3}/join/${enc(roomId)}?server_name=${enc(weft.serverName)}`, { token: sam.access_token, body: {} })).status).toBe(200);
    const up = await weft.call("POST", `${V3}/rooms/${enc(roomId)}/upgrade`, { token: alice.access_token, body: { new_version: "11" } });
    expect(up.status, JSON.stringify(up.json)).toBe(200);
    const newRoom = up.json.replacement_room as string;
    const tomb = await eventually(() => stateOf(syn, sam, roomId, "m.room.tombstone"), "the tombstone reaching Synapse", 30_000);
    expect(tomb.replacement_room).toBe(newRoom);
    const follow = await syn.call("POST", `${V3}/join/${enc(newRoom)}?server_name=${enc(weft.serverName)}`, { token: sam.access_token, body: {} });
    expect(follow.status, JSON.stringify(follow.json) + syn.logTail(20)).toBe(200);
    expect((await stateOf(syn, sam, newRoom, "m.room.create")).predecessor.room_id).toBe(roomId);
    expect((await stateOf(weft, alice, newRoom, `m.room.member/${enc(sam.user_id)}`)).membership).toBe("join");

    const created = await syn.call("POST", `${V3}/createRoom`, { token: sam.access_token, body: { preset: "public_chat", room_version: "10", name: "Upgrading on Synapse" } });
    const synRoom = created.json.room_id as string;
    expect((await weft.call("POST", `${V3}/join/${enc(synRoom)}?via=${enc(syn.serverName)}`, { token: alice.access_token, body: {} })).status).toBe(200);
    await eventually(async () => (await stateOf(syn, sam, synRoom, `m.room.member/${enc(alice.user_id)}`))?.membership === "join", "Synapse to see alice joined");
    const synUp = await syn.call("POST", `${V3}/rooms/${enc(synRoom)}/upgrade`, { token: sam.access_token, body: { new_version: "11" } });
    expect(synUp.status, JSON.stringify(synUp.json)).toBe(200);
    const synNew = synUp.json.replacement_room as string;
    const synTomb = await eventually(() => stateOf(weft, alice, synRoom, "m.room.tombstone"), "Synapse's tombstone reaching Weft", 30_000);
    expect(synTomb.replacement_room).toBe(synNew);
    const weftFollow = await weft.call("POST", `${V3}/join/${enc(synNew)}?via=${enc(syn.serverName)}`, { token: alice.access_token, body: {} });
    expect(weftFollow.status, JSON.stringify(weftFollow.json)).toBe(200);
    expect((await stateOf(weft, alice, synNew, "m.room.create")).predecessor.room_id).toBe(synRoom);
    await eventually(async () => (await stateOf(syn, sam, synNew, `m.room.member/${enc(alice.user_id)}`))?.membership === "join", "Synapse to see alice in the new room", 30_000);
  }, 90_000);
});
