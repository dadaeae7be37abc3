// A 3-process Weft deployment as README "Scaling out" describes it, for the cluster tests: N real
// `weft start` processes (master, worker1, worker2 ...), each from its own generated homeserver.yaml, on
// one PostgreSQL database and one signing key, replication through a real redis-server
// (test/helpers/redis.ts), and a real haproxy (Debian's /usr/sbin/haproxy) round-robin in front of them
// on a free port, health-checking `GET /health` so a killed process stops getting requests, and answering
// its own 502/503/504 with Matrix errcode JSON and Retry-After. Each process can be stopped, SIGKILLed and
// started again; redis too.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import YAML from "yaml";
import { freePort, makePgDatabase, readJsonResponse, TEST_DEFAULTS, type JsonResponse, type TestServer } from "./server.ts";
import { RedisServer, waitPort } from "./redis.ts";
import { eventually } from "./federation-peer.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const CLI = path.join(ROOT, "src/cli.ts");
export const HAPROXY = "/usr/sbin/haproxy";
export const CLUSTER_PROCESS_SECRET = "three-process-secret";

/** What a client of the tests calls: a TestServer-shaped handle on one base URL (a process or haproxy). */
export function clientOf(base: string): TestServer {
  const call = async (method: string, p: string, o: { token?: string; body?: unknown } = {}): Promise<JsonResponse> => {
    const headers: Record<string, string> = {};
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    if (o.body !== undefined) headers["content-type"] = "application/json";
    return readJsonResponse(await fetch(base + p, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) }));
  };
  return { call, baseUrl: base } as unknown as TestServer;
}

/** One Weft process: started from its config file, stopped by a signal. */
export class WeftProcess {
  child: ChildProcess | undefined;
  log = "";
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> = Promise.resolve({ code: null, signal: null });

