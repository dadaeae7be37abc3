// Stream positions that commit out of order (PostgreSQL: positions come from a sequence and transactions
// in different rooms commit concurrently). The tracker (src/domain/store/ids.ts) hands readers the
// persisted-up-to position: /sync must not advance past a position whose transaction has not committed,
// or it would skip that event forever. Also the tracker itself over real transactions (commit order,
// rollback, held-back notices), on both backends where the backend allows concurrent transactions; and
// the in-memory indexes of sync (src/domain/sync/stream-cache.ts) on both sides of a restart.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import type { EventIndexer } from "../../src/domain/rooms/pipeline/commit.ts";
import { idAllocator, type StreamIdTracker } from "../../src/domain/store/ids.ts";
import { parseSyncToken } from "../../src/domain/sync/token.ts";
import type { SqlExecutor } from "../../src/storage/sql.ts";
import { parkedNow, untilParked } from "../helpers/parked.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

/** A promise with its resolver. */
function latch<T = void>(): { promise: Promise<T>; open(v: T): void } {
  let open!: (v: T) => void;
  const promise = new Promise<T>((r) => (open = r));
  return { promise, open };
}

describe.each(backends().filter((b) => b === "postgres"))("stream positions committed out of order on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let bob: Session;
  let txn = 0;
  // The room whose next commit is held open inside its transaction, and the latches around it.
  let holdRoom: string | undefined;
  let entered = latch();
  let release = latch();
  const hook: EventIndexer = async (_tx, _s, { room }) => {
    if (room.roomId !== holdRoom) return;
    holdRoom = undefined;
    entered.open();
    await release.promise;
  };

  beforeAll(async () => {
    t = await startTestServer({ backend });
    t.hs.services.extensions.indexers.push(hook);
    alice = await registerUser(t, "alice");
    bob = await registerUser(t, "bob");
  });
  afterAll(async () => {
    await t?.close();
  });

  const send = (who: Session, roomId: string, body: string) =>
    t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/o${++txn}`, { token: who.access_token, body: { msgtype: "m.text", body } });
  async function sync(who: Session, params: Record<string, string | number>) {
    const qs = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)] as [string, string])).toString();
    const res = await t.call("GET", `${V3}/sync?${qs}`, { token: who.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json;
  }
  const bodies = (r: any, roomId: string) => (r.rooms?.join?.[roomId]?.timeline?.events ?? []).filter((e: any) => e.type === "m.room.message").map((e: any) => e.content.body);

  it("a sync between a later position's commit and an earlier one's does not pass the earlier one; both arrive once it commits", async () => {
    const roomA = await createRoom(t, alice, { preset: "public_chat" });
    const roomB = await createRoom(t, alice, { preset: "public_chat" });
    for (const r of [roomA, roomB]) expect((await t.call("POST", `${V3}/join/${enc(r)}`, { token: bob.access_token, body: {} })).status).toBe(200);
    const since = (await sync(bob, { timeout: 0 })).next_batch as string;
    const s = t.hs.services;

    // The send in room A takes its position, then stays inside its transaction.
    entered = latch();
    release = latch();
    holdRoom = roomA;
    const sendA = send(alice, roomA, "first");
    await entered.promise;
    const heldPosition = (await s.rooms.events.streamIds.current()) + 1;
    // The send in room B takes a later position and commits first.
    const sendB = await send(alice, roomB, "second");
    expect(sendB.status, JSON.stringify(sendB.json)).toBe(200);
    const posB = (await s.rooms.events.get(sendB.json.event_id as string))!.streamOrdering;
    expect(posB).toBeGreaterThan(heldPosition - 1);
    expect(await s.rooms.events.streamIds.current()).toBeLessThan(heldPosition);

    // A sync now must stop below the uncommitted position: it does not deliver B yet.
    const between = await sync(bob, { since, timeout: 0 });
    expect(parseSyncToken(between.next_batch as string).events).toBeLessThan(heldPosition);
    expect(bodies(between, roomB)).toEqual([]);
    // A long poll started now is not woken by B alone (its notice waits for A): it parks and stays parked...
    const parked = parkedNow(t);
    const poll = sync(bob, { since: between.next_batch as string, timeout: 10_000 });
    let polled = false;
    void poll.then(() => (polled = true));
    await untilParked(t, parked + 1);
    expect(polled).toBe(false);
    expect(parkedNow(t)).toBe(parked + 1);

    // ...and once A commits, it returns both events, in stream order.
    release.open();
    expect((await sendA).status).toBe(200);
    const after = await poll;
    expect(bodies(after, roomA)).toEqual(["first"]);
    expect(bodies(after, roomB)).toEqual(["second"]);
    expect(parseSyncToken(after.next_batch as string).events).toBeGreaterThanOrEqual(posB);
  });
});

describe.each(backends())("StreamIdTracker on %s", (backend) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ backend });
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Runs a transaction that allocates a position, reports it, and commits (or throws) when told. */
  function heldTransaction(tracker: StreamIdTracker, table: string) {
    const got = latch<number>();
    const finish = latch<"commit" | "rollback">();
    const done = t.hs.services.storage.sql
      .transaction(async (tx: SqlExecutor) => {
        const pos = await tracker.next(tx);
        await tx.run(`INSERT INTO ${table} (stream, position) VALUES (?, ?)`, [`t${pos}`, pos]);
        got.open(pos);
        if ((await finish.promise) === "rollback") throw new Error("rolled back");
      })
      .catch(() => "rolled back");
    return { position: got.promise, commit: () => finish.open("commit"), rollback: () => finish.open("rollback"), done };
  }

  it("current() stays below every position in flight; notices wait for it; rollbacks count as settled", async () => {
    const sql = t.hs.services.storage.sql;
    // stream_high_water is a plain (stream, position) table: a stand-in for any stream's table.
    const tracker = idAllocator(sql, "stream_high_water", "position", "account_data_stream_seq", `SELECT MAX(position) AS m FROM stream_high_water WHERE stream LIKE 't%'`);
    const start = await tracker.current();
    const outside = await sql.get<{ c: number }>(`SELECT COUNT(*) AS c FROM stream_high_water`);
    expect(Number(outside?.c)).toBe(0);
    await expect(tracker.next(sql)).rejects.toThrow(/inside a transaction/);

    if (backend === "sqlite") {
      // One writer: transactions run one after the other, so positions settle in order.
      const a = heldTransaction(tracker, "stream_high_water");
      const pa = await a.position;
      expect(await tracker.current()).toBe(start);
      a.commit();
      await a.done;
      expect(await tracker.current()).toBe(pa);
      return;
    }

    const a = heldTransaction(tracker, "stream_high_water");
    const pa = await a.position;
    const b = heldTransaction(tracker, "stream_high_water");
    const pb = await b.position;
    expect(pb).toBeGreaterThan(pa);
    const heard: number[] = [];
    tracker.whenPersisted(pb, () => heard.push(pb));
    tracker.whenPersisted(pa, () => heard.push(pa));
    expect(await tracker.current()).toBeLessThan(pa);

    b.commit();
    await b.done;
    expect(await tracker.current()).toBeLessThan(pa);
    expect(heard).toEqual([]);

    const c = heldTransaction(tracker, "stream_high_water");
    const pc = await c.position;
    a.rollback();
    await a.done;
    // A is abandoned: everything up to B is settled; C still holds the position below itself.
    expect(await tracker.current()).toBe(pb);
    expect(heard).toEqual([pa, pb]);
    let heardC = false;
    tracker.whenPersisted(pc, () => (heardC = true));
    expect(heardC).toBe(false);
    c.commit();
    await c.done;
    expect(await tracker.current()).toBe(pc);
    expect(heardC).toBe(true);
    const rows = await sql.all<{ position: number }>(`SELECT position FROM stream_high_water WHERE stream LIKE 't%' ORDER BY position`);
    expect(rows.map((r) => Number(r.position))).toEqual([pb, pc]);
  });
});

describe.each(backends())("sync's in-memory indexes across a restart on %s", (backend) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ backend });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("an incremental sync from a token older than the restart reads storage, later ones memory; both complete", async () => {
    const dave = await registerUser(t, "dave");
    const erin = await registerUser(t, "erin");
    const roomId = await createRoom(t, dave, { preset: "public_chat" });
    expect((await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: erin.access_token, body: {} })).status).toBe(200);
    const put = async (body: string) =>
      expect((await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/r${body}`, { token: dave.access_token, body: { msgtype: "m.text", body } })).status).toBe(200);
    const sync = async (since: string) => {
      const res = await t.call("GET", `${V3}/sync?since=${enc(since)}&timeout=0`, { token: erin.access_token });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      return res.json;
    };
    const texts = (r: any) => (r.rooms?.join?.[roomId]?.timeline?.events ?? []).filter((e: any) => e.type === "m.room.message").map((e: any) => e.content.body);
    const before = (await t.call("GET", `${V3}/sync?timeout=0`, { token: erin.access_token })).json.next_batch as string;
    await put("one");
    await put("two");
    await t.stop();
    await t.restart();
    // Sent before the restart, after the token: below the new process's floor, read from storage.
    const a = await sync(before);
    expect(texts(a)).toEqual(["one", "two"]);
    // Unchanged since: nothing (and the room is left out).
    expect(texts(await sync(a.next_batch as string))).toEqual([]);
    await put("three");
    // After the restart: from memory, and only the new one.
    const b = await sync(a.next_batch as string);
    expect(texts(b)).toEqual(["three"]);
    // From the old token again: storage and memory together, in order.
    expect(texts(await sync(before))).toEqual(["one", "two", "three"]);
  });
});
