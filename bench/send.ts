// bench/send: how fast one user sends messages into one room. The homeserver runs in its own process
// (`weft start`, as operators run it); autocannon sends 2,000 PUT /send requests with unique txnIds, first
// over one connection (sequential), then over 10 (concurrent), on SQLite and on PostgreSQL.
// Prints messages/s and p50/p99 latency. Usage: npm run bench:send [-- --backend sqlite|postgres] [--count N]
// --tool wrk [--seconds S] uses wrk (lighter client; needs `apt-get install wrk`) for S seconds per run.
// WEFT_BENCH_NODE_ARGS passes flags to the server's node (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
// --members N fills the room with N local members first (every one evaluated by the push rules).
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { json, startBenchServer, type Backend } from "./homeserver.ts";
import { wrkSend } from "./wrk-send.ts";

const { values } = parseArgs({
  options: {
    backend: { type: "string" },
    count: { type: "string", default: "2000" },
    warmup: { type: "string", default: "500" },
    tool: { type: "string", default: "autocannon" },
    seconds: { type: "string", default: "4" },
    members: { type: "string", default: "1" },
  },
});
const COUNT = Number(values.count);
const WARMUP = Number(values.warmup);
const MEMBERS = Math.max(1, Number(values.members));



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

/** The same runs with wrk (bench/wrk-send.ts): for `seconds`, not a count. */
async function sendWrk(base: string, token: string, roomId: string, connections: number, label: string): Promise<Run> {
  return { label, ...(await wrkSend({ base, token, roomId, connections, seconds: Number(values.seconds) })) };
}

async function bench(backend: Backend): Promise<Run[]> {
  const srv = await startBenchServer(backend);
  try {
    const token = await srv.register("bencher");
    const room = await json(`${srv.base}/_matrix/client/v3/createRoom`, { method: "POST", body: JSON.stringify({ name: "bench", preset: "public_chat" }), token });
    // The other members join, ten at a time.
    for (let i = 1; i < MEMBERS; i += 10) {
      await Promise.all(
        Array.from({ length: Math.min(10, MEMBERS - i) }, async (_, j) => {
          const member = await srv.register(`member${i + j}`);
          await json(`${srv.base}/_matrix/client/v3/join/${encodeURIComponent(room.room_id)}`, { method: "POST", body: "{}", token: member });
        }),
      );
    }
    await send(srv.base, token, room.room_id, WARMUP, 4, "warm-up");
    if (values.tool === "wrk") {
      const seq = await sendWrk(srv.base, token, room.room_id, 1, `${backend} sequential (1 connection)`);
      const con = await sendWrk(srv.base, token, room.room_id, 10, `${backend} concurrent (10 connections)`);
      return [seq, con];
    }
    const seq = await send(srv.base, token, room.room_id, COUNT, 1, `${backend} sequential (1 connection)`);
    const con = await send(srv.base, token, room.room_id, COUNT, 10, `${backend} concurrent (10 connections)`);
    return [seq, con];
  } finally {
    await srv.stop();
  }
}

const backends = values.backend ? [values.backend as Backend] : (["sqlite", "postgres"] as const);
const rows: Run[] = [];
for (const b of backends) rows.push(...(await bench(b)));
console.log(
  values.tool === "wrk"
    ? `\nbench/send: ${values.seconds} s per run, one user, one room (wrk; server in its own process)`
    : `\nbench/send: ${COUNT} messages per run, one user, one room (autocannon; server in its own process)`,
  `\nroom members: ${MEMBERS} (local, each evaluated by the push rules)`,
);
console.log("run".padEnd(40), "msg/s".padStart(8), "p50 ms".padStart(8), "p99 ms".padStart(8), "errors".padStart(7));
for (const r of rows) console.log(r.label.padEnd(40), r.rps.toFixed(0).padStart(8), String(r.p50).padStart(8), String(r.p99).padStart(8), String(r.errors).padStart(7));
