// bench/sliding-sync: simplified sliding sync (MSC4186) on Weft beside Synapse, in one run on the same
// machine (issue 35's figures). Each server gets a fresh database and one user in N rooms (one message
// each, a second member in every room), then:
// (a) first response: a new connection's first request for an Element-X-like list (window [0,19],
//     timeline_limit 1, its required_state), the median of R runs (each on a new conn_id) and the first,
//     cold, run beside it;
// (b) incremental delivery: a connection long-polls with its pos while the second member sends into one of
//     the rooms, K times in turn: the time from the send's response to the sliding-sync answer carrying
//     the event, p50/p99/max;
// (c) memory per open connection (Weft, whose connections live in memory; Synapse keeps them in its
//     database): the server's RSS before and after C more connections each got their first answer.
// Targets printed beside the figures: (a) ≤ 50 ms and 5× Synapse or better; (b) p99 < 50 ms.
// Usage: npm run bench:sliding-sync [-- --backend sqlite|postgres] [--rooms 1000] [--runs 5] [--polls 30]
//        [--connections 1000] [--no-synapse]
// Synapse runs from WEFT_SYNAPSE_VENV (or ~/.cache/weft-ci/synapse-venv-<version>, as the tests find it).
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { json, pool, startBenchServer, type Backend } from "./homeserver.ts";
import { startSynapse } from "../test/helpers/synapse.ts";

const { values } = parseArgs({
  options: {
    backend: { type: "string", default: "sqlite" },
    rooms: { type: "string", default: "1000" },
    runs: { type: "string", default: "5" },
    polls: { type: "string", default: "30" },
    connections: { type: "string", default: "1000" },
    "no-synapse": { type: "boolean", default: false },
  },
});
const ROOMS = Number(values.rooms);
const RUNS = Number(values.runs);
const POLLS = Number(values.polls);
const CONNECTIONS = Number(values.connections);

const PATH = "/_matrix/client/unstable/org.matrix.simplified_msc3575/sync";
const LIST = {
  ranges: [[0, 19]],
  timeline_limit: 1,
  required_state: [["m.room.avatar", ""], ["m.room.encryption", ""], ["m.room.member", "$LAZY"], ["m.room.member", "$ME"], ["m.room.canonical_alias", ""], ["m.room.name", ""], ["m.room.create", ""], ["m.room.join_rules", ""], ["m.room.power_levels", ""]],
};

interface Target {
  name: string;
  base: string;
  register(name: string): Promise<string>;
  rss?(): number;
  stop(): Promise<void>;
}

const load = () => loadavg()[0]!.toFixed(2);
const ms = (x: number) => `${x.toFixed(1)} ms`;
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

