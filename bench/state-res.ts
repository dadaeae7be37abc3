// bench/state-res: state resolution v2 on a synthetic room. A history of depth 1,000 (200 joins, topic,
// name and profile changes, a power levels change every 25 events, messages) forks into two branches
// that each change the same 128 state keys (profiles, bans, power levels, join rules, topic, name, custom
// state): 256 conflicted events. Events come from an in-memory loader (async, as storage is).
// Prints the wall time per resolution (min / median / mean) and per conflicted event, and the CPU time.
// Usage: npm run bench:state-res [-- --version 11] [--runs 50] [--warmup 20]
import { parseArgs } from "node:util";
import { authTypesForEvent, checkAuth, stateMapKey } from "../src/domain/auth/index.ts";
import { eventIdOf, eventReference, roomIdFromCreateEvent, withContentHash } from "../src/domain/events/hashes.ts";
import type { Pdu } from "../src/domain/events/types.ts";
import { resolveRoomVersion } from "../src/domain/rooms/room-versions.ts";
import { resolveState } from "../src/domain/state/resolve.ts";

const { values } = parseArgs({
  options: {
    version: { type: "string", default: "11" },
    runs: { type: "string", default: "50" },
    warmup: { type: "string", default: "20" },
  },
});
const v = resolveRoomVersion(values.version!);
const RUNS = Number(values.runs);
const WARMUP = Number(values.warmup);
const DEPTH = 1000;
const KEYS_PER_BRANCH = 128;

const events = new Map<string, Pdu>();
const ADMIN = "@admin:bench.example";
const user = (i: number) => `@u${i}:s${i % 7}.bench.example`;
let roomId = "!bench:bench.example";
let clock = 1_700_000_000_000;

/** A branch of the DAG being built: its state and its last event. */
class Branch {
  constructor(
    readonly state: Map<string, string>,
    public last: string | undefined,
    public depth: number,
  ) {}

  fork(): Branch {
    return new Branch(new Map(this.state), this.last, this.depth);
  }

  send(type: string, stateKey: string | undefined, sender: string, content: Record<string, unknown>): string {
    const ref = (id: string) => (v.eventIdFormat === "server-assigned" ? eventReference(events.get(id)!, v) : id);
    const auth = authTypesForEvent(v, type, stateKey, sender, content)
      .map(([t, k]) => this.state.get(stateMapKey(t, k)))
      .filter((id): id is string => id !== undefined);
    const pdu: Pdu = {
      room_id: roomId,
      sender,
      type,
      content,
      origin_server_ts: clock++,
      prev_events: (this.last ? [ref(this.last)] : []) as Pdu["prev_events"],
      auth_events: auth.map(ref) as Pdu["auth_events"],
      depth: ++this.depth,
      hashes: { sha256: "" },
      signatures: {},
    };
    if (stateKey !== undefined) pdu.state_key = stateKey;
    const isCreate = type === "m.room.create";
    if (isCreate && v.roomIdIsCreateEventHash) delete pdu.room_id;
    if (v.eventIdFormat === "server-assigned") pdu.event_id = `$e${events.size}:bench.example`;
    const hashed = withContentHash(pdu);
    const id = eventIdOf(hashed, v);
    if (isCreate && v.roomIdIsCreateEventHash) roomId = roomIdFromCreateEvent(hashed, v);
    // Every event must be allowed where it is sent: the bench resolves a realistic room.
    const authState = new Map<string, Pdu>();
    for (const [key, stateId] of this.state) authState.set(key, events.get(stateId)!);
    checkAuth(hashed, authState, v, { createEventId: this.state.get(stateMapKey("m.room.create", "")) ?? id });
    events.set(id, hashed);
    if (stateKey !== undefined) this.state.set(stateMapKey(type, stateKey), id);
    this.last = id;
    return id;
  }
}

