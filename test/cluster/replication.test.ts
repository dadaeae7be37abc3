// Two Weft processes of one server (main writes every stream, worker1 reads and answers) on one
// PostgreSQL database, with a real redis-server between them (src/domain/cluster/replication.ts): a
// message sent on main wakes a long poll on worker1 and appears once; a client alternating processes
// between syncs misses nothing and sees nothing twice; a logout on one process rejects the token on the
// other at once; a room's name change on main is in worker1's /state and /sync at once; Redis killed and
// started again during traffic loses nothing. PostgreSQL only: SQLite serves a single process (config
// validation refuses redis.enabled on it: test/unit/cluster/workers-config.test.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCluster, type Cluster, type Instance } from "../helpers/replication-cluster.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { subscribe, wsClient } from "../graphql/client.ts";
import { otk, uploadDeviceKeys, uploadKeys } from "../helpers/e2ee.ts";
import type { Session } from "../helpers/users.ts";
import { capturedLog } from "../helpers/captured-log.ts";


async function register(on: Instance, localpart: string): Promise<Session> {
  const first = await on.call("POST", "/_matrix/client/v3/register", { body: { username: localpart, password: "password" } });
  const res = await on.call("POST", "/_matrix/client/v3/register", { body: { username: localpart, password: "password", auth: { type: "m.login.dummy", session: first.json.session } } });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json as Session;
}

async function login(on: Instance, localpart: string): Promise<Session> {
  const res = await on.call("POST", "/_matrix/client/v3/login", { body: { type: "m.login.password", identifier: { type: "m.id.user", user: localpart }, password: "password" } });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json as Session;
}

const filter = encodeURIComponent(JSON.stringify({ room: { timeline: { limit: 100 } }, presence: { not_types: ["*"] } }));

async function sync(on: Instance, s: Session, since?: string, timeout = 0): Promise<any> {
  const q = `filter=${filter}&timeout=${timeout}${since ? `&since=${encodeURIComponent(since)}` : ""}`;
  const res = await on.call("GET", `/_matrix/client/v3/sync?${q}`, { token: s.access_token });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json;
}

/** The timeline's message bodies of a room in a sync answer. */
function bodies(answer: any, roomId: string): string[] {
  return ((answer.rooms?.join?.[roomId]?.timeline?.events ?? []) as any[]).filter((e) => e.type === "m.room.message").map((e) => e.content.body as string);
}

