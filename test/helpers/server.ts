// Starts a real Weft homeserver for a test: its own temp folder, SQLite file or PostgreSQL database,
// a free port on 127.0.0.1, and a small JSON client. `close()` stops it and removes what it made.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import pg from "pg";
import { randomBytes } from "node:crypto";
import { freePort, postgresAnswers } from "./net.ts";
import { Agent, fetch as undiciFetch } from "undici";
import { parseConfig, type Config } from "../../src/config/config.ts";
import { startHomeserver, type Homeserver } from "../../src/main.ts";
import type { Clock } from "../../src/domain/services.ts";
import type { Dns } from "../../src/federation/transport.ts";
import type { DurableConsumer } from "../../src/domain/consumers/durable.ts";

export type Backend = "sqlite" | "postgres";

/** The PostgreSQL server tests use (CI creates role and database weft/weft). */
export const PG_ADMIN_URL = process.env.WEFT_TEST_PG_URL ?? "postgresql://weft:weft@127.0.0.1:5432/weft";

let pgAvailable: Promise<boolean> | undefined;
async function postgresReachable(): Promise<boolean> {
  pgAvailable ??= postgresAnswers(PG_ADMIN_URL);
  return pgAvailable;
}

/**
 * The storage backends a suite runs against: SQLite always, PostgreSQL when reachable. In CI (CI=true)
 * PostgreSQL must be reachable: a missing database fails the run instead of silently testing less.
 */
export function backends(): Backend[] {
  const list: Backend[] = ["sqlite"];
  if (process.env.WEFT_TEST_SKIP_PG !== "1") list.push("postgres");
  return list;
}

