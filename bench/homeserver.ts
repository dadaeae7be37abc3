// The homeserver a benchmark measures: `weft start` in its own process (as operators run it) on a fresh
// SQLite file or PostgreSQL database, rate limits lifted, with shared-secret registration of users.
// It runs compiled, as `npm start` runs it (WEFT_BENCH_TSX=1: src/ through tsx instead).
// WEFT_BENCH_NODE_ARGS passes flags to the server's node (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof");
// WEFT_BENCH_CLI runs another compiled build (its dist/cli.js) instead of this one's.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import YAML from "yaml";
import { generateConfig } from "../src/config/generate.ts";
import { sharedSecretMac } from "../src/domain/admin/shared-secret-registration.ts";

export type Backend = "sqlite" | "postgres";
export const PG_URL = process.env.WEFT_TEST_PG_URL ?? "postgresql://weft:weft@127.0.0.1:5432/weft";

export interface BenchServer {
  base: string;
  /** Registers `username` (password "pw") and returns its access token. */
  register(username: string): Promise<string>;
  stop(): Promise<void>;
  /** The server process's CPU time so far (user + system), in seconds (Linux /proc). */
  cpuSeconds(): number;
  /** The server process's resident set size in bytes (Linux /proc). */
  rssBytes(): number;
  pid: number;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** A new, empty PostgreSQL database on the test server: its name and URL. */
export async function createPgDatabase(prefix: string): Promise<{ name: string; url: string }> {
  const name = `${prefix}_${randomBytes(4).toString("hex")}`;
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  const u = new URL(PG_URL);
  u.pathname = `/${name}`;
  return { name, url: u.toString() };
}

export async function dropPgDatabase(name: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await c.end();
}

/** Runs `fn` over `items` with at most `n` in flight. */
export async function pool<T>(items: T[], n: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i]!, i);
    }
  }));
}

/** A JSON request that throws on a non-2xx answer. */
export async function json(url: string, init: RequestInit & { token?: string } = {}): Promise<any> {
  const headers: Record<string, string> = { "content-type": "application/json", ...(init.token ? { authorization: `Bearer ${init.token}` } : {}) };
  const res = await fetch(url, { ...init, headers });
  const body = await res.json();
  if (!res.ok) throw new Error(`${init.method ?? "GET"} ${url}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/**
 * The node flags `npm start` gives the server (package.json): a young generation of 4 MB semi-spaces, two
 * V8 helper threads instead of four, and an old generation grown by 30% past its live size (not up to 4×).
 */
/**
 * `npm start`'s node flags (read from package.json's start script), or WEFT_BENCH_START_FLAGS instead when
 * set ("" for none: an A/B run of the flags themselves).
 */
export const SERVER_NODE_ARGS: string[] = (() => {
  const override = process.env.WEFT_BENCH_START_FLAGS;
  if (override !== undefined) return override.split(" ").filter(Boolean);
  const script = (JSON.parse(readFileSync(path.join(import.meta.dirname, "..", "package.json"), "utf8")) as { scripts: { start: string } }).scripts.start;
  const flags = /^node((?: --[^ ]+)*) bin\/weft\.js start/.exec(script);
  if (!flags) throw new Error(`package.json's start script is not "node [flags] bin/weft.js start ...": ${script}`);
  return flags[1]!.trim().split(" ").filter(Boolean);
})();

/**
 * The node arguments that run the server as `npm start` does: the compiled build (bin/weft.js runs
 * dist/cli.js; built here first when src/ changed), or src/ through tsx with WEFT_BENCH_TSX=1.
 */
export function serverCommand(nodeArgs: string[]): string[] {
  // Another build's compiled cli.js (e.g. a copy of the baseline's dist/, for an A/B run).
  if (process.env.WEFT_BENCH_CLI) return [...nodeArgs, process.env.WEFT_BENCH_CLI];
  if (process.env.WEFT_BENCH_TSX === "1") return ["--import", "tsx", ...nodeArgs, "src/cli.ts"];
  const build = spawnSync(process.execPath, ["scripts/build.mjs"], { stdio: "inherit" });
  if (build.status !== 0) throw new Error("npm run build failed");
  return [...nodeArgs, "bin/weft.js"];
}