async function populate(t: Target): Promise<{ token: string; other: string; rooms: string[] }> {
  const token = await t.register("owner");
  const other = await t.register("member");
  const whoOther = (await json(`${t.base}/_matrix/client/v3/account/whoami`, { token: other })).user_id as string;
  const rooms: string[] = [];
  const started = Date.now();
  await pool(Array.from({ length: ROOMS }, (_, i) => i), 4, async (i) => {
    const room = await json(`${t.base}/_matrix/client/v3/createRoom`, { method: "POST", token, body: JSON.stringify({ name: `room ${i}`, invite: [whoOther] }) });
    await json(`${t.base}/_matrix/client/v3/join/${encodeURIComponent(room.room_id)}`, { method: "POST", token: other, body: "{}" });
    await json(`${t.base}/_matrix/client/v3/rooms/${encodeURIComponent(room.room_id)}/send/m.room.message/m${i}`, { method: "PUT", token: other, body: JSON.stringify({ msgtype: "m.text", body: `hello ${i}` }) });
    rooms.push(room.room_id);
  });
  console.log(`${t.name}: ${ROOMS} rooms made in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { token, other, rooms };
}

async function slide(t: Target, token: string, body: unknown, query = ""): Promise<any> {
  return json(`${t.base}${PATH}${query}`, { method: "POST", token, body: JSON.stringify(body) });
}

async function measure(t: Target): Promise<{ first: number; cold: number; p50: number; p99: number; max: number; perConnection?: number }> {
  const { token, other, rooms } = await populate(t);
  // (a) first responses.
  const times: number[] = [];
  console.log(`${t.name} (a): load ${load()}`);
  for (let i = 0; i <= RUNS; i++) {
    const started = performance.now();
    const res = await slide(t, token, { conn_id: `first-${i}`, lists: { all: LIST } });
    times.push(performance.now() - started);
    if (res.lists.all.count !== ROOMS || Object.keys(res.rooms).length !== 20) throw new Error(`${t.name}: unexpected first answer: count ${res.lists.all.count}, ${Object.keys(res.rooms).length} rooms`);
  }
  const cold = times.shift()!;
  const first = quantile(times, 0.5);
  // (b) incremental delivery to a long poll.
  console.log(`${t.name} (b): load ${load()}`);
  let pos = (await slide(t, token, { conn_id: "poll", lists: { all: LIST } })).pos as string;
  const delays: number[] = [];
  for (let i = 0; i < POLLS; i++) {
    const room = rooms[(i * 37) % rooms.length]!;
    const polling = (async () => {
      for (;;) {
        const res = await slide(t, token, { conn_id: "poll", lists: { all: LIST } }, `?pos=${encodeURIComponent(pos)}&timeout=10000`);
        pos = res.pos;
        const timeline = (res.rooms?.[room]?.timeline ?? []) as { content?: { body?: string } }[];
        if (timeline.some((e) => e.content?.body === `poll ${i}`)) return performance.now();
      }
    })();
    // Let the poll reach the server before sending (it waits there: nothing new yet).
    await new Promise((r) => setTimeout(r, 30));
    await json(`${t.base}/_matrix/client/v3/rooms/${encodeURIComponent(room)}/send/m.room.message/p${i}`, { method: "PUT", token: other, body: JSON.stringify({ msgtype: "m.text", body: `poll ${i}` }) });
    const sent = performance.now();
    delays.push((await polling) - sent);
  }
  // (c) memory per connection.
  let perConnection: number | undefined;
  if (t.rss) {
    console.log(`${t.name} (c): load ${load()}`);
    (globalThis as { gc?: () => void }).gc?.();
    const before = t.rss();
    for (let i = 0; i < CONNECTIONS; i++) await slide(t, token, { conn_id: `mem-${i}`, lists: { all: LIST } });
    perConnection = (t.rss() - before) / CONNECTIONS;
  }
  return { first, cold, p50: quantile(delays, 0.5), p99: quantile(delays, 0.99), max: Math.max(...delays), perConnection };
}

async function main(): Promise<void> {
  const results = new Map<string, Awaited<ReturnType<typeof measure>>>();
  const weft = await startBenchServer(values.backend as Backend);
  try {
    results.set("weft", await measure({ name: `weft (${values.backend})`, base: weft.base, register: weft.register, rss: weft.rssBytes, stop: weft.stop }));
  } finally {
    await weft.stop();
  }
  if (!values["no-synapse"]) {
    const synapse = await startSynapse();
    try {
      results.set("synapse", await measure({ name: "synapse (sqlite)", base: synapse.clientUrl, register: async (n) => (await synapse.register(n)).access_token, stop: synapse.close }));
    } finally {
      await synapse.close();
    }
  }
  console.log(`\nsliding sync, one user in ${ROOMS} rooms, window of 20 (load ${load()} now)`);
  for (const [name, r] of results) {
    console.log(
      `${name.padEnd(8)} first response median ${ms(r.first)} (cold ${ms(r.cold)}); delivery p50 ${ms(r.p50)} p99 ${ms(r.p99)} max ${ms(r.max)}` +
        (r.perConnection !== undefined ? `; ${(r.perConnection / 1024).toFixed(1)} KiB RSS per connection` : ""),
    );
  }
  const w = results.get("weft")!;
  const s = results.get("synapse");
  console.log(`target (a): first response ≤ 50 ms: ${w.first <= 50 ? "met" : "NOT met"}` + (s ? `; ${(s.first / w.first).toFixed(1)}× Synapse (target 5×): ${s.first / w.first >= 5 ? "met" : "NOT met"}` : ""));
  console.log(`target (b): delivery p99 < 50 ms: ${w.p99 < 50 ? "met" : "NOT met"}`);
}

await main();
