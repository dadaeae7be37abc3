// A two-process Weft server (master and worker1 on one PostgreSQL database with Redis between them,
// test/helpers/cluster.ts, TLS and an IP-literal name: master's port) federating with a live Synapse as
// one server (issue 37): a Synapse user joins, through master, a room worker1 writes; messages sent
// through either Weft process reach Synapse's /sync, Synapse's reach /sync on both Weft processes, in one
// order; the cluster has one federation sender (master, the default federation_sender_instances), which
// puts each Weft event in exactly one transaction (a retry keeps its txn id), and Synapse's /messages holds
// each of them once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, type TestServer } from "../helpers/server.ts";
import { startSynapse, type SynapseServer } from "../helpers/synapse.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { startCluster, type Cluster } from "../helpers/cluster.ts";
import { SyncClient, type ClientApi } from "../helpers/sync-client.ts";
import { eventIdOf } from "../../src/domain/events/hashes.ts";
import type { Pdu } from "../../src/domain/events/types.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

// One database for several processes: PostgreSQL only (the cluster refuses SQLite).
const clusterDescribe = describe.runIf(backends().includes("postgres"));

/** A transaction a Weft process put to Synapse: which process, its txn id, its PDUs. */
interface SentTxn {
  instance: string;
  txnId: string;
  pdus: Pdu[];
}

clusterDescribe("a two-process Weft server and a live Synapse (PostgreSQL)", () => {
  let cluster: Cluster;
  let syn: SynapseServer;
  let alice: Session;
  let sam: { user_id: string; access_token: string };
  const txns: SentTxn[] = [];

  /** Records every /send transaction `t` puts to Synapse. */
  const watchSends = (t: TestServer) => {
    const s = t.hs.services;
    const putJson = s.federation.putJson.bind(s.federation);
    s.federation.putJson = ((destination: string, p: string, body: unknown, opts?: unknown) => {
      const m = /^\/_matrix\/federation\/v1\/send\/([^/?]+)/.exec(p);
      if (destination === syn.serverName && m) txns.push({ instance: s.instanceName, txnId: decodeURIComponent(m[1]!), pdus: ((body as { pdus?: Pdu[] }).pdus ?? []) as Pdu[] });
      return putJson(destination, p, body, opts as never);
    }) as typeof s.federation.putJson;
  };

  beforeAll(async () => {
    [cluster, syn] = await Promise.all([startCluster({ federation: true }), startSynapse()]);
    watchSends(cluster.main);
    watchSends(cluster.w1);
    alice = await registerUser(cluster.main, "alice");
    sam = await syn.register("sam");
  }, 600_000);
  afterAll(async () => {
    await Promise.all([syn?.close(), cluster?.close()]);
  });

  let n = 0;
  const say = async (t: ClientApi, who: { access_token: string }, roomId: string, body: string) => {
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/m${++n}`, { token: who.access_token, body: { msgtype: "m.text", body } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  };

  it("a Synapse user joins a room worker1 writes; messages both ways reach every /sync; each Weft event goes to Synapse once, from the one federation sender", async () => {
    const roomId = await createRoom(cluster.w1, alice, { preset: "public_chat", name: "cluster and synapse" });
    expect(cluster.w1.hs.services.topology.eventWriterFor(roomId)).toBe("worker1");
    const version = (await cluster.main.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.create`, { token: alice.access_token })).json.room_version as string;

    const samSync = new SyncClient(syn, sam, false);
    const onMain = new SyncClient(cluster.main, alice);
    const onW1 = new SyncClient(cluster.w1, alice);
    await Promise.all([samSync.sync(), onMain.sync(), onW1.sync()]);

    // Synapse reaches the server by its name, master's port: make_join and send_join go on to worker1.
    const join = await syn.call("POST", `${V3}/join/${enc(roomId)}?server_name=${enc(cluster.serverName)}`, { token: sam.access_token, body: {} });
    expect(join.status, JSON.stringify(join.json) + syn.logTail(20)).toBe(200);
    expect(cluster.sent.master.some((p) => p.startsWith("worker1 /_weft/replication/forward/_matrix/federation/") && p.includes("/send_join/"))).toBe(true);
    for (const c of [onMain, onW1]) {
      await c.until(() => (c.timeline.get(roomId) ?? []).some((e) => e.type === "m.room.member" && e.state_key === sam.user_id && e.content.membership === "join"), `${sam.user_id} joined`, 60_000);
    }

    // Weft's messages through either process (master forwards its sends to worker1), Synapse's between them.
    const weftIds: string[] = [];
    weftIds.push(await say(cluster.main, alice, roomId, "weft via master 1"));
    weftIds.push(await say(cluster.w1, alice, roomId, "weft via worker1 1"));
    const samIds = [await say(syn, sam, roomId, "sam 1")];
    weftIds.push(await say(cluster.main, alice, roomId, "weft via master 2"));
    weftIds.push(await say(cluster.w1, alice, roomId, "weft via worker1 2"));
    samIds.push(await say(syn, sam, roomId, "sam 2"));

    // Synapse's /sync sees Weft's four, in the order sent.
    const onSynapse = await samSync.until(() => samSync.bodies(roomId).filter((b) => b.startsWith("weft")).length >= 4 && samSync.bodies(roomId), "Weft's four messages", 60_000);
    expect(onSynapse.filter((b) => b.startsWith("weft"))).toEqual(["weft via master 1", "weft via worker1 1", "weft via master 2", "weft via worker1 2"]);
    // Both Weft processes' /sync see Synapse's two, and all six in one order.
    const orders: string[][] = [];
    for (const c of [onMain, onW1]) {
      await c.until(() => samIds.every((id) => c.has(roomId, id)), "Synapse's two messages", 60_000);
      expect(c.bodies(roomId).filter((b) => b.startsWith("sam"))).toEqual(["sam 1", "sam 2"]);
      orders.push(c.bodies(roomId));
    }
    expect(orders[0]).toEqual(orders[1]);
    expect(orders[0]).toHaveLength(6);

    // The federation transactions: only master (the one federation sender) put any to Synapse, and each Weft
    // event went in exactly one of them (a retry of a transaction keeps its txn id: counted once).
    expect(txns.length).toBeGreaterThan(0);
    expect(new Set(txns.map((t) => t.instance))).toEqual(new Set(["master"]));
    const carriedIn = new Map<string, Set<string>>();
    for (const t of txns) for (const pdu of t.pdus) {
      if (pdu.room_id !== roomId) continue;
      const id = eventIdOf(pdu, version);
      if (!carriedIn.has(id)) carriedIn.set(id, new Set());
      carriedIn.get(id)!.add(t.txnId);
    }
    for (const id of weftIds) expect([...(carriedIn.get(id) ?? [])], `transactions carrying ${id}`).toHaveLength(1);
    // Synapse's events were never echoed back to it.
    for (const id of samIds) expect(carriedIn.has(id)).toBe(false);

    // Synapse's /messages: the whole room, each event once, Weft's four among them.
    const seen: string[] = [];
    let from: string | undefined;
    for (let page = 0; page < 20; page++) {
      const res = await syn.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=10${from ? `&from=${enc(from)}` : ""}`, { token: sam.access_token });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      seen.push(...(res.json.chunk as { event_id: string }[]).map((e) => e.event_id));
      if (!res.json.end || res.json.chunk.length === 0) break;
      from = res.json.end;
    }
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of [...weftIds, ...samIds]) expect(seen.filter((x) => x === id), id).toHaveLength(1);
  }, 300_000);
});
