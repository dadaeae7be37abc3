// Several Weft processes of one server on one PostgreSQL database, with a real redis-server (Debian's
// /usr/bin/redis-server) between them, for the replication tests and bench/replication.ts (test/helpers/cluster.ts is the routing tests' pair). Each
// instance is a full homeserver (startHomeserver) with its worker options: `main` (master) writes
// every stream, `worker1`... read and answer requests. Redis is started on a free loopback port and can
// be stopped and started again on the same port (an outage).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import { parseConfig } from "../../src/config/config.ts";
import { startHomeserver, type Homeserver } from "../../src/main.ts";
import { freePort } from "./net.ts";
import { RedisServer } from "./redis.ts";
import { clientOf } from "./cluster-processes.ts";
import { hermeticDns, makePgDatabase, TEST_DEFAULTS, type JsonResponse } from "./server.ts";

export interface Instance {
  name: string;
  hs: Homeserver;
  baseUrl: string;
  call(method: string, p: string, o?: { body?: unknown; token?: string }): Promise<JsonResponse>;
}

export interface Cluster {
  redis: RedisServer;
  instances: Instance[];
  /** Stops an instance (as a clean shutdown) and starts it again on the same port and config. */
  restart(name: string, whileDown?: () => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

/** `main` plus `workers` worker instances on one new PostgreSQL database and one new redis-server. */
export async function startCluster(opts: { workers?: string[]; config?: Record<string, unknown>; log?: pino.Logger } = {}): Promise<Cluster> {
  const workers = opts.workers ?? ["worker1"];
  const redis = await RedisServer.start();
  const db = await makePgDatabase();
  const dir = mkdtempSync(path.join(tmpdir(), "weft-cluster-"));
  const names = ["main", ...workers];
  const ports = await Promise.all(names.map(() => freePort()));
  const instance_map = Object.fromEntries(names.map((n, i) => [n, { host: "127.0.0.1", port: ports[i] }]));
  const instances: Instance[] = [];
  const starts = new Map<string, () => Promise<Homeserver>>();
  const log = opts.log ?? pino({ level: String(TEST_DEFAULTS.log_level) });
  try {
    // One at a time: the first applies the migrations.
    for (const [i, name] of names.entries()) {
      const raw = {
        ...TEST_DEFAULTS,
        server_name: "cluster.test",
        database: { name: "psycopg2", args: { url: db.url } },
        signing_key_path: path.join(dir, "signing.key"),
        media_store_path: path.join(dir, "media"),
        ...(name === "main" ? {} : { worker_name: name }),
        instance_map,
        redis: { enabled: true, host: "127.0.0.1", port: redis.port },
        worker_replication_secret: "replication-test-secret",
        ...opts.config,
      };
      const config = parseConfig(raw, dir);
      const start = () => startHomeserver(config, { log: log.child({ instance: name }), port: ports[i], dns: hermeticDns });
      const hs = await start();
      const baseUrl = `http://127.0.0.1:${ports[i]}`;
      config.public_baseurl = `${baseUrl}/`;
      starts.set(name, start);
      instances.push({
        name,
        hs,
        baseUrl,
        call: clientOf(baseUrl).call,
      });
    }
  } catch (err) {
    for (const i of instances.reverse()) await i.hs.close();
    await redis.kill();
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    redis,
    instances,
    async restart(name, whileDown) {
      const i = instances.find((x) => x.name === name)!;
      await i.hs.close();
      await whileDown?.();
      i.hs = await starts.get(name)!();
    },
    async close() {
      for (const i of [...instances].reverse()) await i.hs.close();
      await redis.kill();
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
