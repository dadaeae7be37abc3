// bench/sync's readers, in a worker thread of their own (plain JavaScript: a worker does not inherit tsx): the long-polling /sync users of (a) and the
// GraphQL subscribers of (c). Their JSON parsing then never delays the sender's timing (main thread), and
// each arrival is timestamped by a loop that does nothing else. Times are absolute (timeOrigin + now, in
// ms) so both threads' clocks agree. The worker gets its users through workerData, says "ready" when every
// reader is live, and on "stop" ends its readers and posts back its arrivals: [i or txn, arrival ms].
import { parentPort, workerData } from "node:worker_threads";
import { Agent, request } from "undici";
import WebSocket from "ws";
import { createClient as createWsClient } from "graphql-ws";

// workerData: { mode: "sync" | "roomTimeline" | "syncUpdates", base, room, tokens: string[], since: string[],
// filter } (ReadersInput in bench/sync.ts); the answer to "stop" is ReadersOutput there.

const now = () => performance.timeOrigin + performance.now();
const input = workerData;
const agent = new Agent({ connections: 1000, keepAliveTimeout: 60_000, bodyTimeout: 0, headersTimeout: 0 });
/** [event number i, arrival time (absolute ms)] per delivery. */
const arrivals = [];
let responses = 0;
let emptyResponses = 0;
let running = true;

async function syncLoop(tok, since) {
  const headers = { authorization: `Bearer ${tok}` };
  const V3 = "/_matrix/client/v3";
  while (running) {
    const res = await request(`${input.base}${V3}/sync?since=${since}&timeout=5000&filter=${input.filter}`, { headers, dispatcher: agent });
    const text = await res.body.text();
    const t = now();
    if (res.statusCode !== 200) throw new Error(`sync: ${res.statusCode} ${text}`);
    const r = JSON.parse(text);
    responses++;
    const room = r.rooms?.join?.[input.room];
    if (!room) emptyResponses++;
    since = r.next_batch;
    for (const e of room?.timeline?.events ?? []) if (typeof e.content?.i === "number") arrivals.push([e.content.i, t]);
  }
}

const clients = [];

function subscribe(tok, since) {
  const kind = input.mode;
  const query =
    kind === "roomTimeline"
      ? `subscription ($roomId: String!, $since: String) { roomTimeline(roomId: $roomId, since: $since) { event { content } } }`
      : `subscription ($since: String) { syncUpdates(since: $since) { nextBatch joinedRooms { roomId timeline { content } } } }`;
  const client = createWsClient({ url: input.base.replace(/^http/, "ws") + "/graphql", webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${tok}` }, retryAttempts: 0 });
  clients.push(client);
  return new Promise((resolve) => {
    const off = client.on("connected", () => (off(), resolve()));
    client.subscribe({ query, variables: { roomId: input.room, since } }, {
      next: (r) => {
        const t = now();
        responses++;
        const contents =
          kind === "roomTimeline"
            ? r.data?.roomTimeline ? [r.data.roomTimeline.event.content] : []
            : (r.data?.syncUpdates?.joinedRooms ?? []).filter((x) => x.roomId === input.room).flatMap((x) => x.timeline.map((e) => e.content));
        for (const c of contents) if (typeof c?.i === "number") arrivals.push([c.i, t]);
      },
      error: (e) => console.error("subscription error", e),
      complete: () => {},
    });
  });
}

let loops = [];
if (input.mode === "sync") loops = input.tokens.map((tok, i) => syncLoop(tok, input.since[i]));
else await Promise.all(input.tokens.map((tok, i) => subscribe(tok, input.since[i])));
parentPort.postMessage({ ready: true });

parentPort.on("message", async (m) => {
  if (m.count) parentPort.postMessage({ count: arrivals.length });
  if (!m.stop) return;
  running = false;
  // Each long poll ends with its current request: the main thread sends one last event once told.
  parentPort.postMessage({ stopping: true });
  await Promise.all(loops);
  await Promise.all(clients.map((c) => c.dispose()));
  await agent.close();
  const out = { arrivals, responses, emptyResponses };
  parentPort.postMessage(out);
});