  constructor(readonly name: string, readonly port: number, readonly configPath: string) {}

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.log = "";
    // node itself is the child (tsx as its loader, no launcher in between): a SIGKILL reaches the server.
    const child = spawn(process.execPath, ["--import", "tsx", CLI, "start", "-c", this.configPath], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    this.child = child;
    child.stdout!.on("data", (d: Buffer) => (this.log += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (this.log += d.toString()));
    this.exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
    let gone = false;
    void this.exited.then(() => (gone = true));
    await eventually(async () => {
      if (gone) throw new Error(`${this.name} exited before serving:\n${this.log}`);
      return (await fetch(`${this.base}/_matrix/client/versions`).catch(() => undefined))?.status === 200;
    }, `${this.name} to serve`, 120_000);
  }

  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    if (!this.running) return;
    this.child!.kill(signal);
    await this.exited;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  client(): TestServer {
    return clientOf(this.base);
  }
}

/** haproxy's own error answers (no process to send to): Matrix JSON with an errcode, retryable. */
function errorFile(status: number, reason: string): string {
  const body = JSON.stringify({ errcode: "M_UNKNOWN", error: `No homeserver process available (${status})` });
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nRetry-After: 1\r\nCache-Control: no-cache\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** The haproxy.cfg of the deployment (README "Scaling out" shows the same shape). */
export function haproxyConfig(port: number, servers: { name: string; port: number }[], errorDir: string): string {
  return [
    "global",
    "  maxconn 4096",
    "defaults",
    "  mode http",
    "  timeout connect 2s",
    "  timeout client 120s",
    "  timeout server 120s",
    // A request whose process is gone (refused, or closed without an answer) goes to another one.
    "  retries 3",
    "  option redispatch 1",
    "  retry-on conn-failure empty-response",
    `  errorfile 502 ${path.join(errorDir, "502.http")}`,
    `  errorfile 503 ${path.join(errorDir, "503.http")}`,
    `  errorfile 504 ${path.join(errorDir, "504.http")}`,
    "frontend matrix",
    `  bind 127.0.0.1:${port}`,
    "  default_backend weft",
    "backend weft",
    "  balance roundrobin",
    "  option httpchk GET /health",
    "  http-check expect status 200",
    "  default-server check inter 500ms fall 2 rise 1",
    ...servers.map((s) => `  server ${s.name} 127.0.0.1:${s.port}`),
    "",
  ].join("\n");
}

/** A real haproxy in front of the processes. */
export class Haproxy {
  private child: ChildProcess | undefined;
  log = "";
  constructor(readonly port: number, readonly configPath: string) {}

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    // -db: foreground, no daemon.
    const child = spawn(HAPROXY, ["-db", "-f", this.configPath], { stdio: ["ignore", "pipe", "pipe"] });
    this.child = child;
    child.stdout!.on("data", (d: Buffer) => (this.log += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (this.log += d.toString()));
    await waitPort(this.port, true, 10_000).catch((e: Error) => {
      throw new Error(`${e.message}\n${this.log}`);
    });
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;
  }

  client(): TestServer {
    return clientOf(this.base);
  }
}

export interface ProcessCluster {
  serverName: string;
  dbUrl: string;
  dir: string;
  processes: WeftProcess[];
  byName: Record<string, WeftProcess>;
  redis: RedisServer;
  haproxy: Haproxy;
  /** The homeserver.yaml of each process, as written. */
  configs: Record<string, Record<string, unknown>>;
  close(): Promise<void>;
}

/** The names of an N-process deployment: master, worker1, worker2 ... */
export function instanceNames(n: number): string[] {
  return ["master", ...Array.from({ length: n - 1 }, (_, i) => `worker${i + 1}`)];
}

/** The homeserver.yaml of one process of the deployment (over the test defaults). */
export function processConfig(o: { name: string; port: number; ports: Record<string, number>; dbUrl: string; dir: string; redisPort: number; serverName: string; publicBase: string; extra?: Record<string, unknown> }): Record<string, unknown> {
  const names = Object.keys(o.ports);
  return {
    ...TEST_DEFAULTS,
    server_name: o.serverName,
    public_baseurl: `${o.publicBase}/`,
    ...(o.name === "master" ? {} : { worker_name: o.name }),
    listeners: [{ port: o.port, type: "http", bind_addresses: ["127.0.0.1"], resources: [{ names: ["client", "federation"] }] }],
    database: { name: "psycopg2", args: { url: o.dbUrl } },
    signing_key_path: path.join(o.dir, "signing.key"),
    media_store_path: path.join(o.dir, "media"),
    // The internal requests between processes (write routing): master is `main` here, as in Synapse.
    instance_map: Object.fromEntries(names.map((n) => [n === "master" ? "main" : n, { host: "127.0.0.1", port: o.ports[n] }])),
    stream_writers: { events: names },
    worker_replication_secret: CLUSTER_PROCESS_SECRET,
    redis: { enabled: true, host: "127.0.0.1", port: o.redisPort },
    ...(o.extra ?? {}),
  };
}

/** Starts the deployment: redis, master (which applies the migrations and makes the key), the workers, haproxy. */
export async function startProcessCluster(opts: { processes?: number; extra?: Record<string, unknown> } = {}): Promise<ProcessCluster> {
  const names = instanceNames(opts.processes ?? 3);
  const dir = mkdtempSync(path.join(tmpdir(), "weft-3proc-"));
  const db = await makePgDatabase();
  const redis = await RedisServer.start();
  const ports: Record<string, number> = {};
  for (const n of names) ports[n] = await freePort();
  const lbPort = await freePort();
  const serverName = "cluster3.test";
  const configs: Record<string, Record<string, unknown>> = {};
  const processes = names.map((name) => {
    const config = processConfig({ name, port: ports[name]!, ports, dbUrl: db.url, dir, redisPort: redis.port, serverName, publicBase: `http://127.0.0.1:${lbPort}`, extra: opts.extra });
    configs[name] = config;
    const file = path.join(dir, `${name}.yaml`);
    writeFileSync(file, YAML.stringify(config));
    return new WeftProcess(name, ports[name]!, file);
  });
  writeFileSync(path.join(dir, "502.http"), errorFile(502, "Bad Gateway"));
  writeFileSync(path.join(dir, "503.http"), errorFile(503, "Service Unavailable"));
  writeFileSync(path.join(dir, "504.http"), errorFile(504, "Gateway Timeout"));
  const cfg = path.join(dir, "haproxy.cfg");
  writeFileSync(cfg, haproxyConfig(lbPort, names.map((n) => ({ name: n, port: ports[n]! })), dir));
  const haproxy = new Haproxy(lbPort, cfg);
  const close = async () => {
    await haproxy.stop();
    for (const p of processes) await p.kill("SIGKILL");
    await redis.kill();
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await processes[0]!.start();
    await Promise.all(processes.slice(1).map((p) => p.start()));
    await haproxy.start();
    return { serverName, dbUrl: db.url, dir, processes, byName: Object.fromEntries(processes.map((p) => [p.name, p])), redis, haproxy, configs, close };
  } catch (err) {
    await close();
    throw err;
  }
}
