// Two Weft processes of one server on one PostgreSQL database (README "Scaling out"): `master` and
// `worker1`, one signing key, the events stream sharded over both (other streams as the test says), the
// internal requests between them on `instance_map` with a shared worker_replication_secret. With
// `federation`, each serves TLS for clients and federation (the server is named after master's port) and
// plain HTTP on a `replication` listener of its own, which instance_map names. Also: a spy on each
// process's commits and internal requests, read by the tests. Replication goes through a real redis-server
// (test/helpers/redis.ts) started with the layout.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort, makePgDatabase, startTestServer, type TestServer } from "./server.ts";
import { federationTestConfig } from "./federation.ts";
import { RedisServer } from "./redis.ts";
import type { Commit } from "../../src/domain/consumers/commit-feed.ts";

export const CLUSTER_SECRET = "cluster-test-secret";

export interface Cluster {
  main: TestServer;
  w1: TestServer;
  /** The server's name (master's port with `federation`, else weft.test). */
  serverName: string;
  /** Event ids each instance committed. */
  committed: Record<string, string[]>;
  /** Internal requests each instance sent: "instance path". */
  sent: Record<string, string[]>;
  /** Spies on a restarted process again. */
  watch(t: TestServer): void;
  close(): Promise<void>;
}

/** What the processes of one test cluster share: the database, the signing key's folder, the ports. */
export interface ClusterLayout {
  dbUrl: string;
  keyDir: string;
  ports: { master: number; worker1: number };
  /** The ports instance_map names (the replication listeners with `federation`, else the client ports). */
  repl: { master: number; worker1: number };
  serverName: string;
  federation: boolean;
  /** The redis-server replication goes through (started with the layout, killed by `drop`). */
  redisPort: number;
}

/** The homeserver.yaml options (over the test defaults) of one process of the cluster. */
export function clusterConfig(layout: ClusterLayout, name: "master" | "worker1", extra: { streamWriters?: Record<string, unknown>; config?: Record<string, unknown> } = {}): Record<string, unknown> {
  const { ports, repl } = layout;
  const fed = layout.federation ? federationTestConfig(ports[name]) : {};
  return {
    ...fed,
    ...(layout.federation
      ? {
          listeners: [...(fed.listeners as unknown[]), { port: repl[name], bind_addresses: ["127.0.0.1"], type: "http", resources: [{ names: ["replication"] }] }],
          public_baseurl: `https://127.0.0.1:${ports.master}/`,
        }
      : {}),
    ...(name === "master" ? {} : { worker_name: name }),
    database: { name: "psycopg2", args: { url: layout.dbUrl } },
    signing_key_path: path.join(layout.keyDir, "signing.key"),
    instance_map: { main: { host: "127.0.0.1", port: repl.master }, worker1: { host: "127.0.0.1", port: repl.worker1 } },
    stream_writers: { events: ["master", "worker1"], ...(extra.streamWriters ?? {}) },
    redis: { enabled: true, host: "127.0.0.1", port: layout.redisPort },
    worker_replication_secret: CLUSTER_SECRET,
    ...(extra.config ?? {}),
  };
}

/** A new database, key folder and ports for a cluster (`drop` removes the first two). */
export async function clusterLayout(federation = false): Promise<ClusterLayout & { drop(): Promise<void> }> {
  const db = await makePgDatabase();
  const redis = await RedisServer.start();
  const keyDir = mkdtempSync(path.join(tmpdir(), "weft-cluster-"));
  const ports = { master: await freePort(), worker1: await freePort() };
  const repl = federation ? { master: await freePort(), worker1: await freePort() } : ports;
  return {
    dbUrl: db.url,
    keyDir,
    ports,
    repl,
    serverName: federation ? `127.0.0.1:${ports.master}` : "weft.test",
    federation,
    redisPort: redis.port,
    async drop() {
      await redis.kill();
      await db.drop();
      rmSync(keyDir, { recursive: true, force: true });
    },
  };
}

/** Spies on a process's commits and internal requests, into `committed` and `sent`. */
export function spyOn(t: TestServer, committed: Record<string, string[]>, sent: Record<string, string[]>): void {
  const s = t.hs.services;
  const publish = s.commits.publish.bind(s.commits);
  s.commits.publish = (c: Commit) => ((committed[s.instanceName] ??= []).push(...c.notice.eventIds), publish(c));
  const request = s.internal.request.bind(s.internal);
  s.internal.request = (instance, req) => ((sent[s.instanceName] ??= []).push(`${instance} ${req.path}`), request(instance, req));
}

export async function startCluster(opts: { streamWriters?: Record<string, unknown>; federation?: boolean; config?: Record<string, unknown> } = {}): Promise<Cluster> {
  const layout = await clusterLayout(opts.federation);
  const committed: Record<string, string[]> = { master: [], worker1: [] };
  const sent: Record<string, string[]> = { master: [], worker1: [] };
  const watch = (t: TestServer) => spyOn(t, committed, sent);
  const started: TestServer[] = [];
  const close = async () => {
    for (const t of started.reverse()) await t.close();
    await layout.drop();
  };
  try {
    // One after the other: the first applies the migrations, the second finds them applied.
    const { serverName, ports } = layout;
    const main = await startTestServer({ backend: "postgres", serverName, port: ports.master, config: clusterConfig(layout, "master", opts) });
    started.push(main);
    const w1 = await startTestServer({ backend: "postgres", serverName, port: ports.worker1, config: clusterConfig(layout, "worker1", opts) });
    started.push(w1);
    watch(main);
    watch(w1);
    return { main, w1, serverName, committed, sent, watch, close };
  } catch (err) {
    await close();
    throw err;
  }
}
