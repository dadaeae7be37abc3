// Partial-state join benchmark (issue 15 item 7): a user of one Weft joins a room of 10,000 members on
// another Weft (both in this process, over TLS on loopback, like the federation tests). The resident's
// room is filled fast: join events of a stand-in remote server, built and signed for real and stored
// through the resident's remote pipeline in batches (test/helpers/big-room.ts). Prints the time from the
// start of /join to its answer, to the first message sent (its answer), and to the full state (the
// joiner's /members answering every member). Target: /join → first message < 2 s.
// Usage: npx tsx bench/partial-join.ts [members=10000] [sqlite|postgres]
import { startFederatedServer, type FederatedServer } from "../test/helpers/federation.ts";
import { startFakeOrigin } from "../test/helpers/fake-origin.ts";
import { fillRoomWithMembers } from "../test/helpers/big-room.ts";
import type { Backend } from "../test/helpers/server.ts";

const members = Number(process.argv[2] ?? 10_000);
const backend = (process.argv[3] ?? "sqlite") as Backend;
const enc = encodeURIComponent;
const V3 = "/_matrix/client/v3";

async function register(t: FederatedServer, username: string): Promise<{ user_id: string; access_token: string }> {
  const first = await t.call("POST", `${V3}/register`, { body: { username, password: "pw-bench-1" } });
  const res = await t.call("POST", `${V3}/register`, { body: { username, password: "pw-bench-1", auth: { type: "m.login.dummy", session: first.json.session } } });
  if (res.status !== 200) throw new Error(`register ${username}: ${JSON.stringify(res.json)}`);
  return res.json;
}

/** A request that must answer 200; a connection reset before any answer (an idle keep-alive connection) is retried once. */
async function ok(what: string, call: () => Promise<{ status: number; json: any }>): Promise<any> {
  const r = await call().catch(() => call());
  if (r.status !== 200) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.json).slice(0, 500)}`);
  return r.json;
}

const origin = await startFakeOrigin((req) => (req.path.startsWith("/_matrix/federation/v1/send/") ? { status: 200, json: { pdus: {} } } : undefined));
const [a, b] = await Promise.all([startFederatedServer({ backend }), startFederatedServer({ backend })]);
try {
  const [alice, bob] = await Promise.all([register(a, "alice"), register(b, "bob")]);
  const room = await ok("createRoom", () => a.call("POST", `${V3}/createRoom`, { token: alice.access_token, body: { preset: "public_chat", name: "Big room" } }));
  const roomId = room.room_id as string;
  let t = performance.now();
  await fillRoomWithMembers(a.hs.services, roomId, origin, members, "member", 1000);
  console.log(`filled the resident's room with ${members} members in ${((performance.now() - t) / 1000).toFixed(1)} s (${backend})`);

  t = performance.now();
  await ok("join", () => b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: bob.access_token, body: {} }));
  const joined = performance.now() - t;
  await ok("send", () => b.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/bench1`, { token: bob.access_token, body: { msgtype: "m.text", body: "first" } }));
  const firstMessage = performance.now() - t;
  const list = await ok("members", () => b.call("GET", `${V3}/rooms/${enc(roomId)}/members`, { token: bob.access_token }));
  const fullState = performance.now() - t;
  if (list.chunk.length !== members + 2) throw new Error(`/members answered ${list.chunk.length} members, not ${members + 2}`);
  console.log(`/join answered:            ${joined.toFixed(0)} ms`);
  console.log(`/join → first message:     ${firstMessage.toFixed(0)} ms (target < 2000 ms)`);
  console.log(`/join → full state:        ${fullState.toFixed(0)} ms (/members with all ${list.chunk.length} members)`);
} finally {
  await Promise.all([a.close(), b.close(), origin.close()]);
}
