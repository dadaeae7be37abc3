// bench/send: how fast one user sends messages into one room. The homeserver runs in its own process
// (`weft start`, as operators run it); autocannon sends 2,000 PUT /send requests with unique txnIds, first
// over one connection (sequential), then over 10 (concurrent), on SQLite and on PostgreSQL.
// Prints messages/s and p50/p99 latency. Usage: npm run bench:send [-- --backend sqlite|postgres] [--count N]
// --tool wrk [--seconds S] uses wrk (lighter client; needs `apt-get install wrk`) for S seconds per run.
// WEFT_BENCH_NODE_ARGS passes flags to the server's node (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import pg from "pg";
import YAML from "yaml";
import { generateConfig } from "../src/config/generate.ts";
import { sharedSecretMac } from "../src/domain/admin/shared-secret-registration.ts";

const { values } = parseArgs({
  options: {
    backend: { type: "string" },
    count: { type: "string", default: "2000" },
    warmup: { type: "string", default: "500" },
    tool: { type: "string", default: "autocannon" },
    seconds: { type: "string", default: "4" },
  },
});
const COUNT = Number(values.count);
const WARMUP = Number(values.warmup);
const PG_URL = process.env.WEFT_TEST_PG_URL ?? "postgresql://weft:weft@127.0.0.1:5432/weft";

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

