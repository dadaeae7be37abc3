// bench/cluster: a 3-process Weft server against one process, each `weft start` in its own OS process (as
// operators run it) on one PostgreSQL database, the cluster with a real redis-server between them and the
// events stream sharded over all three (README "Scaling out"). Issue 37's benchmarks:
// (a) cross-process send→sync delivery: P long-pollers joined to one room spread over the 3 processes
//     (poller i on process i mod 3), M messages sent one at a time, message k through process k mod 3 (two
//     of three forwarded to the room's writer); per delivery, the time from the send's start to the poller's
//     /sync answer carrying it; p50/p99/max, and the same with one process;
// (b) send msg/s: C concurrent senders in 3 rooms (one written by each process), the same client load on a
//     single process and on the cluster — "affine" (each sender on its room's writer) and "round-robin"
//     (request n on process n mod 3, as a plain load balancer: 2 of 3 forwarded); the overhead in %;
// (c) capacity: measured per-process sends/s, incremental syncs/s and memory (RSS idle and per parked
//     long-poller), and from them the processes a 10,000-user server needs under stated activity profiles.
// The clients run in this Node process on the same machine: the machine's load average is printed beside.
// Usage: npm run bench:cluster [-- --pollers 100 --messages 30 --senders 12 --count 1500 --seconds 4 --events-writers 3]
// (--events-writers 1: only master writes events, the two others forward every write to it.)
// Needs PostgreSQL (WEFT_TEST_PG_URL) and /usr/bin/redis-server.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import YAML from "yaml";
import { generateConfig } from "../src/config/generate.ts";
import { sharedSecretMac } from "../src/domain/admin/shared-secret-registration.ts";
import { RedisServer } from "../test/helpers/redis.ts";
import { BENCH_CONFIG, createPgDatabase, dropPgDatabase, freePort, json, processCpuSeconds, processRss, SERVER_NODE_ARGS, serverCommand, waitForVersions } from "./homeserver.ts";

const { values } = parseArgs({
  options: {
    pollers: { type: "string", default: "100" },
    messages: { type: "string", default: "30" },
    senders: { type: "string", default: "12" },
    count: { type: "string", default: "1500" },
    seconds: { type: "string", default: "4" },
    "events-writers": { type: "string", default: "3" },
  },
});
const POLLERS = Number(values.pollers);
const MESSAGES = Number(values.messages);
const SENDERS = Number(values.senders);
const COUNT = Number(values.count);
const SYNC_SECONDS = Number(values.seconds);
/** How many of the cluster's processes write events (rooms sharded over them); the others forward. */
const EVENTS_WRITERS = Number(values["events-writers"]);
const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

interface Proc {
  name: string;
  base: string;
  child: ChildProcess;
}

interface Server {
  procs: Proc[];
  register(username: string): Promise<string>;
  stop(): Promise<void>;
}