/** A new, empty PostgreSQL database on the test server (dropped by `drop`). */
export async function makePgDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  if (!(await postgresReachable())) {
    throw new Error(`PostgreSQL is not reachable at ${PG_ADMIN_URL}: start it (pg_ctlcluster 15 main start) or set WEFT_TEST_SKIP_PG=1`);
  }
  const name = `weft_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export interface TestServer {
  hs: Homeserver;
  config: Config;
  baseUrl: string;
  dir: string;
  /** Fetches `path` (relative to the base URL) with a JSON body and optional token; returns status and JSON. */
  call(method: string, path: string, opts?: { body?: unknown; token?: string; headers?: Record<string, string>; raw?: string }): Promise<JsonResponse>;
  /** Stops the server and keeps its data (for restart tests). */
  stop(): Promise<void>;
  /** Starts it again on the same data and port. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface JsonResponse {
  status: number;
  headers: Headers;
  json: any;
}

export interface TestServerOptions {
  backend?: Backend;
  serverName?: string;
  /** Extra homeserver.yaml options (merged over the test defaults). */
  config?: Record<string, unknown>;
  /** A clock the test controls (token expiry without sleeping). */
  clock?: Clock;
  /** The port to listen on (default: a free one). Federation tests pick it first: it is in the server name. */
  port?: number;
  /** DNS for server discovery (default: hermeticDns). */
  dns?: Dns;
  /** Durable consumers of the events stream added to the declared ones (also after a restart). */
  consumers?: DurableConsumer[];
  /** The server's logger (default: pino at the config's log_level, to stdout). */
  log?: pino.Logger;
}

/** Status, headers and body of a fetch answer: the JSON value, the text if it is not JSON, undefined if empty. */
export async function readJsonResponse(res: { status: number; headers: unknown; text(): Promise<string> }): Promise<JsonResponse> {
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = text;
  }
  return { status: res.status, headers: res.headers as Headers, json };
}

export { freePort };

/**
 * DNS for test servers: nothing leaves the machine. Federation tests name servers by IP literal and need
 * no DNS; any other name (a remote user @x:elsewhere.test) simply does not resolve.
 */
export const hermeticDns: Dns = {
  async resolveSrv() {
    return [];
  },
  async lookup(host) {
    if (host === "localhost") return ["127.0.0.1"];
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
  },
};

/** Test clients trust the test servers' self-signed certificates. */
export const insecureAgent = new Agent({ connect: { rejectUnauthorized: false } });

/** A clock that stands still until the test moves it. */
export class TestClock implements Clock {
  constructor(public ms = Date.now()) {}
  now() {
    return this.ms;
  }
  advance(ms: number) {
    this.ms += ms;
  }
}

export const TEST_DEFAULTS: Record<string, unknown> = {
  enable_registration: true,
  allow_guest_access: true,
  password_config: { scrypt_log_n: 4 },
  registration_shared_secret: "test-shared-secret",
  rc_login: { address: { per_second: 1000, burst_count: 1000 }, account: { per_second: 1000, burst_count: 1000 }, failed_attempts: { per_second: 1000, burst_count: 1000 } },
  rc_registration: { per_second: 1000, burst_count: 1000 },
  rc_message: { per_second: 1000, burst_count: 1000 },
  // WEFT_TEST_LOG_LEVEL=info (or debug) shows the servers' logs when a test needs reading.
  log_level: process.env.WEFT_TEST_LOG_LEVEL ?? "warn",
  // A failed transaction marks its destination down at once (no quick retries first): the tests of the
  // sender's backoff read that; those of the quick retries set their own.
  federation: { max_long_retries: 0 },
};

function merge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    out[k] = v && typeof v === "object" && !Array.isArray(v) && prev && typeof prev === "object" && !Array.isArray(prev)
      ? merge(prev as Record<string, unknown>, v as Record<string, unknown>)
      : v;
  }
  return out;
}

export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const backend = opts.backend ?? "sqlite";
  const dir = mkdtempSync(path.join(tmpdir(), "weft-test-"));
  const pgDb = backend === "postgres" ? await makePgDatabase() : undefined;
  const serverName = opts.serverName ?? "weft.test";
  const database = pgDb
    ? { name: "psycopg2", args: { url: pgDb.url } }
    : { name: "sqlite3", args: { database: path.join(dir, "homeserver.db") } };
  const raw = merge(merge({ server_name: serverName, database, signing_key_path: path.join(dir, "signing.key") }, TEST_DEFAULTS), opts.config ?? {});
  const config = parseConfig(raw, dir);
  const log = opts.log ?? pino({ level: String(raw.log_level ?? "warn") });
  let hs: Homeserver;
  try {
    hs = await startHomeserver(config, { log, port: opts.port ?? 0, clock: opts.clock, dns: opts.dns ?? hermeticDns, consumers: opts.consumers });
  } catch (err) {
    await pgDb?.drop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const port = Number(new URL(hs.urls[0]!).port);
  const tls = config.listeners[0]!.tls;
  const baseUrl = `${tls ? "https" : "http"}://127.0.0.1:${port}`;
  config.public_baseurl = `${baseUrl}/`;
  let running = true;

  const server: TestServer = {
    get hs() {
      return hs;
    },
    config,
    baseUrl,
    dir,
    async call(method, p, o = {}) {
      const headers: Record<string, string> = { ...(o.headers ?? {}) };
      if (o.token) headers.authorization = `Bearer ${o.token}`;
      let body: string | undefined = o.raw;
      if (o.body !== undefined) {
        body = JSON.stringify(o.body);
        headers["content-type"] ??= "application/json";
      }
      const res = tls
        ? await undiciFetch(baseUrl + p, { method, headers, body, dispatcher: insecureAgent })
        : await fetch(baseUrl + p, { method, headers, body });
      return readJsonResponse(res);
    },
    async stop() {
      if (running) await hs.close();
      running = false;
    },
    async restart() {
      await server.stop();
      hs = await startHomeserver(config, { log, port, clock: opts.clock, dns: opts.dns ?? hermeticDns, consumers: opts.consumers });
      running = true;
    },
    async close() {
      await server.stop();
      await pgDb?.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return server;
}