let txn = 0;
async function send(on: Instance, s: Session, roomId: string, body: string): Promise<string> {
  const res = await on.call("PUT", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/send/m.room.message/t${++txn}`, { token: s.access_token, body: { msgtype: "m.text", body } });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json.event_id as string;
}

/** Long-polls `on` from `since` until `want` bodies were seen in the room (bounded); returns every body seen, in order, and the last token. */
async function syncUntil(on: Instance, s: Session, roomId: string, since: string, want: number, ms = 30_000): Promise<{ seen: string[]; token: string }> {
  const deadline = Date.now() + ms;
  const seen: string[] = [];
  let token = since;
  while (seen.length < want) {
    if (Date.now() > deadline) throw new Error(`only ${seen.length} of ${want} messages seen on ${on.name}: ${seen.join(",")}`);
    const answer = await sync(on, s, token, 5000);
    seen.push(...bodies(answer, roomId));
    token = answer.next_batch;
  }
  return { seen, token };
}

describe("replication between two processes over Redis (PostgreSQL)", () => {
  let cluster: Cluster;
  let main: Instance;
  let worker: Instance;
  let alice: Session;
  let roomId: string;
  const log = capturedLog("info");

  beforeAll(async () => {
    cluster = await startCluster({ log: log.logger });
    [main, worker] = cluster.instances as [Instance, Instance];
    alice = await register(main, "alice");
    const created = await main.call("POST", "/_matrix/client/v3/createRoom", { token: alice.access_token, body: { name: "first" } });
    expect(created.status).toBe(200);
    roomId = created.json.room_id;
  }, 120_000);

  afterAll(async () => {
    await cluster?.close();
  });

  it("is on: each process has a Redis link, and a single process without the options has none", async () => {
    expect(main.hs.services.replication?.connected).toBe(true);
    expect(worker.hs.services.replication?.connected).toBe(true);
    expect(worker.hs.services.instanceName).toBe("worker1");
    const single = await startTestServer({ backend: "postgres" });
    try {
      expect(single.hs.services.replication).toBeUndefined();
      expect(single.hs.services.config.redis.enabled).toBe(false);
    } finally {
      await single.close();
    }
  });

  it("a message sent on main wakes a /sync long poll on worker1 at once, exactly once", async () => {
    const initial = await sync(worker, alice);
    expect(initial.rooms.join[roomId]).toBeDefined();
    const started = Date.now();
    const polling = sync(worker, alice, initial.next_batch, 25_000);
    // The poll is parked on worker1 before the send (so it is the notice that wakes it).
    const deadline = Date.now() + 10_000;
    while (worker.hs.services.rooms.notifier.waiting === 0 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    expect(worker.hs.services.rooms.notifier.waiting).toBeGreaterThan(0);
    await send(main, alice, roomId, "wake-up");
    const answer = await polling;
    const took = Date.now() - started;
    expect(bodies(answer, roomId)).toEqual(["wake-up"]);
    expect(took).toBeLessThan(10_000); // far below the poll's 25 s timeout
    // Nothing more from the same token's successor: seen once.
    const again = await sync(worker, alice, answer.next_batch);
    expect(bodies(again, roomId)).toEqual([]);
  });

  it("a GraphQL roomTimeline subscription on worker1 delivers a message sent on main", async () => {
    const c = wsClient({ baseUrl: worker.baseUrl } as TestServer, { authorization: `Bearer ${alice.access_token}` });
    try {
      const since = (await sync(worker, alice)).next_batch;
      const sub = subscribe(c, `subscription ($roomId: String!, $since: String) { roomTimeline(roomId: $roomId, since: $since) { event { eventId body } } }`, { roomId, since });
      const eventId = await send(main, alice, roomId, "to the subscription");
      await sub.until(1);
      expect(sub.error).toBeUndefined();
      expect(sub.results[0].data.roomTimeline.event).toEqual({ eventId, body: "to the subscription" });
      sub.stop();
    } finally {
      await c.dispose();
    }
  });

  it("a client alternating processes between syncs misses nothing and sees nothing twice", async () => {
    let token = (await sync(main, alice)).next_batch;
    const sent: string[] = [];
    const sending = (async () => {
      for (let i = 0; i < 20; i++) {
        const body = `alt-${i}`;
        await send(main, alice, roomId, body);
        sent.push(body);
      }
    })();
    const seen: string[] = [];
    const trail: string[] = [];
    const deadline = Date.now() + 40_000;
    let turn = 0;
    let done = false;
    void sending.then(() => (done = true));
    while (!done || seen.length < sent.length) {
      if (Date.now() > deadline) throw new Error(`saw ${seen.length} of ${sent.length} sent: ${seen.join(",")}\n${trail.join("\n")}`);
      const on = turn++ % 2 === 0 ? worker : main;
      const answer = await sync(on, alice, token, 2000);
      trail.push(`${on.name} ${token} -> ${answer.next_batch}: ${bodies(answer, roomId).join(",")}`);
      seen.push(...bodies(answer, roomId));
      token = answer.next_batch;
    }
    await sending;
    expect(turn).toBeGreaterThan(2);
    expect(seen).toEqual(sent); // every message once, in order, whichever process answered
  }, 60_000);

  it("logout on one process rejects the token on the other at once", async () => {
    const onWorker = await login(worker, "alice");
    const onMain = await login(main, "alice");
    // Both tokens are in both processes' token caches.
    for (const on of [main, worker]) for (const s of [onWorker, onMain]) expect((await on.call("GET", "/_matrix/client/v3/account/whoami", { token: s.access_token })).status).toBe(200);
    expect((await worker.call("POST", "/_matrix/client/v3/logout", { token: onWorker.access_token, body: {} })).status).toBe(200);
    let res = await main.call("GET", "/_matrix/client/v3/account/whoami", { token: onWorker.access_token });
    expect(res.status).toBe(401);
    expect(res.json.errcode).toBe("M_UNKNOWN_TOKEN");
    expect((await main.call("POST", "/_matrix/client/v3/logout", { token: onMain.access_token, body: {} })).status).toBe(200);
    res = await worker.call("GET", "/_matrix/client/v3/account/whoami", { token: onMain.access_token });
    expect(res.status).toBe(401);
    expect(res.json.errcode).toBe("M_UNKNOWN_TOKEN");
    // The session that stayed is unaffected everywhere.
    for (const on of [main, worker]) expect((await on.call("GET", "/_matrix/client/v3/account/whoami", { token: alice.access_token })).status).toBe(200);
  });

  it("a room's name change on main is in worker1's /state and /sync at once", async () => {
    const path = `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/state/m.room.name`;
    expect((await worker.call("GET", path, { token: alice.access_token })).json.name).toBe("first"); // cached on worker1
    const before = (await sync(worker, alice)).next_batch;
    expect((await main.call("PUT", path, { token: alice.access_token, body: { name: "renamed" } })).status).toBe(200);
    const read = await worker.call("GET", path, { token: alice.access_token });
    expect(read.status).toBe(200);
    expect(read.json.name).toBe("renamed");
    const all = await worker.call("GET", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/state`, { token: alice.access_token });
    expect((all.json as any[]).find((e) => e.type === "m.room.name")?.content.name).toBe("renamed");
    const answer = await sync(worker, alice, before, 10_000);
    const events = [...(answer.rooms.join[roomId].timeline.events as any[]), ...((answer.rooms.join[roomId].state?.events ?? []) as any[])];
    expect(events.filter((e) => e.type === "m.room.name").map((e) => e.content.name)).toEqual(["renamed"]);
  });

  it("other streams written on main reach worker1: account data wakes its long poll, push rules and ignored users are fresh at once", async () => {
    const since = (await sync(worker, alice)).next_batch;
    const polling = sync(worker, alice, since, 25_000);
    const deadline = Date.now() + 10_000;
    while (worker.hs.services.rooms.notifier.waiting === 0 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    const uid = encodeURIComponent(alice.user_id);
    expect((await main.call("PUT", `/_matrix/client/v3/user/${uid}/account_data/org.example.colour`, { token: alice.access_token, body: { colour: "teal" } })).status).toBe(200);
    const answer = await polling;
    expect((answer.account_data?.events as any[]).find((e) => e.type === "org.example.colour")?.content).toEqual({ colour: "teal" });

    // Push rules: worker1 has alice's ruleset cached; a rule added on main is in worker1's answer at once.
    const rulePath = "/_matrix/client/v3/pushrules/global/override/org.example.rule";
    expect((await worker.call("GET", rulePath, { token: alice.access_token })).status).toBe(404);
    expect((await main.call("PUT", rulePath, { token: alice.access_token, body: { actions: ["notify"], conditions: [] } })).status).toBe(200);
    const rule = await worker.call("GET", rulePath, { token: alice.access_token });
    expect(rule.status).toBe(200);
    expect(rule.json.rule_id).toBe("org.example.rule");

    // Sync tokens from worker1 and main agree on the account data stream once both are at rest.
    const a = (await sync(worker, alice)).next_batch.split("_")[1];
    const b = (await sync(main, alice)).next_batch.split("_")[1];
    expect(a).toBe(b);
  });

  it("one-time keys uploaded on main are counted in worker1's /sync at once (its cached key counts dropped)", async () => {
    const gina = await register(main, "gina");
    const initial = await sync(worker, gina);
    expect(initial.device_one_time_keys_count).toEqual({ signed_curve25519: 0 }); // now cached on worker1
    const onMain = main as unknown as TestServer;
    const dev = await uploadDeviceKeys(onMain, gina);
    const up = await uploadKeys(onMain, gina, { one_time_keys: { "signed_curve25519:A": otk(gina, dev, 1), "signed_curve25519:B": otk(gina, dev, 2) } });
    expect(up.status, JSON.stringify(up.json)).toBe(200);
    const after = await sync(worker, gina, initial.next_batch);
    expect(after.device_one_time_keys_count).toEqual({ signed_curve25519: 2 });
  });

  it("Redis killed and started again during traffic: worker1 catches up from PostgreSQL and delivers everything once", async () => {
    const since = (await sync(worker, alice)).next_batch;
    await cluster.redis.kill();
    const sent: string[] = [];
    for (let i = 0; i < 5; i++) {
      sent.push(`outage-${i}`);
      await send(main, alice, roomId, `outage-${i}`);
    }
    // Meanwhile a logout on main: its invalidation is dropped with Redis, and still holds after it.
    const extra = await login(worker, "alice");
    expect((await worker.call("GET", "/_matrix/client/v3/account/whoami", { token: extra.access_token })).status).toBe(200);
    expect((await main.call("POST", "/_matrix/client/v3/logout", { token: extra.access_token, body: {} })).status).toBe(200);
    await cluster.redis.start();
    const { seen, token } = await syncUntil(worker, alice, roomId, since, 5);
    expect(seen).toEqual(sent);
    // Live again after the outage: a new message arrives through Redis, once.
    const polling = syncUntil(worker, alice, roomId, token, 1);
    await send(main, alice, roomId, "after");
    expect((await polling).seen).toEqual(["after"]);
    const deadline = Date.now() + 10_000;
    while (!(worker.hs.services.replication?.connected && main.hs.services.replication?.connected) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect((await worker.call("GET", "/_matrix/client/v3/account/whoami", { token: extra.access_token })).status).toBe(401);
    // One line when the outage began and one when it ended, per process — not one per message dropped.
    for (const name of ["main", "worker1"]) {
      const mine = log.lines.filter((l) => l.instance === name && String(l.msg).startsWith("replication: Redis connection"));
      expect(mine.map((l) => /^replication: Redis connection (\w+);/.exec(String(l.msg))?.[1])).toEqual(["lost", "back"]);
    }
    log.expectClean();
  }, 90_000);
  it("worker1 restarted while main sends: from a token of before, it delivers everything once, and live again after", async () => {
    const since = (await sync(worker, alice)).next_batch;
    const sent: string[] = [];
    await cluster.restart("worker1", async () => {
      for (let i = 0; i < 5; i++) {
        sent.push(`restart-${i}`);
        await send(main, alice, roomId, `restart-${i}`);
      }
    });
    expect(worker.hs.services.replication?.connected).toBe(true);
    const { seen, token } = await syncUntil(worker, alice, roomId, since, 5);
    expect(seen).toEqual(sent);
    const polling = syncUntil(worker, alice, roomId, token, 1);
    await send(main, alice, roomId, "after-restart");
    expect((await polling).seen).toEqual(["after-restart"]);
  }, 90_000);
});

