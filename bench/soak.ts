// bench/soak: memory under steady load (issue 11, finding 7). The homeserver runs in its own process
// (`weft start`); U users (default 1,000) in R rooms (default 100, each user in --joins of them) all
// long-poll /sync, while messages (--rate per second), typing notifications and read receipts flow,
// --churn users a minute log in on a new device and log the old one out, and --new-users a minute
// register, join rooms and start syncing (the issue's "second round"), for --minutes (default 10).
// Every --interval seconds it prints the server's RSS and V8 heap (bench/memory-reporter.mjs, after a full
// GC), and the traffic; then the same after --idle seconds of quiet. RSS should level off, not climb.
// Load: undici request() over one keep-alive connection per user, never a fetch loop.
// Usage: npm run bench:soak [-- --minutes 10 --users 1000 --rooms 100 --backend sqlite|postgres]
// WEFT_BENCH_NODE_ARGS passes flags to the server's node (e.g. "--heapsnapshot-signal=SIGUSR2").
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { Agent, request } from "undici";
import { pool, startBenchServer, type Backend } from "./homeserver.ts";

const { values } = parseArgs({
  options: {
    backend: { type: "string", default: "sqlite" },
    users: { type: "string", default: "1000" },
    rooms: { type: "string", default: "100" },
    joins: { type: "string", default: "5" },
    minutes: { type: "string", default: "10" },
    rate: { type: "string", default: "20" },
    churn: { type: "string", default: "50" },
    "new-users": { type: "string", default: "20" },
    interval: { type: "string", default: "30" },
    idle: { type: "string", default: "60" },
  },
});
const USERS = Number(values.users);
const ROOMS = Number(values.rooms);
const JOINS = Math.min(Number(values.joins), ROOMS);
const MINUTES = Number(values.minutes);
const RATE = Number(values.rate);
const CHURN = Number(values.churn);
const NEW_USERS = Number(values["new-users"]);
const INTERVAL = Number(values.interval);
const IDLE = Number(values.idle);
const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

const agent = new Agent({ connections: USERS + 50, keepAliveTimeout: 120_000, bodyTimeout: 0, headersTimeout: 0 });

interface User {
  name: string;
  token: string;
  rooms: string[];
  since?: string;
  /** Bumped when the user moves to a new session: the old sync loop stops. */
  session: number;
}

let base = "";
const counts = { requests: 0, syncs: 0, sent: 0, errors: 0, delivered: 0, quickSyncs: 0 };
/** The errors by "METHOD route-kind → status errcode", printed at the end (an error count is never left unexplained). */
const errorKinds = new Map<string, number>();
const routeKind = (p: string) => p.replace(/\?.*$/, "").replace(/\/(![^/]+|%21[^/]+|%40[^/]+|@[^/]+|\$[^/]+|%24[^/]+)/g, "/{id}").replace(/\/(typing|receipt\/m\.read|send\/m\.room\.message)\/.*$/, "/$1/...");

async function call(method: string, p: string, token: string | undefined, body?: unknown): Promise<any> {
  counts.requests++;
  const res = await request(base + p, {
    method: method as "GET",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
    dispatcher: agent,
  });
  const text = await res.body.text();
  if (res.statusCode >= 400) {
    counts.errors++;
    let errcode = "";
    try {
      errcode = String(JSON.parse(text).errcode ?? "");
    } catch {}
    const kind = `${method} ${routeKind(p)} → ${res.statusCode} ${errcode}`;
    errorKinds.set(kind, (errorKinds.get(kind) ?? 0) + 1);
    throw new Error(`${method} ${p}: ${res.statusCode} ${text.slice(0, 200)}`);
  }
  return text ? JSON.parse(text) : {};
}


const pick = <T>(items: T[]): T => items[Math.floor(Math.random() * items.length)]!;
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);

let running = true;
const FILTER = enc(JSON.stringify({ room: { timeline: { limit: 10 } } }));

