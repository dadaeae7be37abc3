// bench/replication: cross-process send→sync delivery with replication over Redis (issue 37). Two Weft
// instances of one server on one PostgreSQL database and a real redis-server (test/helpers/replication-cluster.ts:
// both instances run in this Node process, as in the tests), `main` writing the events. N users joined
// to one room long-poll /sync on worker1 while a sender sends K messages on main, one at a time; for each
// message and each poller, the time from the send's start to the poller's /sync answer carrying it.
// Printed: p50/p99/max over every delivery, and the same single-process (every poller on main) beside it.
// Usage: npx tsx bench/replication.ts [--pollers 20] [--messages 30]
// Needs PostgreSQL (WEFT_TEST_PG_URL, default postgresql://weft:weft@127.0.0.1:5432/weft) and /usr/bin/redis-server.
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { startCluster, type Instance } from "../test/helpers/replication-cluster.ts";

const { values } = parseArgs({ options: { pollers: { type: "string", default: "20" }, messages: { type: "string", default: "30" } } });
const POLLERS = Number(values.pollers);
const MESSAGES = Number(values.messages);

async function register(on: Instance, name: string): Promise<string> {
  const first = await on.call("POST", "/_matrix/client/v3/register", { body: { username: name, password: "password" } });
  const res = await on.call("POST", "/_matrix/client/v3/register", { body: { username: name, password: "password", auth: { type: "m.login.dummy", session: first.json.session } } });
  if (res.status !== 200) throw new Error(`register ${name}: ${JSON.stringify(res.json)}`);
  return res.json.access_token as string;
}

const filter = encodeURIComponent(JSON.stringify({ room: { timeline: { limit: 50 } }, presence: { not_types: ["*"] } }));

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Long-polls on `on` until every message body was seen; records when each arrived. */
async function poll(on: Instance, token: string, roomId: string, arrived: Map<string, number[]>, done: () => boolean): Promise<void> {
  let since = (await on.call("GET", `/_matrix/client/v3/sync?filter=${filter}`, { token })).json.next_batch as string;
  while (!done()) {
    const res = await on.call("GET", `/_matrix/client/v3/sync?filter=${filter}&timeout=10000&since=${encodeURIComponent(since)}`, { token });
    const now = performance.now();
    for (const e of res.json.rooms?.join?.[roomId]?.timeline?.events ?? []) if (e.type === "m.room.message") arrived.get(e.content.body)?.push(now);
    since = res.json.next_batch;
  }
}

async function run(label: string, sendOn: Instance, pollOn: Instance, sender: string, tokens: string[], roomId: string): Promise<void> {
  const sentAt = new Map<string, number>();
  const arrived = new Map<string, number[]>();
  let finished = false;
  const pollers = tokens.map((t) => poll(pollOn, t, roomId, arrived, () => finished));
  // Every poller parked before the first send.
  const deadline = Date.now() + 30_000;
  while (pollOn.hs.services.rooms.notifier.waiting < tokens.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  for (let i = 0; i < MESSAGES; i++) {
    const body = `${label}-${i}`;
    arrived.set(body, []);
    sentAt.set(body, performance.now());
    await sendOn.call("PUT", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/send/m.room.message/${body}`, { token: sender, body: { msgtype: "m.text", body } });
    // The next message once every poller has this one (delivery of one at a time, not of a burst).
    const until = Date.now() + 10_000;
    while (arrived.get(body)!.length < tokens.length && Date.now() < until) await new Promise((r) => setImmediate(r));
    // …and is parked again.
    while (pollOn.hs.services.rooms.notifier.waiting < tokens.length && Date.now() < until) await new Promise((r) => setImmediate(r));
  }
  finished = true;
  await sendOn.call("PUT", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/send/m.room.message/${label}-end`, { token: sender, body: { msgtype: "m.text", body: `${label}-end` } });
  await Promise.all(pollers);
  const lat: number[] = [];
  let missing = 0;
  for (const [body, times] of arrived) {
    if (times.length < tokens.length) missing += tokens.length - times.length;
    for (const t of times) lat.push(t - sentAt.get(body)!);
  }
  lat.sort((a, b) => a - b);
  console.log(
    `${label.padEnd(28)} deliveries ${String(lat.length).padStart(5)}  p50 ${pct(lat, 50).toFixed(1).padStart(6)} ms  p99 ${pct(lat, 99).toFixed(1).padStart(6)} ms  max ${lat[lat.length - 1]!.toFixed(1).padStart(6)} ms${missing ? `  MISSING ${missing}` : ""}`,
  );
}

const cluster = await startCluster();
try {
  const [main, worker] = cluster.instances as [Instance, Instance];
  const sender = await register(main, "sender");
  const roomId = (await main.call("POST", "/_matrix/client/v3/createRoom", { token: sender, body: { preset: "public_chat" } })).json.room_id as string;
  const tokens: string[] = [];
  for (let i = 0; i < POLLERS; i++) {
    const t = await register(main, `poller${i}`);
    await main.call("POST", `/_matrix/client/v3/join/${encodeURIComponent(roomId)}`, { token: t, body: {} });
    tokens.push(t);
  }
  console.log(`replication bench: ${POLLERS} long-pollers, ${MESSAGES} messages sent one at a time on main (PostgreSQL, redis-server ${cluster.redis.port}); load ${loadavg()[0]!.toFixed(2)}`);
  await run("single process (main→main)", main, main, sender, tokens, roomId);
  await run("cross-process (main→worker1)", main, worker, sender, tokens, roomId);
  console.log("time: from the send's start on main to each poller's /sync answer with the message (fetch clients in this process, so the figures include the client side)");
} finally {
  await cluster.close();
}
