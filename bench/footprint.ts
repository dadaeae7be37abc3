// bench/footprint: the server's footprint and start-up (issue 17). For each database (SQLite, PostgreSQL)
// it makes a fresh config and database, starts the server as `npm start` does (compiled, bin/weft.js,
// SERVER_NODE_ARGS) and prints: the time to the first /versions answer on the fresh database (migrations
// included), then for --runs restarts on that existing database the time to /versions (wall clock, and
// the server's own CPU seconds by then: less noisy on a shared machine), RSS then, and RSS and V8 heap
// after --idle seconds of idleness. The machine's load average is printed beside every line.
// Usage: npm run bench:footprint [-- --backend sqlite|postgres|both --runs 3 --idle 30]
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { generateConfig } from "../src/config/generate.ts";
import { createPgDatabase, dropPgDatabase, freePort, SERVER_NODE_ARGS, serverCommand, type Backend } from "./homeserver.ts";

const { values } = parseArgs({
  options: {
    backend: { type: "string", default: "both" },
    runs: { type: "string", default: "3" },
    idle: { type: "string", default: "30" },
  },
});
const RUNS = Number(values.runs);
const IDLE = Number(values.idle);
const backends: Backend[] = values.backend === "both" ? ["sqlite", "postgres"] : [values.backend as Backend];

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const load = () => loadavg().map((l) => l.toFixed(2)).join(" ");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function procStatus(pid: number): { rss: number; cpu: number } {
  const rss = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN) * 1024;
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return { rss, cpu: (Number(f[11]) + Number(f[12])) / 100 };
}

interface Run {
  versionsMs: number;
  cpuSeconds: number;
  rssAtVersions: number;
  idle?: { rss: number; heapUsed: number; heapTotal: number; external: number };
}

/** Starts the server, waits for /versions, optionally idles, stops it (SIGTERM). */
async function run(configPath: string, port: number, idleSeconds: number): Promise<Run> {
  const memFile = path.join(path.dirname(configPath), "memory.json");
  const args = serverCommand([...SERVER_NODE_ARGS, "--import", path.resolve("bench/memory-reporter.mjs")]);
  const started = performance.now();
  const child = spawn(process.execPath, [...args, "start", "-c", configPath], {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, WEFT_BENCH_MEMORY_FILE: memFile },
  });
  const exited = new Promise((r) => child.once("exit", r));
  try {
    for (;;) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/_matrix/client/versions`);
        if (res.ok) break;
      } catch {
        // not listening yet
      }
      if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode})`);
      if (performance.now() - started > 120_000) throw new Error("the server did not answer /versions in 120 s");
      await sleep(10);
    }
    const versionsMs = performance.now() - started;
    const at = procStatus(child.pid!);
    const out: Run = { versionsMs, cpuSeconds: at.cpu, rssAtVersions: at.rss };
    if (idleSeconds > 0) {
      await sleep(idleSeconds * 1000);
      const m = JSON.parse(readFileSync(memFile, "utf8")) as { heapUsed: number; heapTotal: number; external: number };
      out.idle = { rss: procStatus(child.pid!).rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external };
    }
    return out;
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
}

function print(label: string, r: Run): void {
  const idle = r.idle
    ? `; after ${IDLE} s idle: RSS ${mb(r.idle.rss)} (heap used ${mb(r.idle.heapUsed)} of ${mb(r.idle.heapTotal)}, external ${mb(r.idle.external)})`
    : "";
  console.log(`${label}: /versions after ${r.versionsMs.toFixed(0)} ms (server CPU ${r.cpuSeconds.toFixed(2)} s), RSS ${mb(r.rssAtVersions)}${idle}  [load ${load()}]`);
}

async function main(): Promise<void> {
  serverCommand([]); // builds dist/ now when src/ changed, so no run below includes a compilation
  for (const backend of backends) {
    const dir = mkdtempSync(path.join(tmpdir(), "weft-footprint-"));
    const db = backend === "postgres" ? await createPgDatabase("weft_footprint") : undefined;
    try {
      const port = await freePort();
      const { configPath } = await generateConfig({ serverName: "bench.local", configPath: path.join(dir, "homeserver.yaml"), port, databaseUrl: db?.url });
      print(`${backend}, fresh database`, await run(configPath, port, IDLE));
      for (let i = 1; i <= RUNS; i++) print(`${backend}, existing database, start ${i}`, await run(configPath, port, i === RUNS ? IDLE : 0));
    } finally {
      rmSync(dir, { recursive: true, force: true });
      if (db) await dropPgDatabase(db.name);
    }
  }
}

await main();
