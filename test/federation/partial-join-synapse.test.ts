// Partial-state joins between Weft (SQLite and PostgreSQL) and a live Synapse over TLS on loopback: a Weft
// user joins a Synapse room of several members with omit_members (Synapse serves partial state: Weft holds
// the room partial until its resync, held back here, fetches the rest from Synapse), and a Synapse user
// joins a Weft room of several members (Synapse asks with omit_members for a room it is not in; Weft serves
// partial state and then Synapse's own resync fetches the rest from Weft). Each side's member list ends
// complete, read from its own client API.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { startSynapse, type SynapseServer } from "../helpers/synapse.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { isPartialState } from "../../src/domain/federation/partial-state/flag.ts";
import { holdStateFetches } from "../helpers/partial-state.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const OTHERS = 4;

type Who = { user_id: string; access_token: string };

describe.each(backends())("partial-state joins between Weft (%s) and Synapse", (backend) => {
  let weft: FederatedServer;
  let syn: SynapseServer;
  let alice: Session;
  let sam: Who;

  beforeAll(async () => {
    weft = await startFederatedServer({ backend });
    syn = await startSynapse();
    alice = await registerUser(weft, "alice");
    sam = await syn.register("sam");
  }, 600_000);
  afterAll(async () => {
    await Promise.all([syn?.close(), weft?.close()]);
  });

  it("a Weft user joins a Synapse room with omit_members: partial until Weft's resync, then every member", async () => {
    const created = await syn.call("POST", `${V3}/createRoom`, { token: sam.access_token, body: { preset: "public_chat", name: "Synapse partial" } });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const roomId = created.json.room_id as string;
    const others: Who[] = [];
    for (let i = 0; i < OTHERS; i++) {
      const u = await syn.register(`member${i}`);
      const j = await syn.call("POST", `${V3}/join/${enc(roomId)}`, { token: u.access_token, body: {} });
      expect(j.status).toBe(200);
      others.push(u);
    }
    const hold = holdStateFetches(weft.hs.services);
    const res = await weft.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(syn.serverName)}`, { token: alice.access_token, body: {} });
    expect(res.status, JSON.stringify(res.json) + syn.logTail(30)).toBe(200);
    // Synapse left the members out (else the room would not be partial here).
    expect(await isPartialState(weft.hs.services, roomId)).toBe(true);
    await eventually(() => hold.held() > 0, "Weft's resync asking Synapse for the state");
    // A message goes through while partial.
    const sent = await weft.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/p1`, { token: alice.access_token, body: { msgtype: "m.text", body: "partial hello" } });
    expect(sent.status).toBe(200);
    await eventually(async () => {
      const r = await syn.call("GET", `${V3}/rooms/${enc(roomId)}/event/${enc(sent.json.event_id)}`, { token: sam.access_token });
      return r.status === 200;
    }, "Synapse receiving the message sent while partial", 30_000);
    hold.release();
    const members = await weft.call("GET", `${V3}/rooms/${enc(roomId)}/joined_members`, { token: alice.access_token });
    expect(members.status).toBe(200);
    expect(Object.keys(members.json.joined).sort()).toEqual([sam.user_id, alice.user_id, ...others.map((o) => o.user_id)].sort());
    expect(await isPartialState(weft.hs.services, roomId)).toBe(false);
  }, 120_000);

  it("a Synapse user joins a Weft room (Synapse asks for partial state): Synapse ends with every member", async () => {
    const roomId = await createRoom(weft, alice, { preset: "public_chat", name: "Weft partial" });
    const locals: Session[] = [];
    for (let i = 0; i < OTHERS; i++) {
      const u = await registerUser(weft, `local${i}`);
      const j = await weft.call("POST", `${V3}/join/${enc(roomId)}`, { token: u.access_token, body: {} });
      expect(j.status).toBe(200);
      locals.push(u);
    }
    const res = await syn.call("POST", `${V3}/join/${enc(roomId)}?server_name=${enc(weft.serverName)}`, { token: sam.access_token, body: {} });
    expect(res.status, JSON.stringify(res.json) + syn.logTail(30)).toBe(200);
    // Synapse's /members waits for its full state, then names everyone.
    const want = [alice.user_id, sam.user_id, ...locals.map((l) => l.user_id)].sort();
    const members = await eventually(async () => {
      const r = await syn.call("GET", `${V3}/rooms/${enc(roomId)}/members?membership=join`, { token: sam.access_token });
      const ids = r.status === 200 ? (r.json.chunk as { state_key: string }[]).map((e) => e.state_key).sort() : [];
      return ids.length === want.length ? ids : undefined;
    }, "Synapse's member list complete", 60_000);
    expect(members).toEqual(want);
    // Messages flow from Weft to Synapse.
    const sent = await weft.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/q1`, { token: locals[0]!.access_token, body: { msgtype: "m.text", body: "to synapse" } });
    await eventually(async () => (await syn.call("GET", `${V3}/rooms/${enc(roomId)}/event/${enc(sent.json.event_id)}`, { token: sam.access_token })).status === 200, "Synapse receiving Weft's message", 30_000);
  }, 120_000);
});