describe("two event writers on one PostgreSQL sequence (stream_writers.events: [master, worker1])", () => {
  let cluster: Cluster;
  let main: Instance;
  let worker: Instance;

  beforeAll(async () => {
    cluster = await startCluster({ config: { stream_writers: { events: ["master", "worker1"] } } });
    [main, worker] = cluster.instances as [Instance, Instance];
  }, 120_000);

  afterAll(async () => {
    await cluster?.close();
  });

  it("rooms written by either process: a client alternating processes sees every message once, in each room's order", async () => {
    const bob = await register(main, "bob");
    const onWorker = await login(worker, "bob");
    // Each room written by one of the two writers (as a write forwarded to its writer would be).
    const roomA = (await main.call("POST", "/_matrix/client/v3/createRoom", { token: bob.access_token, body: {} })).json.room_id as string;
    const roomB = (await worker.call("POST", "/_matrix/client/v3/createRoom", { token: onWorker.access_token, body: {} })).json.room_id as string;
    expect(roomA && roomB).toBeTruthy();
    let token = (await sync(worker, bob)).next_batch;
    const sentA: string[] = [];
    const sentB: string[] = [];
    const sending = Promise.all([
      (async () => {
        for (let i = 0; i < 15; i++) sentA.push(await send(main, bob, roomA, `a-${i}`).then(() => `a-${i}`));
      })(),
      (async () => {
        for (let i = 0; i < 15; i++) sentB.push(await send(worker, onWorker, roomB, `b-${i}`).then(() => `b-${i}`));
      })(),
    ]);
    let done = false;
    void sending.then(() => (done = true));
    const seenA: string[] = [];
    const seenB: string[] = [];
    const deadline = Date.now() + 40_000;
    let turn = 0;
    while (!done || seenA.length < sentA.length || seenB.length < sentB.length) {
      if (Date.now() > deadline) throw new Error(`saw A ${seenA.join(",")} B ${seenB.join(",")}`);
      const on = turn++ % 2 === 0 ? main : worker;
      const answer = await sync(on, on === main ? bob : onWorker, token, 2000);
      seenA.push(...bodies(answer, roomA));
      seenB.push(...bodies(answer, roomB));
      token = answer.next_batch;
    }
    await sending;
    expect(seenA).toEqual(sentA);
    expect(seenB).toEqual(sentB);
    // At rest both processes agree on the events position, and each recorded its own in stream_positions.
    const rest = await Promise.all([sync(main, bob), sync(worker, onWorker)]);
    expect(rest[0].next_batch.split("_")[0]).toBe(rest[1].next_batch.split("_")[0]);
    const rows = await main.hs.services.storage.sql.all<{ instance_name: string }>(`SELECT instance_name FROM stream_positions WHERE stream_name = 'events' ORDER BY instance_name`);
    expect(rows.map((r) => r.instance_name)).toEqual(["master", "worker1"]);
  }, 90_000);
});