function buildRoom(): { sets: Map<string, string>[]; conflicted: number } {
  const main = new Branch(new Map(), undefined, 0);
  main.send("m.room.create", "", ADMIN, v.createHasCreator ? { creator: ADMIN, room_version: v.id } : { room_version: v.id });
  main.send("m.room.member", ADMIN, ADMIN, { membership: "join" });
  const levels: Record<string, number> = v.privilegedCreators ? {} : { [ADMIN]: 100 };
  const setLevel = (b: Branch, who: string, level: number) => {
    levels[who] = level;
    b.send("m.room.power_levels", "", ADMIN, { users: { ...levels }, state_default: 50, events_default: 0 });
  };
  setLevel(main, user(0), 50);
  main.send("m.room.join_rules", "", ADMIN, { join_rule: "public" });
  let joined = 0;
  for (let i = main.depth; main.depth < DEPTH; i++) {
    if (i % 25 === 0) setLevel(main, user(i % 200), 10 + (i % 40));
    else if (joined < 200 && i % 5 !== 4) main.send("m.room.member", user(joined), user(joined++), { membership: "join" });
    else if (i % 10 === 4) main.send("m.room.topic", "", ADMIN, { topic: `topic ${i}` });
    else if (i % 10 === 9 && joined > 0) main.send("m.room.member", user(i % joined), user(i % joined), { membership: "join", displayname: `name ${i}` });
    else main.send("m.room.message", undefined, user(i % Math.max(1, joined)), { msgtype: "m.text", body: `message ${i}` });
  }

  const branches = [main.fork(), main.fork()];
  branches.forEach((b, side) => {
    const tag = side === 0 ? "a" : "b";
    for (let i = 0; i < 100; i++) b.send("m.room.member", user(i), user(i), { membership: "join", displayname: `${tag} ${i}` });
    for (let i = 100; i < 110; i++) {
      if (side === 0) b.send("m.room.member", user(i), ADMIN, { membership: "ban", reason: "bench" });
      else b.send("m.room.member", user(i), user(i), { membership: "join", displayname: `b ${i}` });
    }
    const pl = { ...levels, [user(150 + side)]: 75 };
    b.send("m.room.power_levels", "", ADMIN, { users: pl, state_default: 50, events_default: 0 });
    b.send("m.room.join_rules", "", ADMIN, { join_rule: side === 0 ? "invite" : v.knock ? "knock" : "public" });
    b.send("m.room.topic", "", ADMIN, { topic: `topic ${tag}` });
    b.send("m.room.name", "", ADMIN, { name: `name ${tag}` });
    for (let k = 0; k < KEYS_PER_BRANCH - 114; k++) b.send("m.bench.state", `k${k}`, ADMIN, { side: tag });
  });
  const [a, b] = branches as [Branch, Branch];
  let conflicted = 0;
  for (const key of new Set([...a.state.keys(), ...b.state.keys()])) if (a.state.get(key) !== b.state.get(key)) conflicted += 2;
  return { sets: [a.state, b.state], conflicted };
}

const { sets, conflicted } = buildRoom();
let loadCalls = 0;
let loaded = 0;
const loadEvents = async (ids: readonly string[]) => {
  loadCalls++;
  const out = new Map<string, Pdu>();
  for (const id of ids) {
    const e = events.get(id);
    if (e) out.set(id, e);
  }
  loaded += out.size;
  return out;
};

const run = async () => resolveState({ version: v, stateSets: sets, loadEvents });
const first = await run();
const callsPerRun = loadCalls;
const loadedPerRun = loaded;
for (let i = 0; i < WARMUP; i++) await run();
const times: number[] = [];
const cpu0 = process.cpuUsage();
for (let i = 0; i < RUNS; i++) {
  const t0 = process.hrtime.bigint();
  await run();
  times.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
const cpu = process.cpuUsage(cpu0);
// CPU time this process spent (all threads, GC included): less sensitive than wall time to a busy machine.
const cpuMs = (cpu.user + cpu.system) / 1000 / RUNS;
times.sort((x, y) => x - y);
const min = times[0]!;
const median = times[Math.floor(times.length / 2)]!;
const mean = times.reduce((s, t) => s + t, 0) / times.length;
const per = (ms: number) => ((ms * 1000) / conflicted).toFixed(1);

console.log(`room version ${v.id} (state resolution ${v.stateResolution}): ${events.size} events, DAG depth ${DEPTH} + 2 branches of ${KEYS_PER_BRANCH} state events`);
console.log(`conflicted events: ${conflicted}; resolved state: ${first.size} entries; per resolution ${callsPerRun} loadEvents calls, ${loadedPerRun} events loaded`);
console.log(`runs: ${RUNS} (after ${WARMUP} warm-up)`);
console.log(`per resolution: min ${min.toFixed(2)} ms, median ${median.toFixed(2)} ms, mean ${mean.toFixed(2)} ms`);
console.log(`per conflicted event: min ${per(min)} µs, median ${per(median)} µs (target ≤ 25 µs)`);
console.log(`CPU time per resolution: ${cpuMs.toFixed(2)} ms (${per(cpuMs)} µs per conflicted event)`);
