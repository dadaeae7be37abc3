// Weft and a live Synapse sharing a room, over TLS on loopback: sam's room on Synapse, which alice of Weft
// joins by hand through Synapse's own federation API (make_join, send_join v2, signed with Weft's key; the
// joined room stored on Weft as send_join processing will — until fed-membership's join lands). Then:
// Synapse's transactions reach alice's /sync (Weft's /send with Synapse as the origin); events pushed to
// Synapse with a gap before them make Synapse read Weft's /get_missing_events, and a gap wider than that
// Weft's /state_ids and /event (or /state); history Synapse purged is read back from Weft's /backfill.
// Weft runs on SQLite and PostgreSQL; Synapse on SQLite.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { startSynapse, type SynapseServer } from "../helpers/synapse.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { pushEvents, sendMessages, signPdu, signedCall, signerOf, storeJoin, syncUntil } from "../helpers/by-hand.ts";
import type { Pdu } from "../../src/domain/events/types.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const VERSIONS = Array.from({ length: 12 }, (_, i) => `ver=${i + 1}`).join("&");

interface ClientEvent {
  event_id: string;
  type: string;
  content: Record<string, unknown>;
}

describe.each(backends())("Weft (%s) and Synapse in one room", (backend) => {
  let weft: FederatedServer;
  let syn: SynapseServer;
  let alice: Session;
  let sam: { user_id: string; access_token: string };
  let roomId: string;
  const synapse = () => ({ baseUrl: syn.federationUrl, serverName: syn.serverName });

  beforeAll(async () => {
    // Weft's events reach Synapse only as the tests push them (by hand): its own sender is off.
    weft = await startFederatedServer({ backend, config: { send_federation: false } });
    syn = await startSynapse();
    alice = await registerUser(weft, "alice");
    sam = await syn.register("sam", "password", { admin: true });
    const created = await syn.call("POST", `${V3}/createRoom`, { token: sam.access_token, body: { preset: "public_chat", name: "Meeting point" } });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    roomId = created.json.room_id;

    // alice joins through Synapse's federation API, by hand.
    const made = await signedCall(signerOf(weft), synapse(), "GET", `/_matrix/federation/v1/make_join/${enc(roomId)}/${enc(alice.user_id)}?${VERSIONS}`);
    expect(made.status, JSON.stringify(made.json) + syn.logTail()).toBe(200);
    const version = String(made.json.room_version);
    const join = signPdu({ ...made.json.event, origin_server_ts: Date.now() }, version, signerOf(weft));
    const sent = await signedCall(signerOf(weft), synapse(), "PUT", `/_matrix/federation/v2/send_join/${enc(roomId)}/${enc(join.eventId)}`, join.pdu);
    expect(sent.status, JSON.stringify(sent.json) + syn.logTail()).toBe(200);
    await storeJoin(weft.hs.services, roomId, { eventId: join.eventId, pdu: (sent.json.event as Pdu | undefined) ?? join.pdu }, sent.json.state, sent.json.auth_chain);
  }, 600_000);
  afterAll(async () => {
    await Promise.all([syn?.close(), weft?.close()]);
  });

  async function samSays(body: string): Promise<string> {
    const res = await syn.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/${enc(body)}${Date.now()}`, { token: sam.access_token, body: { msgtype: "m.text", body } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id;
  }

  const aliceSays = (n: number, prefix: string) => sendMessages(weft, alice.access_token, roomId, prefix, n);

  /** The message bodies sam's /messages shows, newest first, as far back as `limit`. */
  async function samSees(limit = 100): Promise<string[]> {
    const res = await syn.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=${limit}`, { token: sam.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return (res.json.chunk as ClientEvent[]).filter((e) => e.type === "m.room.message").map((e) => String(e.content.body));
  }

  /**
   * sam's view once it shows `last` (Synapse stages received PDUs and processes them after answering the
   * transaction): polls /messages until then, at most `ms`.
   */
  async function samSeesOnce(last: string, limit: number, ms = 30_000): Promise<string[]> {
    for (const deadline = Date.now() + ms; ; ) {
      const seen = await samSees(limit);
      if (seen.includes(last)) return seen;
      if (Date.now() > deadline) throw new Error(`sam never saw ${last}; sees ${JSON.stringify(seen)}\n${syn.logTail(60)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it("Synapse's transactions reach alice's /sync (Weft's /send with Synapse as the origin)", async () => {
    const id = await samSays("hello from Synapse");
    const seen = await syncUntil(weft, alice.access_token, roomId, (evs) => evs.some((e) => e.event_id === id), 30_000);
    expect(seen.find((e) => e.event_id === id)!.content.body).toBe("hello from Synapse");
    const row = (await weft.hs.services.rooms.events.get(id))!;
    expect([row.outlier, row.rejectedReason, row.softFailed]).toEqual([false, null, false]);
  }, 60_000);

  it("only the last of three Weft events pushed: Synapse reads the others from Weft's /get_missing_events", async () => {
    const ids = await aliceSays(3, "w");
    const res = await pushEvents(weft, synapse(), [ids[2]!]);
    expect([res.status, res.json], JSON.stringify(res.json) + syn.logTail()).toEqual([200, { pdus: { [ids[2]!]: {} } }]);
    expect((await samSeesOnce("w3", 10)).slice(0, 3)).toEqual(["w3", "w2", "w1"]);
  }, 60_000);

  it("a gap wider than get_missing_events: Synapse reads Weft's /state_ids and events, and accepts the rest", async () => {
    const ids = await aliceSays(14, "v");
    const res = await pushEvents(weft, synapse(), [ids[13]!]);
    expect([res.status, res.json], JSON.stringify(res.json) + syn.logTail()).toEqual([200, { pdus: { [ids[13]!]: {} } }]);
    // Synapse took the ten before v14 from get_missing_events and the state before v4 from Weft (had it
    // not, it would refuse v4..v14: "can't get valid state history"). Paginating back, it may go on to
    // backfill v1..v3 from Weft too.
    const seen = (await samSeesOnce("v14", 30)).filter((b) => b.startsWith("v"));
    const all = Array.from({ length: 14 }, (_, i) => `v${14 - i}`);
    expect(seen.length).toBeGreaterThanOrEqual(11);
    expect(seen).toEqual(all.slice(0, seen.length));
  }, 60_000);

  it("history Synapse purged is read back from Weft's /backfill", async () => {
    const ids: string[] = [];
    for (let i = 1; i <= 12; i++) ids.push(await samSays(`p${i}`));
    // Weft has them all (Synapse sent them as they were sent).
    await syncUntil(weft, alice.access_token, roomId, (evs) => evs.some((e) => e.event_id === ids[11]), 30_000);
    const purge = await syn.call("POST", `/_synapse/admin/v1/purge_history/${enc(roomId)}`, { token: sam.access_token, body: { delete_local_events: true, purge_up_to_event_id: ids[9] } });
    expect(purge.status, JSON.stringify(purge.json)).toBe(200);
    for (const deadline = Date.now() + 30_000; ; ) {
      const st = await syn.call("GET", `/_synapse/admin/v1/purge_history_status/${purge.json.purge_id}`, { token: sam.access_token });
      if (st.json.status === "complete") break;
      expect(st.json.status).not.toBe("failed");
      if (Date.now() > deadline) throw new Error("purge did not complete");
      await new Promise((r) => setTimeout(r, 100));
    }
    // Gone from Synapse...
    const gone = await syn.call("GET", `${V3}/rooms/${enc(roomId)}/event/${enc(ids[0]!)}`, { token: sam.access_token });
    expect(gone.status).toBe(404);
    // ...until sam scrolls back and Synapse backfills from Weft, the only other server in the room.
    const seen = await samSees(100);
    expect(seen.filter((b) => b.startsWith("p"))).toEqual(["p12", "p11", "p10", "p9", "p8", "p7", "p6", "p5", "p4", "p3", "p2", "p1"]);
    const back = await syn.call("GET", `${V3}/rooms/${enc(roomId)}/event/${enc(ids[0]!)}`, { token: sam.access_token });
    expect([back.status, back.json.content?.body]).toEqual([200, "p1"]);
  }, 90_000);
});
