// A master that writes every stream and a worker that writes nothing (Synapse's classic layout; the
// replication cluster of test/helpers/replication-cluster.ts): the worker forwards its writes — createRoom,
// a join, a send — to master, which takes them although no stream of its own has another writer (it is
// named in the worker's instance_map). Before, master installed no forwarding route then and every such
// write answered 404 M_UNRECOGNIZED (found by bench/cluster.ts --events-writers 1). PostgreSQL only.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCluster, type Cluster, type Instance } from "../helpers/replication-cluster.ts";
import { backends } from "../helpers/server.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

async function register(on: Instance, localpart: string): Promise<string> {
  const first = await on.call("POST", `${V3}/register`, { body: { username: localpart, password: "password" } });
  const res = await on.call("POST", `${V3}/register`, { body: { username: localpart, password: "password", auth: { type: "m.login.dummy", session: first.json.session } } });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json.access_token as string;
}

describe.runIf(backends().includes("postgres"))("a worker that writes nothing forwards its writes to master (PostgreSQL)", () => {
  let cluster: Cluster;
  let main: Instance;
  let worker: Instance;
  beforeAll(async () => {
    cluster = await startCluster();
    [main, worker] = cluster.instances as [Instance, Instance];
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
  });

  it("createRoom, join and send on the worker are run by master", async () => {
    expect(main.hs.services.topology.isWriter("events")).toBe(true);
    expect(worker.hs.services.topology.isWriter("events")).toBe(false);
    const alice = await register(main, "alice");
    const bob = await register(main, "bob");
    const created = await worker.call("POST", `${V3}/createRoom`, { token: alice, body: { preset: "public_chat" } });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const roomId = created.json.room_id as string;
    const joined = await worker.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob, body: {} });
    expect(joined.status, JSON.stringify(joined.json)).toBe(200);
    const sent = await worker.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/t1`, { token: bob, body: { msgtype: "m.text", body: "via the worker" } });
    expect(sent.status, JSON.stringify(sent.json)).toBe(200);
    // master wrote them: its own tables answer, and the worker reads the same room.
    for (const on of [main, worker]) {
      const messages = await on.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=20`, { token: alice });
      expect(messages.status).toBe(200);
      expect((messages.json.chunk as { event_id: string }[]).map((e) => e.event_id)).toContain(sent.json.event_id);
    }
  }, 60_000);
});
