// A server ACL that shuts a live Synapse out of a Weft room (SQLite and PostgreSQL). Weft is named
// `localhost:PORT` and Synapse `127.0.0.1:PORT`, so an ACL denying "127.0.0.1" shuts out Synapse alone:
// the Synapse user's messages reach Weft and are refused ("Server is banned from room"), its typing is
// dropped, and after the ACL itself (which still reaches Synapse) Weft's sender no longer sends the room's
// events to Synapse; lifted, both ways work again.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { startSynapse, type SynapseServer } from "../helpers/synapse.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { destinationsOfEvents, remoteServersInRoom } from "../../src/domain/federation/room-servers.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("a server ACL between Weft (%s) and Synapse", (backend) => {
  let weft: FederatedServer;
  let syn: SynapseServer;
  let alice: Session;
  let sam: { user_id: string; access_token: string };
  let roomId: string;
  let txn = 0;

  beforeAll(async () => {
    [weft, syn] = await Promise.all([startFederatedServer({ backend, name: "localhost" }), startSynapse()]);
    alice = await registerUser(weft, "alice");
    sam = await syn.register("sam");
    roomId = await createRoom(weft, alice, { preset: "public_chat" });
    const join = await syn.call("POST", `${V3}/join/${enc(roomId)}?server_name=${enc(weft.serverName)}`, { token: sam.access_token, body: {} });
    expect(join.status, JSON.stringify(join.json) + syn.logTail(30)).toBe(200);
    await eventually(async () => (await weft.hs.services.rooms.store.membership(roomId, sam.user_id))?.membership === "join", "sam joined on Weft");
  }, 180_000);
  afterAll(async () => {
    await Promise.all([syn?.close(), weft?.close()]);
  });

  const setAcl = async (content: Record<string, unknown>) => {
    const res = await weft.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.server_acl/`, { token: alice.access_token, body: content });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  };
  const aliceSays = async (body: string) => {
    const res = await weft.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/w${++txn}`, { token: alice.access_token, body: { msgtype: "m.text", body } });
    expect(res.status).toBe(200);
    return res.json.event_id as string;
  };
  const samSays = async (body: string) => {
    const res = await syn.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/s${++txn}`, { token: sam.access_token, body: { msgtype: "m.text", body } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  };
  const onSynapse = async (eventId: string) => (await syn.call("GET", `${V3}/rooms/${enc(roomId)}/event/${enc(eventId)}`, { token: sam.access_token })).status;
  /** Weft's answer to Synapse for the transaction carrying `eventId`. */
  const answerFor = (eventId: string) =>
    eventually(async () => {
      const rows = await weft.hs.services.storage.sql.all<{ response: string }>(`SELECT response FROM received_transactions WHERE origin = ?`, [syn.serverName]);
      return rows.map((r) => JSON.parse(r.response).pdus?.[eventId]).find((x) => x !== undefined);
    }, `Weft's answer for ${eventId}`, 30_000);

  it("both ways work before the ACL", async () => {
    const fromWeft = await aliceSays("hello Synapse");
    await eventually(async () => (await onSynapse(fromWeft)) === 200, "alice's message on Synapse", 30_000);
    const fromSynapse = await samSays("hello Weft");
    expect(await answerFor(fromSynapse)).toEqual({});
    expect((await weft.call("GET", `${V3}/rooms/${enc(roomId)}/event/${enc(fromSynapse)}`, { token: alice.access_token })).status).toBe(200);
  });

  it("an ACL denying Synapse: its events and typing are dropped, and Weft sends it nothing; lifted, it is back", async () => {
    const aclId = await setAcl({ allow: ["*"], deny: ["127.0.0.1"] });
    const stored = (await weft.hs.services.rooms.events.get(aclId))!;
    // The ACL itself reaches Synapse (the ACL in force before it decides, as Synapse sends it); after it,
    // nothing of the room does.
    expect((await destinationsOfEvents(weft.hs.services, [stored])).get(aclId)).toEqual([syn.serverName]);
    await eventually(async () => (await onSynapse(aclId)) === 200, "the ACL on Synapse", 30_000);
    expect(await remoteServersInRoom(weft.hs.services, roomId)).toEqual([]);

    // Synapse does not uphold the ACL on its own sending: sam's typing and message go to Weft and are refused.
    const typing = await syn.call("PUT", `${V3}/rooms/${enc(roomId)}/typing/${enc(sam.user_id)}`, { token: sam.access_token, body: { typing: true, timeout: 30000 } });
    expect(typing.status).toBe(200);
    const refused = await samSays("let me in");
    expect(await answerFor(refused)).toEqual({ error: "Server is banned from room" });
    expect((await weft.call("GET", `${V3}/rooms/${enc(roomId)}/event/${enc(refused)}`, { token: alice.access_token })).status).toBe(404);
    const sync = await weft.call("GET", `${V3}/sync`, { token: alice.access_token });
    const typingNow = (sync.json.rooms?.join?.[roomId]?.ephemeral?.events ?? []).find((e: any) => e.type === "m.typing");
    expect(typingNow?.content.user_ids ?? []).not.toContain(sam.user_id);

    // Weft's own events go nowhere: nothing queued for Synapse, no transaction to it.
    // (Transactions to Synapse may still carry EDUs not bound to this room, such as alice's presence: the
    // check is on the room's events, queued and delivered.)
    const sender = weft.hs.services.federationSender;
    const hidden = await aliceSays("not for Synapse");
    const hiddenStored = (await weft.hs.services.rooms.events.get(hidden))!;
    expect((await destinationsOfEvents(weft.hs.services, [hiddenStored])).get(hidden)).toEqual([]);
    expect((await sender.store.queueSizes([syn.serverName])).get(syn.serverName) ?? 0).toBe(0);
    expect(await onSynapse(hidden)).not.toBe(200);

    // Lifted: Weft sends to Synapse again, and takes its events.
    await setAcl({ allow: ["*"] });
    expect(await remoteServersInRoom(weft.hs.services, roomId)).toEqual([syn.serverName]);
    const back = await aliceSays("welcome back");
    await eventually(async () => (await onSynapse(back)) === 200, "alice's message on Synapse again", 30_000);
    const again = await samSays("thanks");
    expect(await answerFor(again)).toEqual({});
  });
});
