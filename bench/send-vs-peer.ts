// bench/send-vs-peer: send throughput of Weft beside the peer TypeScript homeserver matrix-server-node
// (issue 17), in one run on the same machine: both servers in their own processes on fresh databases, one
// user sending into one room with wrk, the servers alternating round by round (which one goes first flips
// each round), on SQLite and PostgreSQL, with 1 and 10 connections. Prints each server's median msg/s
// (min–max over the rounds) and the ratio Weft / peer (the median of the per-round ratios: each round's two
// runs are back to back, so a load change on a shared machine hits both), with the load average beside,
// and each server process's CPU time per message (its own process only: PostgreSQL's work is not in it),
// the figure a loaded machine disturbs least. Then each server's resident memory: before the runs (after
// start-up, its user and room made) and after them, with the peak the process reached (VmHWM).
// On SQLite a third server runs in the same rounds: the machine's send ceiling (bench/ceiling/server.ts, a
// server that does only the protocol's required work of a send into a room of one server: transaction id,
// hashes, the event's rows, one transaction per turn), printed as "ceiling" with Weft's share of it (--no-ceiling: off).
// The peer is installed outside this repository by bench/peer/install.sh (WEFT_PEER_DIR, WEFT_PEER_REPO).
// Usage: npm run bench:send-vs-peer [-- --backend sqlite|postgres] [--rounds 3] [--seconds 5] [--connections 1,10] [--no-ceiling]
// WEFT_BENCH_NODE_ARGS passes flags to Weft's node (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { json, processCpuSeconds, processRss, startBenchServer, type Backend } from "./homeserver.ts";
import { installPeer, startPeer } from "./peer/server.ts";
import { startCeiling, type CeilingServer } from "./ceiling/start.ts";
import { wrkSend, type SendRun } from "./wrk-send.ts";

const { values } = parseArgs({
  options: {
    backend: { type: "string" },
    rounds: { type: "string", default: "3" },
    seconds: { type: "string", default: "5" },
    warmup: { type: "string", default: "3" },
    connections: { type: "string", default: "1,10" },
    "no-ceiling": { type: "boolean", default: false },
  },
});
const ROUNDS = Number(values.rounds);
const SECONDS = Number(values.seconds);
const WARMUP = Number(values.warmup);
const CONNECTIONS = values.connections!.split(",").map(Number);

interface Target {
  name: "weft" | "peer" | "ceiling";
  pid: number;
  base: string;
  token: string;
  roomId: string;
}

async function target(name: Target["name"], pid: number, base: string, token: string): Promise<Target> {
  const room = await json(`${base}/_matrix/client/v3/createRoom`, { method: "POST", body: JSON.stringify({ name: "bench", preset: "public_chat" }), token });
  return { name, pid, base, token, roomId: room.room_id };
}

type Measured = SendRun & { cpuMicrosPerMessage: number };

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const load = () => loadavg().map((x) => x.toFixed(2)).join(" ");

interface Row {
  label: string;
  weft: Measured[];
  peer: Measured[];
  ceiling: Measured[];
}

/** A server's resident memory on one database: before the send runs, after them, and its peak. */
interface Memory {
  label: string;
  before: number;
  after: number;
  peak: number;
}