/** `n` processes (`n` = 1: a plain single process, no cluster options) of one server on a new database. */
async function startServer(n: number): Promise<Server> {
  const dir = mkdtempSync(path.join(tmpdir(), "weft-bench-cluster-"));
  const db = await createPgDatabase("weft_bench_cluster");
  const redis = n > 1 ? await RedisServer.start() : undefined;
  const names = ["master", ...Array.from({ length: n - 1 }, (_, i) => `worker${i + 1}`)];
  const ports = await Promise.all(names.map(() => freePort()));
  const generated = await generateConfig({ serverName: "bench.local", configPath: path.join(dir, "homeserver.yaml"), port: ports[0]!, databaseUrl: db.url });
  const base = YAML.parse(readFileSync(generated.configPath, "utf8"));
  Object.assign(base, BENCH_CONFIG);
  const cluster =
    n > 1
      ? {
          instance_map: Object.fromEntries(names.map((name, i) => [name === "master" ? "main" : name, { host: "127.0.0.1", port: ports[i] }])),
          stream_writers: { events: names.slice(0, EVENTS_WRITERS) },
          redis: { enabled: true, host: "127.0.0.1", port: redis!.port },
          worker_replication_secret: "bench-cluster-secret",
        }
      : {};
  const nodeArgs = [...SERVER_NODE_ARGS, ...(process.env.WEFT_BENCH_NODE_ARGS?.split(" ").filter(Boolean) ?? [])];
  const command = serverCommand(nodeArgs);
  const procs: Proc[] = [];
  const stop = async () => {
    for (const p of [...procs].reverse()) {
      if (p.child.exitCode === null) {
        p.child.kill("SIGTERM");
        await new Promise((r) => p.child.once("exit", r));
      }
    }
    await redis?.kill();
    await dropPgDatabase(db.name);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // One at a time: the first applies the migrations.
    for (const [i, name] of names.entries()) {
      const cfg = structuredClone(base);
      cfg.listeners[0].port = ports[i];
      Object.assign(cfg, cluster, name === "master" ? {} : { worker_name: name });
      const file = path.join(dir, `${name}.yaml`);
      writeFileSync(file, YAML.stringify(cfg));
      const child = spawn(process.execPath, [...command, "start", "-c", file], { stdio: ["ignore", "inherit", "inherit"] });
      const p = { name, base: `http://127.0.0.1:${ports[i]}`, child };
      procs.push(p);
      await waitForVersions(p.base, child);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  const register = async (username: string): Promise<string> => {
    const at = procs[0]!.base;
    const { nonce } = await json(`${at}/_synapse/admin/v1/register`);
    const mac = sharedSecretMac(generated.registrationSharedSecret, { nonce, username, password: "pw", admin: false });
    return (await json(`${at}/_synapse/admin/v1/register`, { method: "POST", body: JSON.stringify({ nonce, username, password: "pw", admin: false, mac }) })).access_token;
  };
  return { procs, register, stop };
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const load = () => loadavg().map((l) => l.toFixed(2)).join(" ");
const filter = enc(JSON.stringify({ room: { timeline: { limit: 50 } }, presence: { not_types: ["*"] } }));

async function inBatches<T>(items: T[], n: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += n) await Promise.all(items.slice(i, i + n).map((x, j) => fn(x, i + j)));
}

async function sendOne(base: string, token: string, roomId: string, txn: string, body: string): Promise<void> {
  const res = await fetch(`${base}${V3}/rooms/${enc(roomId)}/send/m.room.message/${txn}`, {
    method: "PUT",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ msgtype: "m.text", body }),
  });
  if (res.status !== 200) throw new Error(`send on ${base}: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
}

interface Delivery {
  label: string;
  deliveries: number;
  missing: number;
  p50: number;
  p99: number;
  max: number;
  load: string;
}

/** (a): pollers long-poll on their process; message k is sent through process k mod n, one at a time. */
async function delivery(label: string, srv: Server, roomId: string, sender: string, tokens: string[]): Promise<Delivery> {
  const n = srv.procs.length;
  const sentAt = new Map<string, number>();
  const arrived = new Map<string, number[]>();
  let finished = false;
  let parked = 0;
  const poll = async (token: string, i: number) => {
    const at = srv.procs[i % n]!.base;
    const get = async (q: string) => {
      const res = await fetch(`${at}${V3}/sync?filter=${filter}${q}`, { headers: { authorization: `Bearer ${token}` } });
      if (res.status !== 200) throw new Error(`sync on ${at}: ${res.status} ${await res.text()}`);
      return (await res.json()) as any;
    };
    let since = (await get("")).next_batch as string;
    while (!finished) {
      parked++;
      const body = await get(`&timeout=20000&since=${enc(since)}`);
      parked--;
      const now = performance.now();
      for (const e of body.rooms?.join?.[roomId]?.timeline?.events ?? []) if (e.type === "m.room.message") arrived.get(e.content.body)?.push(now);
      since = body.next_batch;
    }
  };
  const pollers = tokens.map((t, i) => poll(t, i));
  const settle = async () => {
    // Every poller has its next long-poll out, then a moment for the servers to park them (the bench
    // cannot see another process's notifier).
    const until = Date.now() + 20_000;
    while (parked < tokens.length && Date.now() < until) await new Promise((r) => setTimeout(r, 2));
    await new Promise((r) => setTimeout(r, 30));
  };
  await settle();
  for (let k = 0; k < MESSAGES; k++) {
    const body = `${label}-${k}`;
    arrived.set(body, []);
    sentAt.set(body, performance.now());
    await sendOne(srv.procs[k % n]!.base, sender, roomId, body, body);
    const until = Date.now() + 15_000;
    while (arrived.get(body)!.length < tokens.length && Date.now() < until) await new Promise((r) => setImmediate(r));
    await settle();
  }
  finished = true;
  await sendOne(srv.procs[0]!.base, sender, roomId, `${label}-end`, `${label}-end`);
  await Promise.all(pollers);
  const lat: number[] = [];
  let missing = 0;
  for (const [body, times] of arrived) {
    missing += Math.max(0, tokens.length - times.length);
    for (const t of times) lat.push(t - sentAt.get(body)!);
  }
  lat.sort((a, b) => a - b);
  return { label, deliveries: lat.length, missing, p50: pct(lat, 50), p99: pct(lat, 99), max: lat[lat.length - 1] ?? NaN, load: load() };
}

interface Throughput {
  label: string;
  rps: number;
  p50: number;
  p99: number;
  cpu: number;
  load: string;
}

/** (b): `SENDERS` senders, sender j in room j mod 3; `pick(j, n)` is the process of sender j's n-th request. */
async function throughput(label: string, srv: Server, rooms: string[], senders: string[], pick: (j: number, n: number) => number, count: number): Promise<Throughput> {
  const lat: number[] = [];
  let next = 0;
  const cpu0 = srv.procs.reduce((a, p) => a + processCpuSeconds(p.child.pid!), 0);
  const t0 = performance.now();
  await Promise.all(
    senders.map(async (token, j) => {
      for (let n = 0; next < count; n++) {
        const id = next++;
        const s = performance.now();
        await sendOne(srv.procs[pick(j, n)]!.base, token, rooms[j % rooms.length]!, `${label.replace(/\W/g, "")}-${id}`, `m${id}`);
        lat.push(performance.now() - s);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu = srv.procs.reduce((a, p) => a + processCpuSeconds(p.child.pid!), 0) - cpu0;
  lat.sort((a, b) => a - b);
  return { label, rps: lat.length / seconds, p50: pct(lat, 50), p99: pct(lat, 99), cpu: cpu / seconds, load: load() };
}

/** (c): incremental /sync (timeout 0, from the latest token) by `tokens` over `seconds` on one process. */
async function syncRate(base: string, tokens: string[], seconds: number): Promise<number> {
  const since = new Map<string, string>();
  await Promise.all(tokens.map(async (t) => since.set(t, (await json(`${base}${V3}/sync?filter=${filter}`, { token: t })).next_batch)));
  let done = 0;
  const until = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    tokens.slice(0, 10).map(async (t) => {
      while (performance.now() < until) {
        const body = await json(`${base}${V3}/sync?filter=${filter}&timeout=0&since=${enc(since.get(t)!)}`, { token: t });
        since.set(t, body.next_batch);
        done++;
      }
    }),
  );
  return done / ((performance.now() - t0) / 1000);
}

/** The server's users and rooms: pollers in one room written by master; senders in 3 rooms, one per process. */
async function populate(srv: Server) {
  const n = srv.procs.length;
  const sender = await srv.register("sender");
  const roomId = (await json(`${srv.procs[0]!.base}${V3}/createRoom`, { method: "POST", token: sender, body: JSON.stringify({ preset: "public_chat" }) })).room_id as string;
  const tokens: string[] = [];
  await inBatches(Array.from({ length: POLLERS }, (_, i) => i), 10, async (i) => {
    const t = await srv.register(`poller${i}`);
    await json(`${srv.procs[i % n]!.base}${V3}/join/${enc(roomId)}`, { method: "POST", token: t, body: "{}" });
    tokens[i] = t;
  });
  const senders: string[] = [];
  await inBatches(Array.from({ length: SENDERS }, (_, j) => j), 6, async (j) => {
    senders[j] = await srv.register(`s${j}`);
  });
  // Three rooms, each created on (so written by) process r mod n; every sender joins its room.
  const rooms: string[] = [];
  for (let r = 0; r < 3; r++) {
    rooms.push((await json(`${srv.procs[r % n]!.base}${V3}/createRoom`, { method: "POST", token: senders[r]!, body: JSON.stringify({ preset: "public_chat" }) })).room_id);
  }
  await inBatches(senders.slice(3), 6, async (t, j) => {
    await json(`${srv.procs[(j + 3) % 3 % n]!.base}${V3}/join/${enc(rooms[(j + 3) % 3]!)}`, { method: "POST", token: t, body: "{}" });
  });
  return { sender, roomId, tokens, senders, rooms };
}

const mb = (b: number) => (b / 2 ** 20).toFixed(0);
const rss = (srv: Server) => srv.procs.map((p) => processRss(p.child.pid!).rss);

interface Measured {
  delivery: Delivery;
  sends: Throughput[];
  syncsPerSec: number;
  idleRss: number[];
  parkedRss: number[];
}

async function measure(n: number): Promise<Measured> {
  const srv = await startServer(n);
  try {
    const { sender, roomId, tokens, senders, rooms } = await populate(srv);
    const idleRss = rss(srv);
    const label = n === 1 ? "1 process" : `${n} processes`;
    // Warm-up (JIT, caches, connections), not measured.
    await throughput("warm-up", srv, rooms, senders, (j, k) => (j + k) % n, 300);
    const d = await delivery(label, srv, roomId, sender, tokens);
    // RSS with every poller parked again (delivery's pollers ended): park them once more, read, release.
    const parkedRss = await (async () => {
      const ctl = new AbortController();
      const since = await Promise.all(tokens.map(async (t) => (await json(`${srv.procs[0]!.base}${V3}/sync?filter=${filter}`, { token: t })).next_batch as string));
      const polls = tokens.map((t, i) =>
        fetch(`${srv.procs[i % n]!.base}${V3}/sync?filter=${filter}&timeout=20000&since=${enc(since[i]!)}`, { headers: { authorization: `Bearer ${t}` }, signal: ctl.signal }).then((r) => r.arrayBuffer(), () => undefined),
      );
      await new Promise((r) => setTimeout(r, 1000));
      const r = rss(srv);
      await sendOne(srv.procs[0]!.base, sender, roomId, "release", "release");
      await Promise.race([Promise.all(polls), new Promise((r) => setTimeout(r, 15_000))]);
      ctl.abort();
      return r;
    })();
    const sends: Throughput[] =
      n === 1
        ? [await throughput(`${label}`, srv, rooms, senders, () => 0, COUNT)]
        : [
            await throughput(`${label}, affine`, srv, rooms, senders, (j) => j % 3 % n, COUNT),
            await throughput(`${label}, round-robin`, srv, rooms, senders, (j, k) => (j + k) % n, COUNT),
          ];
    const syncsPerSec = await syncRate(srv.procs[0]!.base, tokens, SYNC_SECONDS);
    return { delivery: d, sends, syncsPerSec, idleRss, parkedRss };
  } finally {
    await srv.stop();
  }
}

console.log(`bench/cluster: ${cpus().length} cores, load at start ${load()}; PostgreSQL, each Weft process its own OS process (compiled, npm start's flags); cluster: ${EVENTS_WRITERS} of 3 processes write events`);
const single = await measure(1);
const cluster = await measure(3);

console.log(`\n(a) send→sync delivery: ${POLLERS} long-pollers in one room (spread over the processes), ${MESSAGES} messages one at a time, message k through process k mod N`);
console.log("server".padEnd(14), "deliveries".padStart(10), "p50 ms".padStart(8), "p99 ms".padStart(8), "max ms".padStart(8), "missing".padStart(8), "  load (1/5/15 min) at the end");
for (const d of [single.delivery, cluster.delivery]) {
  console.log(d.label.padEnd(14), String(d.deliveries).padStart(10), d.p50.toFixed(1).padStart(8), d.p99.toFixed(1).padStart(8), d.max.toFixed(1).padStart(8), String(d.missing).padStart(8), `  ${d.load}`);
}
console.log(`target: p99 < 50 ms across processes — ${cluster.delivery.p99 < 50 ? "met" : "NOT met"} here`);

console.log(`\n(b) send msg/s: ${SENDERS} concurrent senders in 3 rooms (one written by each process), ${COUNT} messages per run`);
console.log("server".padEnd(28), "msg/s".padStart(7), "p50 ms".padStart(8), "p99 ms".padStart(8), "server CPU s/s".padStart(15), "  load at the end");
const singleRps = single.sends[0]!.rps;
for (const t of [...single.sends, ...cluster.sends]) {
  const over = t === single.sends[0] ? "" : `  overhead ${(((singleRps - t.rps) / singleRps) * 100).toFixed(0)}%`;
  console.log(t.label.padEnd(28), t.rps.toFixed(0).padStart(7), t.p50.toFixed(1).padStart(8), t.p99.toFixed(1).padStart(8), t.cpu.toFixed(2).padStart(15), `  ${t.load}${over}`);
}
console.log("target: cluster overhead ≤ 15% (overhead = how much fewer msg/s the cluster gives under the same client load on this machine)");

// (c) capacity. Per process: sends/s as the cluster's round-robin throughput over its processes' CPU
// (msg per CPU-second: what one process gives on one core), syncs/s likewise from one process alone.
const rr = cluster.sends[cluster.sends.length - 1]!;
const sendsPerCore = rr.rps / Math.max(rr.cpu, 0.01);
const syncsPerCore = single.syncsPerSec; // measured on one process with clients beside it on 2 cores: a floor
const idle = cluster.idleRss.reduce((a, b) => a + b, 0) / cluster.idleRss.length;
const perPoller = (cluster.parkedRss.reduce((a, b) => a + b, 0) - cluster.idleRss.reduce((a, b) => a + b, 0)) / POLLERS;
console.log(`\n(c) measured per process: ${sendsPerCore.toFixed(0)} sends per CPU-second (cluster, round-robin), ${syncsPerCore.toFixed(0)} incremental syncs/s (one process, 10 clients, timeout 0),`);
console.log(`    RSS ${mb(idle)} MB idle per process, ${(perPoller / 1024).toFixed(1)} KB per parked long-poller (${POLLERS} parked over 3 processes; noisy: GC)`);

interface Profile {
  name: string;
  msgsPerUserDay: number;
  /** Fraction of users with a client long-polling at the peak hour. */
  online: number;
  /** Local members woken (one /sync each) per event. */
  fanout: number;
}
// Synapse-ish profiles: chat servers see tens of messages per active user a day, peak hour 3× the mean,
// each message also brings ~2 other events (receipts, typing → read markers, edits/reactions); every
// event wakes the long-polls of the local members of its room; an idle long-poll returns every 30 s.
const USERS = 10_000;
const PEAK = 3;
const EVENTS_PER_MSG = 3;
const profiles: Profile[] = [
  { name: "quiet (community)", msgsPerUserDay: 5, online: 0.1, fanout: 20 },
  { name: "typical (company chat)", msgsPerUserDay: 30, online: 0.3, fanout: 15 },
  { name: "busy (large rooms)", msgsPerUserDay: 60, online: 0.5, fanout: 50 },
];
const HEADROOM = 0.5; // run each process at half of what it measured
const MEM_BUDGET = 1024 * 2 ** 20; // 1 GB per process
console.log(`\n    ${USERS} users; peak = ${PEAK}× the daily mean; ${EVENTS_PER_MSG} events per message; idle long-polls return every 30 s; each process run at ${HEADROOM * 100}% of its measured rate, ${mb(MEM_BUDGET)} MB memory each`);
console.log("    " + "profile".padEnd(24), "msg/user/day".padStart(12), "online".padStart(7), "fan-out".padStart(8), "writes/s".padStart(9), "syncs/s".padStart(8), "long-polls".padStart(10), "→ processes (writes, syncs, memory)");
for (const p of profiles) {
  const writes = ((USERS * p.msgsPerUserDay) / 86_400) * PEAK * EVENTS_PER_MSG;
  const pollers = USERS * p.online;
  const syncs = writes * p.fanout + pollers / 30;
  const byWrites = Math.ceil(writes / (sendsPerCore * HEADROOM));
  const bySyncs = Math.ceil(syncs / (syncsPerCore * HEADROOM));
  const byMem = Math.ceil((idle + pollers * Math.max(perPoller, 0)) / MEM_BUDGET);
  const need = Math.max(byWrites, bySyncs, byMem);
  console.log(
    "    " + p.name.padEnd(24),
    String(p.msgsPerUserDay).padStart(12),
    `${(p.online * 100).toFixed(0)}%`.padStart(7),
    String(p.fanout).padStart(8),
    writes.toFixed(1).padStart(9),
    syncs.toFixed(0).padStart(8),
    String(pollers).padStart(10),
    `→ ${need} (${byWrites}, ${bySyncs}, ${byMem})`,
  );
}
console.log("    (one process per core; the writes column counts events writers; a reader-only process adds sync capacity, not write capacity)");