async function json(url: string, init: RequestInit = {}): Promise<any> {
  const res = await fetch(url, { ...init, headers: { "content-type": "application/json", ...(init.headers ?? {}) } });
  const body = await res.json();
  if (!res.ok) throw new Error(`${init.method ?? "GET"} ${url}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

interface Run {
  label: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function send(base: string, token: string, roomId: string, amount: number, connections: number, label: string): Promise<Run> {
  const prefix = `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/send/m.room.message/`;
  const run = randomBytes(4).toString("hex");
  let n = 0;
  // autocannon notices `amount` being reached only on its one-second tick, so the run's own duration is
  // rounded up to whole seconds: time from the first request to the last response instead.
  let first = 0;
  let last = 0;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: base,
        connections,
        amount,
        timeout: 30,
        requests: [
          {
            method: "PUT",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            setupRequest: (req) => {
              first ||= performance.now();
              return { ...req, path: `${prefix}${run}-${n++}`, body: JSON.stringify({ msgtype: "m.text", body: `message ${n}` }) };
            },
          },
        ],
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
    instance.on("response", () => {
      last = performance.now();
    });
  });
  const ok = result["2xx"];
  const seconds = (last - first) / 1000;
  return { label, rps: ok / seconds, p50: result.latency.p50, p99: result.latency.p99, errors: result.non2xx + result.errors };
}

/** The same runs with wrk (C, much lighter than autocannon on the client side): for `seconds`, not a count. */
async function sendWrk(base: string, token: string, roomId: string, connections: number, label: string): Promise<Run> {
  const dir = mkdtempSync(path.join(tmpdir(), "weft-wrk-"));
  const script = process.env.WEFT_BENCH_WRK_SCRIPT ?? path.join(dir, "send.lua");
  const prefix = `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/send/m.room.message/`;
  writeFileSync(
    script,
    `local n = 0
local run = "${randomBytes(4).toString("hex")}"
local id = 0
setup = function(thread) id = id + 1; thread:set("tid", id) end
request = function()
  n = n + 1
  return wrk.format("PUT", "${prefix}" .. run .. "-" .. tid .. "-" .. n, { ["authorization"] = "Bearer ${token}", ["content-type"] = "application/json" }, '{"msgtype":"m.text","body":"message ' .. n .. '"}')
end
local shown = false
response = function(status, headers, body)
  if status >= 300 and not shown then shown = true; io.stderr:write("wrk: first error " .. status .. " " .. body .. "\\n") end
end
done = function(summary, latency, requests)
  io.write(string.format("WRK %d %d %d %d %d\\n", summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
`,
  );
  const threads = Math.min(connections, 2);
  const out = await new Promise<string>((resolve, reject) => {
    const p = spawn("wrk", ["-t", String(threads), "-c", String(connections), "-d", `${values.seconds}s`, "-s", script, base], { stdio: ["ignore", "pipe", "inherit"] });
    let buf = "";
    p.stdout!.on("data", (d) => (buf += d));
    p.on("error", reject);
    p.on("exit", () => resolve(buf));
  });
  rmSync(dir, { recursive: true, force: true });
  const m = /WRK (\d+) (\d+) (\d+) (\d+) (\d+)/.exec(out);
  if (!m) throw new Error(`wrk printed no summary: ${out}`);
  const [requests, micros, p50, p99, errors] = m.slice(1).map(Number) as [number, number, number, number, number];
  return { label, rps: requests / (micros / 1e6), p50: p50 / 1000, p99: p99 / 1000, errors };
}

async function bench(backend: "sqlite" | "postgres"): Promise<Run[]> {
  const dir = mkdtempSync(path.join(tmpdir(), "weft-bench-"));
  const port = await freePort();
  let dbName: string | undefined;
  let databaseUrl: string | undefined;
  if (backend === "postgres") {
    dbName = `weft_bench_${randomBytes(4).toString("hex")}`;
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`CREATE DATABASE ${dbName}`);
    await c.end();
    const u = new URL(PG_URL);
    u.pathname = `/${dbName}`;
    databaseUrl = u.toString();
  }
  const generated = await generateConfig({ serverName: "bench.local", configPath: path.join(dir, "homeserver.yaml"), port, databaseUrl });
  const cfg = YAML.parse(readFileSync(generated.configPath, "utf8"));
  Object.assign(cfg, { rc_message: { per_second: 1e6, burst_count: 1e6 }, log_level: "warn", password_config: { scrypt_log_n: 4 } });
  writeFileSync(generated.configPath, YAML.stringify(cfg));

  const child: ChildProcess = spawn(process.execPath, [...(process.env.WEFT_BENCH_NODE_ARGS?.split(" ").filter(Boolean) ?? []), "--import", "tsx", "src/cli.ts", "start", "-c", generated.configPath], { stdio: ["ignore", "inherit", "inherit"] });
  const base = `http://127.0.0.1:${port}`;
  try {
    for (let i = 0; ; i++) {
      try {
        await json(`${base}/_matrix/client/versions`);
        break;
      } catch {
        if (i > 300) throw new Error("server did not start");
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const { nonce } = await json(`${base}/_synapse/admin/v1/register`);
    const mac = sharedSecretMac(generated.registrationSharedSecret, { nonce, username: "bencher", password: "pw", admin: false });
    const user = await json(`${base}/_synapse/admin/v1/register`, { method: "POST", body: JSON.stringify({ nonce, username: "bencher", password: "pw", admin: false, mac }) });
    const room = await json(`${base}/_matrix/client/v3/createRoom`, { method: "POST", body: JSON.stringify({ name: "bench" }), headers: { authorization: `Bearer ${user.access_token}` } });
    await send(base, user.access_token, room.room_id, WARMUP, 4, "warm-up");
    if (values.tool === "wrk") {
      const seq = await sendWrk(base, user.access_token, room.room_id, 1, `${backend} sequential (1 connection)`);
      const con = await sendWrk(base, user.access_token, room.room_id, 10, `${backend} concurrent (10 connections)`);
      return [seq, con];
    }
    const seq = await send(base, user.access_token, room.room_id, COUNT, 1, `${backend} sequential (1 connection)`);
    const con = await send(base, user.access_token, room.room_id, COUNT, 10, `${backend} concurrent (10 connections)`);
    return [seq, con];
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
    rmSync(dir, { recursive: true, force: true });
    if (dbName) {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      await c.end();
    }
  }
}

const backends = values.backend ? [values.backend as "sqlite" | "postgres"] : (["sqlite", "postgres"] as const);
const rows: Run[] = [];
for (const b of backends) rows.push(...(await bench(b)));
console.log(
  values.tool === "wrk"
    ? `\nbench/send: ${values.seconds} s per run, one user, one room (wrk; server in its own process)`
    : `\nbench/send: ${COUNT} messages per run, one user, one room (autocannon; server in its own process)`,
);
console.log("run".padEnd(40), "msg/s".padStart(8), "p50 ms".padStart(8), "p99 ms".padStart(8), "errors".padStart(7));
for (const r of rows) console.log(r.label.padEnd(40), r.rps.toFixed(0).padStart(8), String(r.p50).padStart(8), String(r.p99).padStart(8), String(r.errors).padStart(7));
