// Fencing of positions by a lease (src/domain/cluster/leases.ts) in a running server, on both databases:
// a durable consumer started under a lease (ConsumerRunner.add, as cluster/leased-work.ts starts one)
// handles events and moves its stored position while its token holds the lease; once another token holds
// it, each batch rolls back — its effects and its position — until the lease is its own again, when it
// resumes from where it was stored: nothing skipped, nothing handled twice. A pusher's position and an
// application service's transaction queue are fenced the same way.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { capturedLog, type CapturedLog } from "../helpers/captured-log.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { LeaseStore, type Fence } from "../../src/domain/cluster/leases.ts";
import type { DurableConsumer } from "../../src/domain/consumers/durable.ts";
import type { PusherRow } from "../../src/domain/store/pushers.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("positions fenced by a lease on %s", (backend) => {
  let t: TestServer;
  let log: CapturedLog;
  let alice: Session;
  let roomId: string;
  let leases: LeaseStore;
  let stopConsumer: () => Promise<void>;
  const fence: Fence = (tx) => leases.fence(tx, "test_work", "mine");
  const handled: string[] = [];

  const consumer: DurableConsumer = {
    name: "fenced_test",
    async handle(tx, events) {
      for (const e of events) if (e.pdu.type === "m.room.message") await tx.run("INSERT INTO fenced_test_seen (event_id) VALUES (?)", [e.eventId]);
      tx.onSettled?.((committed) => {
        if (committed) for (const e of events) if (e.pdu.type === "m.room.message") handled.push(e.eventId);
      });
    },
  };

  beforeAll(async () => {
    log = capturedLog("warn");
    t = await startTestServer({ backend, log: log.logger });
    alice = await registerUser(t, "alice");
    roomId = await createRoom(t, alice);
    const s = t.hs.services;
    leases = new LeaseStore(s.storage.sql);
    await s.storage.sql.run("CREATE TABLE fenced_test_seen (event_id TEXT PRIMARY KEY)");
    expect(await leases.acquire("test_work", s.topology.instanceName, "mine", 60_000)).toBe(true);
    stopConsumer = await s.consumers.add([consumer], fence);
  });
  afterAll(async () => {
    await stopConsumer?.();
    await t?.close();
  });

  const send = async (body: string) => {
    const r = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/${enc(body)}`, { token: alice.access_token, body: { msgtype: "m.text", body } });
    expect(r.status).toBe(200);
    return r.json.event_id as string;
  };
  const stored = () => t.hs.services.consumerPositions.get("fenced_test", "events");
  const seen = async () => (await t.hs.services.storage.sql.all<{ event_id: string }>("SELECT event_id FROM fenced_test_seen")).map((r) => r.event_id).sort();
  const steal = () => t.hs.services.storage.sql.run("UPDATE worker_leases SET holder_instance = 'other', token = 'theirs' WHERE name = 'test_work'");
  const giveBack = () => t.hs.services.storage.sql.run("UPDATE worker_leases SET holder_instance = 'master', token = 'mine' WHERE name = 'test_work'");

  it("a durable consumer advances only while its token holds the lease, and resumes from its stored position", async () => {
    const first = await send("under the lease");
    await eventually(() => handled.includes(first), "the first event handled");
    const before = await stored();
    expect(before).toBeGreaterThanOrEqual((await t.hs.services.rooms.events.get(first))!.streamOrdering);

    await steal();
    const failures = () => log.lines.filter((l) => l.consumer === "fenced_test" && l.msg === "a durable consumer failed; retrying").length;
    const failed = failures();
    const second = await send("while another holds it");
    const third = await send("still another's");
    await eventually(() => failures() >= failed + 2, "two batches refused by the fence");
    // Nothing of those batches was kept: neither the effects nor the position.
    expect(await stored()).toBe(before);
    expect(await seen()).toEqual([first]);
    expect(handled).toEqual([first]);

    await giveBack();
    await eventually(() => handled.includes(third), "the consumer to resume", 40_000);
    expect(handled).toEqual([first, second, third]);
    expect(await seen()).toEqual([first, second, third].sort());
    expect(await stored()).toBeGreaterThan(before!);
  });

  it("a pusher's position and an application service's queue move only under the lease", async () => {
    const s = t.hs.services;
    const row: PusherRow = {
      userId: alice.user_id, appId: "fence.test", pushkey: "k", kind: "http", appDisplayName: "a", deviceDisplayName: "d", profileTag: null, lang: "en",
      data: { url: "http://127.0.0.1:9/_matrix/push/v1/notify" }, deviceId: alice.device_id, pushkeyTs: 0, lastStreamOrdering: 5, failingSince: null,
    };
    await s.push.pushers.store.set(row, false);
    expect(await s.push.pushers.store.advance(row, 7, fence)).toBe(true);
    await steal();
    await expect(s.push.pushers.store.advance(row, 9, fence)).rejects.toThrow(/lease on test_work was lost/);
    expect((await s.push.pushers.store.get(row.userId, row.appId, row.pushkey))?.lastStreamOrdering).toBe(7);

    // The application-service queue: forming a transaction and completing one are refused too.
    await s.storage.sql.transaction((tx) => s.appservices.queue.enqueue(tx, [{ serviceId: "svc", kind: "event", eventId: "$x" }]));
    await expect(s.appservices.queue.formTxn("svc", 10, fence)).rejects.toThrow(/lease on test_work was lost/);
    expect(await s.appservices.queue.formedTxn("svc")).toBeUndefined();
    await giveBack();
    const txn = (await s.appservices.queue.formTxn("svc", 10, fence))!;
    expect(txn.rows.map((r) => r.eventId)).toEqual(["$x"]);
    await steal();
    await expect(s.appservices.queue.complete("svc", txn.txnId, fence)).rejects.toThrow(/lease on test_work was lost/);
    // Still formed, under its txn id, for whoever holds the lease now.
    expect((await s.appservices.queue.formedTxn("svc"))?.txnId).toBe(txn.txnId);
    await giveBack();
    await s.appservices.queue.complete("svc", txn.txnId, fence);
    expect(await s.appservices.queue.pending("svc")).toBe(0);
  });
});