/** One user's /sync loop: long polls until the run ends or the user moves to another session. */
async function syncLoop(u: User): Promise<void> {
  const session = u.session;
  while (running && u.session === session) {
    try {
      const asked = Date.now();
      const res = await call("GET", `${V3}/sync?timeout=30000&filter=${FILTER}${u.since ? `&since=${u.since}` : ""}`, u.token);
      counts.syncs++;
      // Long polls answered before their timeout (woken by something new), and the timeline events they carried.
      if (u.since && Date.now() - asked < 25_000) counts.quickSyncs++;
      u.since = res.next_batch;
      // Now and then a read receipt for the newest event seen.
      for (const [roomId, room] of Object.entries((res.rooms?.join ?? {}) as Record<string, any>)) {
        counts.delivered += room.timeline?.events?.length ?? 0;
        const last = room.timeline?.events?.at(-1)?.event_id;
        if (last && Math.random() < 0.05) void call("POST", `${V3}/rooms/${enc(roomId)}/receipt/m.read/${enc(last)}`, u.token, {}).catch(() => {});
      }
    } catch {
      if (!running || u.session !== session) return;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

function memory(file: string): { rss: number; heapUsed: number; heapTotal: number; external: number } | undefined {
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), "weft-soak-"));
  const memFile = path.join(dir, "memory.json");
  const srv = await startBenchServer(values.backend as Backend, {
    nodeArgs: ["--expose-gc", "--import", path.resolve("bench/memory-reporter.mjs")],
    env: { WEFT_BENCH_MEMORY_FILE: memFile, WEFT_BENCH_MEMORY_GC: "1" },
  });
  base = srv.base;
  const started = Date.now();
  console.log(`soak: ${values.backend}, ${USERS} users (+${NEW_USERS}/min), ${ROOMS} rooms (${JOINS} each), ${MINUTES} min, ${RATE} msg/s, churn ${CHURN}/min; load ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
  try {
    await new Promise((r) => setTimeout(r, 1500));
    const atStart = memory(memFile);
    const users: User[] = [];
    await pool(Array.from({ length: USERS }, (_, i) => i), 8, async (i) => {
      users[i] = { name: `soak${i}`, token: await srv.register(`soak${i}`), rooms: [], session: 0 };
    });
    const rooms: string[] = [];
    await pool(Array.from({ length: ROOMS }, (_, i) => i), 8, async (i) => {
      rooms[i] = (await call("POST", `${V3}/createRoom`, users[i % USERS]!.token, { preset: "public_chat", name: `Soak room ${i}` })).room_id;
    });
    for (const [i, u] of users.entries()) {
      const mine = new Set<string>(i < ROOMS ? [rooms[i]!] : []);
      while (mine.size < JOINS) mine.add(pick(rooms));
      u.rooms = [...mine];
    }
    await pool(users, 16, async (u, i) => {
      for (const r of u.rooms) if (!(i < ROOMS && r === rooms[i])) await call("POST", `${V3}/join/${enc(r)}`, u.token, {});
    });
    const afterSetup = memory(memFile);
    console.log(`setup ${((Date.now() - started) / 1000).toFixed(0)} s; RSS ${mb(atStart?.rss ?? 0)} MB at start, ${mb(afterSetup?.rss ?? 0)} MB after setup (heap ${mb(afterSetup?.heapUsed ?? 0)} MB)`);

    const loops = users.map((u) => syncLoop(u));
    let txn = 0;
    const sendTimer = setInterval(() => {
      const u = pick(users);
      const room = pick(u.rooms);
      void call("PUT", `${V3}/rooms/${enc(room)}/send/m.room.message/s${++txn}`, u.token, { msgtype: "m.text", body: `message ${txn} at ${Date.now()}` })
        .then(() => counts.sent++)
        .catch(() => {});
      if (txn % 10 === 0) void call("PUT", `${V3}/rooms/${enc(room)}/typing/${enc(`@${u.name}:bench.local`)}`, u.token, { typing: true, timeout: 10_000 }).catch(() => {});
    }, 1000 / RATE);
    let registered = USERS;
    const newUsersTimer = setInterval(() => {
      for (let i = 0; i < NEW_USERS; i++) {
        void (async () => {
          const n = registered++;
          const u: User = { name: `soak${n}`, token: await srv.register(`soak${n}`), rooms: [], session: 0 };
          const mine = new Set<string>();
          while (mine.size < JOINS) mine.add(pick(rooms));
          u.rooms = [...mine];
          for (const r of u.rooms) await call("POST", `${V3}/join/${enc(r)}`, u.token, {});
          users.push(u);
          loops.push(syncLoop(u));
        })().catch(() => {});
      }
    }, 60_000);
    const churnTimer = setInterval(() => {
      for (let i = 0; i < CHURN; i++) {
        const u = pick(users);
        void (async () => {
          const login = await call("POST", `${V3}/login`, undefined, { type: "m.login.password", identifier: { type: "m.id.user", user: u.name }, password: "pw" });
          const old = u.token;
          u.token = login.access_token;
          u.session++;
          u.since = undefined;
          void syncLoop(u);
          await call("POST", `${V3}/logout`, old, {}).catch(() => {});
        })().catch(() => {});
      }
    }, 60_000);

    const rows: { t: number; rss: number }[] = [];
    const report = (label: string) => {
      const m = memory(memFile);
      const t = (Date.now() - started) / 1000;
      if (m) rows.push({ t, rss: m.rss });
      console.log(
        `${label.padEnd(6)} t=${t.toFixed(0).padStart(4)} s  RSS ${mb(m?.rss ?? 0).padStart(4)} MB  heap ${mb(m?.heapUsed ?? 0).padStart(4)}/${mb(m?.heapTotal ?? 0).padStart(4)} MB  external ${mb(m?.external ?? 0).padStart(3)} MB  ` +
          `users ${users.length}  requests ${counts.requests}  syncs ${counts.syncs} (woken ${counts.quickSyncs})  delivered ${counts.delivered}  sent ${counts.sent}  errors ${counts.errors}  cpu ${srv.cpuSeconds().toFixed(0)} s`,
      );
    };
    const end = Date.now() + MINUTES * 60_000;
    while (Date.now() < end) {
      await new Promise((r) => setTimeout(r, Math.min(INTERVAL * 1000, end - Date.now())));
      report("load");
    }
    running = false;
    clearInterval(sendTimer);
    clearInterval(churnTimer);
    clearInterval(newUsersTimer);
    const peak = Math.max(...rows.map((r) => r.rss));
    console.log(`traffic stopped; waiting ${IDLE} s idle (open long polls answer within 30 s)`);
    await new Promise((r) => setTimeout(r, IDLE * 1000));
    report("idle");
    await Promise.race([Promise.all(loops), new Promise((r) => setTimeout(r, 5_000))]);
    const loadRows = rows.slice(0, -1);
    const half = loadRows.slice(Math.floor(loadRows.length / 2));
    const slope = half.length > 1 ? (half[half.length - 1]!.rss - half[0]!.rss) / 1024 / 1024 / ((half[half.length - 1]!.t - half[0]!.t) / 60) : NaN;
    console.log(`summary: RSS after setup ${mb(afterSetup?.rss ?? 0)} MB, peak under load ${mb(peak)} MB, idle ${mb(rows.at(-1)?.rss ?? 0)} MB; ` +
      `second half of the load ${slope.toFixed(1)} MB/min; load ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
    for (const [kind, n] of [...errorKinds].sort((a, b) => b[1] - a[1])) console.log(`errors: ${n} × ${kind}`);
  } finally {
    running = false;
    await srv.stop();
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
