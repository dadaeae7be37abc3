// bench/graphql-viewer: the GraphQL room list — the 100-room viewer query (name, avatar and its browser
// URL, member counts, unread counts, the last event of each room: test/helpers/statement-count.ts's
// ROOM_LIST_QUERY) — on a server started as `npm start` runs it, for each database. A user is put in
// --rooms rooms (a second member's message in each); then the query runs --runs times and the bench prints
// the database statements of each run (from the server's own metrics: weft_db_query_duration_seconds'
// counts, raw SQL and Prisma, transactions' own entries left out: all the process ran meanwhile, background
// work included; test/graphql/room-list-statements.test.ts counts the request's own), the first (cold) run apart, and the
// latency p50/p99 of the warm runs, for pages of 10 and of --rooms rooms: the statement count must not
// grow with the page.
// Usage: npm run bench:graphql-viewer [-- --backend sqlite|postgres|both] [--rooms 100] [--runs 20]
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { json, pool, startBenchServer, type Backend } from "./homeserver.ts";
import { ROOM_LIST_QUERY } from "../test/helpers/statement-count.ts";

const { values } = parseArgs({
  options: {
    backend: { type: "string", default: "both" },
    rooms: { type: "string", default: "100" },
    runs: { type: "string", default: "20" },
  },
});
const ROOMS = Number(values.rooms);
const RUNS = Number(values.runs);
const backends: Backend[] = values.backend === "both" ? ["sqlite", "postgres"] : [values.backend as Backend];

/** The server's statement count so far, from its Prometheus text. */
async function statements(base: string): Promise<number> {
  const text = await (await fetch(`${base}/_synapse/metrics`)).text();
  let n = 0;
  for (const line of text.split("\n")) {
    const m = /^weft_db_query_duration_seconds_count\{([^}]*)\} (\S+)$/.exec(line);
    if (m && !/operation="transaction"/.test(m[1]!)) n += Number(m[2]);
  }
  return n;
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

for (const backend of backends) {
  const server = await startBenchServer(backend, { metrics: true });
  try {
    const viewer = await server.register("viewer");
    const writer = await server.register("writer");
    const ids = Array.from({ length: ROOMS }, (_, i) => i);
    await pool(ids, 4, async (i) => {
      const { room_id } = await json(`${server.base}/_matrix/client/v3/createRoom`, { method: "POST", token: viewer, body: JSON.stringify({ name: `Room ${i}`, preset: "public_chat", initial_state: [{ type: "m.room.avatar", state_key: "", content: { url: `mxc://bench.local/a${i}` } }] }) });
      await json(`${server.base}/_matrix/client/v3/join/${encodeURIComponent(room_id)}`, { method: "POST", token: writer, body: "{}" });
      await json(`${server.base}/_matrix/client/v3/rooms/${encodeURIComponent(room_id)}/send/m.room.message/b${i}`, { method: "PUT", token: writer, body: JSON.stringify({ msgtype: "m.text", body: `hello ${i}` }) });
    });
    for (const first of [10, ROOMS]) {
      const counts: number[] = [];
      const ms: number[] = [];
      for (let run = 0; run < RUNS; run++) {
        const before = await statements(server.base);
        const t0 = performance.now();
        const res = await json(`${server.base}/graphql`, { method: "POST", token: viewer, body: JSON.stringify({ query: ROOM_LIST_QUERY, variables: { first } }) });
        ms.push(performance.now() - t0);
        if (res.errors || res.data.viewer.rooms.edges.length !== first) throw new Error(`bad answer: ${JSON.stringify(res).slice(0, 300)}`);
        counts.push((await statements(server.base)) - before);
      }
      const warm = counts.slice(1);
      const warmMs = ms.slice(1);
      console.log(
        `${backend}: ${first} rooms: statements first run ${counts[0]}, then min ${Math.min(...warm)} max ${Math.max(...warm)}; ` +
          `latency first ${ms[0]!.toFixed(1)} ms, warm p50 ${pct(warmMs, 50).toFixed(1)} ms p99 ${pct(warmMs, 99).toFixed(1)} ms (${RUNS - 1} runs; load ${loadavg()[0]!.toFixed(2)})`,
      );
    }
  } finally {
    await server.stop();
  }
}
