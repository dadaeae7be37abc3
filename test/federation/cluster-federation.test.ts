// A two-process Weft server (master and worker1 on one PostgreSQL database, test/helpers/cluster.ts) and
// another Weft server over TLS: the other server reaches the cluster by its name (master's port) and the
// cluster answers as one server — make_join and send_join of a room worker1 writes are forwarded to it,
// the PDUs of an inbound /send for that room go to worker1 (internal route, per room), and an EDU of a
// stream worker1 writes (typing here) goes to it. Without Redis replication (not part of this) everything
// is read through the room's writer.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { startCluster, type Cluster } from "../helpers/cluster.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

// One database for several processes: PostgreSQL (skipped only where PostgreSQL tests are, as test/storage does).
const pgOnly = ["postgres" as const];
const clusterDescribe = describe.runIf(backends().includes("postgres"));

clusterDescribe.each(pgOnly)("a two-process server federating on %s", (backend) => {
  let cluster: Cluster;
  let remote: FederatedServer;
  let alice: Session;
  let bob: Session;
  let roomW: string;

  beforeAll(async () => {
    cluster = await startCluster({ federation: true, streamWriters: { typing: "worker1" } });
    remote = await startFederatedServer({ backend });
    alice = await registerUser(cluster.main, "alice");
    bob = await registerUser(remote, "bob");
    roomW = await createRoom(cluster.w1, alice, { preset: "public_chat" });
  }, 120_000);
  afterAll(async () => {
    await remote?.close();
    await cluster?.close();
  });

  it("the room's writer answers make_join and send_join that reached master", async () => {
    expect(cluster.w1.hs.services.topology.eventWriterFor(roomW)).toBe("worker1");
    const join = await remote.call("POST", `${V3}/join/${enc(roomW)}?via=${enc(cluster.serverName)}`, { token: bob.access_token, body: {} });
    expect(join.status, JSON.stringify(join.json)).toBe(200);
    const forwarded = cluster.sent.master.filter((p) => p.startsWith("worker1 /_weft/replication/forward/_matrix/federation/"));
    expect(forwarded.some((p) => p.includes("/make_join/"))).toBe(true);
    expect(forwarded.some((p) => p.includes("/send_join/"))).toBe(true);
    const member = await cluster.w1.call("GET", `${V3}/rooms/${enc(roomW)}/state/m.room.member/${enc(bob.user_id)}`, { token: alice.access_token });
    expect(member.json.membership).toBe("join");
  });

  it("PDUs of an inbound transaction are persisted by the room's writer; its EDUs reach their stream's writer", async () => {
    const said = await remote.call("PUT", `${V3}/rooms/${enc(roomW)}/send/m.room.message/from-remote`, { token: bob.access_token, body: { msgtype: "m.text", body: "hello cluster" } });
    expect(said.status).toBe(200);
    const eventId = said.json.event_id as string;
    await eventually(() => cluster.committed.worker1.includes(eventId), "worker1 to commit the remote message");
    expect(cluster.committed.master).not.toContain(eventId);
    expect(cluster.sent.master).toContain("worker1 /_weft/replication/federation/pdus");
    const messages = await cluster.w1.call("GET", `${V3}/rooms/${enc(roomW)}/messages?dir=b&limit=10`, { token: alice.access_token });
    expect((messages.json.chunk as { event_id: string }[]).map((e) => e.event_id)).toContain(eventId);

    // Typing is worker1's stream here: the remote's m.typing EDU reaches worker1's syncs.
    const typing = await remote.call("PUT", `${V3}/rooms/${enc(roomW)}/typing/${enc(bob.user_id)}`, { token: bob.access_token, body: { typing: true, timeout: 30_000 } });
    expect(typing.status).toBe(200);
    await eventually(async () => {
      const sync = await cluster.w1.call("GET", `${V3}/sync?timeout=0`, { token: alice.access_token });
      const events = (sync.json.rooms?.join?.[roomW]?.ephemeral?.events ?? []) as { type: string; content: { user_ids?: string[] } }[];
      return events.some((e) => e.type === "m.typing" && e.content.user_ids?.includes(bob.user_id));
    }, "bob's typing on worker1");
    expect(cluster.sent.master).toContain("worker1 /_weft/replication/federation/edus");
  }, 60_000);
});
