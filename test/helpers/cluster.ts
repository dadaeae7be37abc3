// Two Weft processes of one server on one PostgreSQL database (README "Scaling out"): `master` and
// `worker1`, one signing key, the events stream sharded over both (other streams as the test says), the
// internal requests between them on `instance_map` with a shared worker_replication_secret. With
// `federation`, each serves TLS for clients and federation (the server is named after master's port) and
// plain HTTP on a `replication` listener of its own, which instance_map names. Also: a spy on each
// process's commits and internal requests, read by the tests.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort, makePgDatabase, startTestServer, type TestServer } from "./server.ts";
import { federationTestConfig } from "./federation.ts";
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

export async function startCluster(opts: { streamWriters?: Record<string, unknown>; federation?: boolean; config?: Record<string, unknown> } = {}): Promise<Cluster> {
  const db = await makePgDatabase();
  const keyDir = mkdtempSync(path.join(tmpdir(), "weft-cluster-"));
  const ports = { master: await freePort(), worker1: await freePort() };
  const repl = opts.federation ? { master: await freePort(), worker1: await freePort() } : ports;
  const serverName = opts.federation ? `127.0.0.1:${ports.master}` : "weft.test";
  const config = (name: "master" | "worker1") => {
    const fed = opts.federation ? federationTestConfig(ports[name]) : {};
    return {
      ...fed,
      ...(opts.federation
        ? {
            listeners: [
              ...(fed.listeners as unknown[]),
              { port: repl[name], bind_addresses: ["127.0.0.1"], type: "http", resources: [{ names: ["replication"] }] },
            ],
            public_baseurl: `https://127.0.0.1:${ports.master}/`,
          }
        : {}),
      ...(name === "master" ? {} : { worker_name: name }),
      database: { name: "psycopg2", args: { url: db.url } },
      signing_key_path: path.join(keyDir, "signing.key"),
      instance_map: { main: { host: "127.0.0.1", port: repl.master }, worker1: { host: "127.0.0.1", port: repl.worker1 } },
      stream_writers: { events: ["master", "worker1"], ...(opts.streamWriters ?? {}) },
      redis: { enabled: true },
      worker_replication_secret: CLUSTER_SECRET,
      ...(opts.config ?? {}),
    };
  };
  const committed: Record<string, string[]> = { master: [], worker1: [] };
  const sent: Record<string, string[]> = { master: [], worker1: [] };
  const watch = (t: TestServer) => {
    const s = t.hs.services;
    const publish = s.commits.publish.bind(s.commits);
    s.commits.publish = (c: Commit) => (committed[s.instanceName]!.push(...c.notice.eventIds), publish(c));
    const request = s.internal.request.bind(s.internal);
    s.internal.request = (instance, req) => (sent[s.instanceName]!.push(`${instance} ${req.path}`), request(instance, req));
  };
  const started: TestServer[] = [];
  const close = async () => {
    for (const t of started.reverse()) await t.close();
    await db.drop();
    rmSync(keyDir, { recursive: true, force: true });
  };
  try {
    // One after the other: the first applies the migrations, the second finds them applied.
    const main = await startTestServer({ backend: "postgres", serverName, port: ports.master, config: config("master") });
    started.push(main);
    const w1 = await startTestServer({ backend: "postgres", serverName, port: ports.worker1, config: config("worker1") });
    started.push(w1);
    watch(main);
    watch(w1);
    return { main, w1, serverName, committed, sent, watch, close };
  } catch (err) {
    await close();
    throw err;
  }
}