/** What every bench server's homeserver.yaml changes: rate limits lifted, quiet logs, cheap password hashing. */
export const BENCH_CONFIG = {
  rc_message: { per_second: 1e6, burst_count: 1e6 },
  rc_registration: { per_second: 1e6, burst_count: 1e6 },
  rc_login: { address: { per_second: 1e6, burst_count: 1e6 }, account: { per_second: 1e6, burst_count: 1e6 } },
  log_level: "warn",
  password_config: { scrypt_log_n: 4 },
};

export interface BenchServerOptions {
  /** Extra flags for the server's node (after WEFT_BENCH_NODE_ARGS). */
  nodeArgs?: string[];
  /** Extra environment for the server process. */
  env?: Record<string, string>;
  /** Options merged over the generated homeserver.yaml. */
  config?: Record<string, unknown>;
  /** Metrics on (enable_metrics), scraped at `${base}/_synapse/metrics` (the http listener's resource). */
  metrics?: boolean;
}

export async function startBenchServer(backend: Backend, opts: BenchServerOptions = {}): Promise<BenchServer> {
  const dir = mkdtempSync(path.join(tmpdir(), "weft-bench-"));
  const port = await freePort();
  let dbName: string | undefined;
  let databaseUrl: string | undefined;
  if (backend === "postgres") ({ name: dbName, url: databaseUrl } = await createPgDatabase("weft_bench"));
  const generated = await generateConfig({ serverName: "bench.local", configPath: path.join(dir, "homeserver.yaml"), port, databaseUrl });
  const cfg = YAML.parse(readFileSync(generated.configPath, "utf8"));
  Object.assign(cfg, BENCH_CONFIG, opts.config);
  if (opts.metrics) {
    cfg.enable_metrics = true;
    cfg.listeners[0].resources[0].names.push("metrics");
  }
  writeFileSync(generated.configPath, YAML.stringify(cfg));
  const nodeArgs = [...SERVER_NODE_ARGS, ...(process.env.WEFT_BENCH_NODE_ARGS?.split(" ").filter(Boolean) ?? []), ...(opts.nodeArgs ?? [])];
  const child: ChildProcess = spawn(process.execPath, [...serverCommand(nodeArgs), "start", "-c", generated.configPath], {
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, ...opts.env },
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitForVersions(base, child);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const register = async (username: string): Promise<string> => {
    const { nonce } = await json(`${base}/_synapse/admin/v1/register`);
    const mac = sharedSecretMac(generated.registrationSharedSecret, { nonce, username, password: "pw", admin: false });
    return (await json(`${base}/_synapse/admin/v1/register`, { method: "POST", body: JSON.stringify({ nonce, username, password: "pw", admin: false, mac }) })).access_token;
  };
  const stop = async () => {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
    rmSync(dir, { recursive: true, force: true });
    if (dbName) await dropPgDatabase(dbName);
  };
  const cpuSeconds = (): number => processCpuSeconds(child.pid!);
  const rssBytes = (): number => processRss(child.pid!).rss;
  return { base, register, stop, cpuSeconds, rssBytes, pid: child.pid! };
}

/** Waits (up to ~2 min: start-up on a loaded machine) until the server at `base` answers /versions; throws if `child` exits first. */
export async function waitForVersions(base: string, child: ChildProcess): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      await json(`${base}/_matrix/client/versions`);
      return;
    } catch {
      if (i > 1200 || child.exitCode !== null) {
        child.kill("SIGKILL"); // never leave a server behind
        throw new Error(`the server at ${base} did not start`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** A process's resident set now and its peak so far (VmRSS, VmHWM), in bytes; NaN when it is gone. */
export function processRss(pid: number): { rss: number; peak: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) * 1024;
    return { rss: kb("VmRSS"), peak: kb("VmHWM") };
  } catch {
    return { rss: NaN, peak: NaN };
  }
}

/** A process's CPU time so far (user + system), in seconds (Linux /proc). */
export function processCpuSeconds(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}