async function bench(peerDir: string, backend: Backend): Promise<{ rows: Row[]; memory: Memory[] }> {
  const weftSrv = await startBenchServer(backend);
  const peerSrv = await startPeer(peerDir, backend).catch(async (err) => {
    await weftSrv.stop();
    throw err;
  });
  let ceiling: CeilingServer | undefined;
  try {
    const targets = [
      await target("weft", weftSrv.pid, weftSrv.base, await weftSrv.register("bencher")),
      await target("peer", peerSrv.pid, peerSrv.base, await peerSrv.register("bencher")),
    ];
    if (backend === "sqlite" && !values["no-ceiling"]) {
      ceiling = await startCeiling();
      // It answers any token and room: the path only carries the transaction id to it.
      targets.push({ name: "ceiling", pid: ceiling.pid, base: ceiling.base, token: "none", roomId: "!ceiling:ceiling.local" });
    }
    const before = new Map(targets.map((t) => [t.name, processRss(t.pid).rss]));
    for (const t of targets) await wrkSend({ ...t, connections: 4, seconds: WARMUP });
    const rows: Row[] = CONNECTIONS.map((c) => ({ label: `send, ${backend === "sqlite" ? "SQLite" : "PostgreSQL"}, ${c} connection${c === 1 ? "" : "s"}`, weft: [], peer: [], ceiling: [] }));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, connections] of CONNECTIONS.entries()) {
        const order = round % 2 === 0 ? targets : [...targets].reverse();
        for (const t of order) {
          const cpuBefore = processCpuSeconds(t.pid);
          const sent = await wrkSend({ ...t, connections, seconds: SECONDS });
          const run = { ...sent, cpuMicrosPerMessage: ((processCpuSeconds(t.pid) - cpuBefore) * 1e6) / Math.max(1, sent.requests) };
          rows[i]![t.name].push(run);
          console.error(
            `${rows[i]!.label}, round ${round + 1}: ${t.name} ${run.rps.toFixed(0)} msg/s, ${run.cpuMicrosPerMessage.toFixed(0)} µs CPU/msg (p50 ${run.p50} ms, p99 ${run.p99} ms, errors ${run.errors}; load ${load()})`,
          );
        }
      }
    }
    const memory = targets.filter((t) => t.name !== "ceiling").map((t): Memory => {
      const now = processRss(t.pid);
      return { label: `${t.name === "weft" ? "Weft" : "peer"}, ${backend === "sqlite" ? "SQLite" : "PostgreSQL"}`, before: before.get(t.name)!, after: now.rss, peak: now.peak };
    });
    return { rows, memory };
  } finally {
    await Promise.all([weftSrv.stop(), peerSrv.stop(), ceiling?.stop()]);
  }
}

const peerDir = installPeer();
const loadBefore = load();
const backends = values.backend ? [values.backend as Backend] : (["sqlite", "postgres"] as const);
const rows: Row[] = [];
const memory: Memory[] = [];
for (const b of backends) {
  const measured = await bench(peerDir, b);
  rows.push(...measured.rows);
  memory.push(...measured.memory);
}
const span = (r: number[]) => `${median(r).toFixed(0)} (${Math.min(...r).toFixed(0)}–${Math.max(...r).toFixed(0)})`;
console.log(`\nbench/send-vs-peer: ${ROUNDS} rounds of ${SECONDS} s per server and row, alternating; one user, one room (wrk)`);
console.log(`load average (1/5/15 min): ${loadBefore} before, ${load()} after`);
console.log("row".padEnd(34), "Weft msg/s".padStart(20), "peer msg/s".padStart(20), "Weft/peer".padStart(10), "CPU µs/msg Weft".padStart(16), "peer".padStart(6), "errors".padStart(7));
for (const r of rows) {
  const ratio = median(r.weft.map((w, i) => w.rps / r.peer[i]!.rps));
  const errors = [...r.weft, ...r.peer, ...r.ceiling].reduce((n, x) => n + x.errors, 0);
  const cpu = (runs: Measured[]) => median(runs.map((x) => x.cpuMicrosPerMessage)).toFixed(0);
  console.log(
    r.label.padEnd(34),
    span(r.weft.map((x) => x.rps)).padStart(20),
    span(r.peer.map((x) => x.rps)).padStart(20),
    `${ratio.toFixed(2)}×`.padStart(10),
    cpu(r.weft).padStart(16),
    cpu(r.peer).padStart(6),
    String(errors).padStart(7),
  );
}
const withCeiling = rows.filter((r) => r.ceiling.length > 0);
if (withCeiling.length > 0) {
  console.log("\nthe machine's send ceiling (bench/ceiling/server.ts: only the protocol's required work), same rounds");
  console.log("row".padEnd(34), "ceiling msg/s".padStart(20), "Weft/ceiling".padStart(13), "peer/ceiling".padStart(13), "2× peer/ceiling".padStart(16), "CPU µs/msg".padStart(11));
  for (const r of withCeiling) {
    const share = (runs: Measured[]) => `${median(runs.map((x, i) => x.rps / r.ceiling[i]!.rps)).toFixed(2)}×`;
    const target = median(r.peer.map((x, i) => (2 * x.rps) / r.ceiling[i]!.rps));
    console.log(
      r.label.padEnd(34),
      span(r.ceiling.map((x) => x.rps)).padStart(20),
      share(r.weft).padStart(13),
      share(r.peer).padStart(13),
      `${target.toFixed(2)}×`.padStart(16),
      median(r.ceiling.map((x) => x.cpuMicrosPerMessage)).toFixed(0).padStart(11),
    );
  }
}
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
console.log("\nresident memory (RSS)".padEnd(35), "before the runs".padStart(16), "after".padStart(8), "peak".padStart(8));
for (const m of memory) console.log(m.label.padEnd(34), mb(m.before).padStart(16), mb(m.after).padStart(8), mb(m.peak).padStart(8));
