// Leases on background work (src/domain/cluster/leases.ts) on both databases, through the real migrated
// worker_leases table: acquisition is exclusive, renewal keeps it, a lease left unrenewed (a killed
// holder) is taken over once expired and not before, a released one at once; a holder whose renewal
// fails or finds another token is told it lost the lease; and the fence rolls back a position advanced by
// a holder whose lease was taken over — on PostgreSQL a takeover waits for a fenced transaction in flight.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStorage, type Storage } from "../../../src/storage/database.ts";
import { openPostgresSql } from "../../../src/storage/sql-postgres.ts";
import { openSqliteSql, type Sql } from "../../../src/storage/sql.ts";
import { LeaseKeeper, LeaseStore, type Fence } from "../../../src/domain/cluster/leases.ts";
import { backends, makePgDatabase } from "../../helpers/server.ts";
import { eventually } from "../../helpers/federation-peer.ts";

const quiet = { info: () => {}, warn: () => {} };

describe.each(backends())("leases on %s", (backend) => {
  let storage: Storage;
  let store: LeaseStore;
  let cleanup: () => Promise<void>;
  /** A second connection to the same database (another process's). */
  let openOther: () => Sql;

  beforeAll(async () => {
    if (backend === "sqlite") {
      const dir = mkdtempSync(path.join(tmpdir(), "weft-leases-"));
      const file = path.join(dir, "db.sqlite");
      storage = await openStorage({ provider: "sqlite", path: file });
      openOther = () => openSqliteSql(file);
      cleanup = async () => rmSync(dir, { recursive: true, force: true });
    } else {
      const db = await makePgDatabase();
      storage = await openStorage({ provider: "postgres", url: db.url });
      openOther = () => openPostgresSql(db.url);
      cleanup = db.drop;
    }
    store = new LeaseStore(storage.sql);
    await storage.sql.run("CREATE TABLE lease_test_positions (name TEXT PRIMARY KEY, pos INTEGER NOT NULL)");
  });
  afterAll(async () => {
    await storage?.close();
    await cleanup?.();
  });

  it("acquire is exclusive; renew keeps it; release frees it at once", async () => {
    expect(await store.acquire("a", "w1", "t1", 60_000)).toBe(true);
    expect(await store.acquire("a", "w2", "t2", 60_000)).toBe(false);
    // The same instance under a new token (a restarted process) does not take it back either.
    expect(await store.acquire("a", "w1", "t3", 60_000)).toBe(false);
    const before = (await store.get("a"))!;
    expect(before).toMatchObject({ holderInstance: "w1", token: "t1" });
    expect(before.expiresAt - before.renewedAt).toBe(60_000);
    // Times are the database's (epoch ms), not this process's clock: within a minute of it here.
    expect(Math.abs(before.renewedAt - Date.now())).toBeLessThan(60_000);
    expect(await store.renew("a", "t1", 120_000)).toBe(true);
    const after = (await store.get("a"))!;
    expect(after.expiresAt - after.renewedAt).toBe(120_000);
    expect(after.renewedAt).toBeGreaterThanOrEqual(before.renewedAt);
    expect(await store.renew("a", "t2", 60_000)).toBe(false);
    await store.release("a", "t2"); // not its token: nothing happens
    expect((await store.get("a"))?.token).toBe("t1");
    await store.release("a", "t1");
    expect(await store.get("a")).toBeUndefined();
    expect(await store.acquire("a", "w2", "t2", 60_000)).toBe(true);
    expect((await store.get("a"))?.holderInstance).toBe("w2");
  });

  it("an unrenewed lease is taken over once expired, not before; the old token can no longer renew", async () => {
    expect(await store.acquire("b", "w1", "t1", 400)).toBe(true);
    expect(await store.acquire("b", "w2", "t2", 60_000)).toBe(false);
    await eventually(() => store.acquire("b", "w2", "t2", 60_000), "the expired lease to be taken over", 10_000);
    const row = (await store.get("b"))!;
    expect(row).toMatchObject({ holderInstance: "w2", token: "t2" });
    expect(await store.renew("b", "t1", 60_000)).toBe(false);
  });

  it("the fence rolls back what a holder whose lease was taken over writes, and lets the holder's through", async () => {
    const advance = (fence: Fence, pos: number) =>
      storage.sql.transaction(async (tx) => {
        await tx.run("INSERT INTO lease_test_positions (name, pos) VALUES ('c', ?) ON CONFLICT (name) DO UPDATE SET pos = excluded.pos", [pos]);
        await fence(tx);
      });
    expect(await store.acquire("c", "w1", "t1", 300)).toBe(true);
    await advance((tx) => store.fence(tx, "c", "t1"), 1);
    await eventually(() => store.acquire("c", "w2", "t2", 60_000), "the takeover", 10_000);
    await expect(advance((tx) => store.fence(tx, "c", "t1"), 2)).rejects.toThrow(/lease on c was lost/);
    expect((await storage.sql.get<{ pos: number }>("SELECT pos FROM lease_test_positions WHERE name = 'c'"))?.pos).toBe(1);
    await advance((tx) => store.fence(tx, "c", "t2"), 3);
    expect((await storage.sql.get<{ pos: number }>("SELECT pos FROM lease_test_positions WHERE name = 'c'"))?.pos).toBe(3);
  });

  it("a keeper starts the work when it takes the lease, the other waits; a killed holder's work moves over after expiry", async () => {
    const events: string[] = [];
    const timing = { leaseMs: 600, renewMs: 150 };
    // The first holder talks to the database over its own connection: closing it is its process dying.
    const otherSql = openOther();
    const a = new LeaseKeeper(new LeaseStore(otherSql), "d", "w1", timing, { acquired: () => void events.push("w1 acquired"), lost: (why) => void events.push(`w1 lost: ${why.startsWith("renewal failed") ? "renewal failed" : why}`) }, quiet);
    const b = new LeaseKeeper(store, "d", "w2", timing, { acquired: () => void events.push("w2 acquired"), lost: () => void events.push("w2 lost") }, quiet);
    await a.start();
    await b.start();
    expect(events).toEqual(["w1 acquired"]);
    expect([a.held, b.held]).toEqual([true, false]);
    // Several renewal intervals later, still w1's: renewals keep it, w2's attempts fail.
    const renewedAt = (await store.get("d"))!.renewedAt;
    await eventually(async () => (await store.get("d"))!.renewedAt > renewedAt, "a renewal", 10_000);
    await eventually(async () => (await store.get("d"))!.renewedAt > renewedAt + 2 * timing.leaseMs, "renewals past the lease time", 10_000);
    expect(events).toEqual(["w1 acquired"]);
    expect((await store.get("d"))?.holderInstance).toBe("w1");
    // w1 dies: no release. Its renewal fails (it is told), and w2 takes over once the lease expired.
    await otherSql.close();
    await eventually(() => b.held, "w2 to take over", 10_000);
    await eventually(() => events.includes("w1 lost: renewal failed"), "w1 told of its loss", 10_000);
    expect(events.filter((e) => e.endsWith("acquired"))).toEqual(["w1 acquired", "w2 acquired"]);
    expect((await store.get("d"))?.holderInstance).toBe("w2");
    await a.stop();
    // A clean stop releases at once: a new candidate takes it on its first try.
    await b.stop();
    expect(events.at(-1)).toBe("w2 lost");
    expect(await store.get("d")).toBeUndefined();
    const c = new LeaseKeeper(store, "d", "w3", timing, { acquired: () => void events.push("w3 acquired"), lost: () => {} }, quiet);
    await c.start();
    expect(events.at(-1)).toBe("w3 acquired");
    await c.stop();
  });

  it("a holder whose renewal finds another token stops its work", async () => {
    const lost: string[] = [];
    const k = new LeaseKeeper(store, "e", "w1", { leaseMs: 60_000, renewMs: 100 }, { acquired: () => {}, lost: (why) => void lost.push(why) }, quiet);
    await k.start();
    expect(k.held).toBe(true);
    // Taken over behind its back (as after an expiry while it was paused).
    await storage.sql.run("UPDATE worker_leases SET holder_instance = 'w2', token = 'other' WHERE name = 'e'");
    await eventually(() => lost.length > 0, "the loss", 10_000);
    expect(lost).toEqual(["another instance holds it"]);
    expect(k.held).toBe(false);
    await k.stop();
    // Its stop releases nothing of the new holder's.
    expect((await store.get("e"))?.token).toBe("other");
  });
});

// PostgreSQL only: there several processes share the database (SQLite has one process, whose
// transactions are serialized in it).
for (const backend of backends().filter((b) => b === "postgres")) {
  describe(`the fence on ${backend}`, () => {
    let storage: Storage;
    let store: LeaseStore;
    let db: { url: string; drop(): Promise<void> };
    const openOther = () => openPostgresSql(db.url);
    beforeAll(async () => {
      db = await makePgDatabase();
      storage = await openStorage({ provider: "postgres", url: db.url });
      store = new LeaseStore(storage.sql);
      await storage.sql.run("CREATE TABLE lease_test_positions (name TEXT PRIMARY KEY, pos INTEGER NOT NULL)");
    });
    afterAll(async () => {
      await storage?.close();
      await db?.drop();
    });

    it("a takeover waits for a fenced transaction in flight (the lease row stays locked until it commits)", async () => {
      expect(await store.acquire("f", "w1", "t1", 200)).toBe(true);
      // Expired now (the database's clock), but w1's transaction is still open and fenced.
      await eventually(async () => Number((await storage.sql.get<{ e: string | number }>("SELECT expires_at - (FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000))::bigint AS e FROM worker_leases WHERE name = 'f'"))!.e) < 0, "expiry", 10_000);
      const order: string[] = [];
      const other = openOther();
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let fenced!: () => void;
      const fenceTaken = new Promise<void>((r) => (fenced = r));
      const held = storage.sql.transaction(async (tx) => {
        await store.fence(tx, "f", "t1");
        fenced();
        await tx.run("INSERT INTO lease_test_positions (name, pos) VALUES ('f', 1)");
        await gate;
        order.push("w1 committed");
      });
      await fenceTaken; // the row is locked by w1's fence before w2 tries (else w2 may simply win the race)
      const takeover = new LeaseStore(other).acquire("f", "w2", "t2", 60_000).then((ok) => order.push(`w2 acquire: ${ok}`));
      // w2's statement waits on the row lock (seen from the server), not on anything of ours.
      await eventually(async () => (await storage.sql.get<{ n: number }>("SELECT COUNT(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO worker_leases%'"))!.n > 0, "the takeover to wait on the lock", 10_000);
      expect(order).toEqual([]);
      release();
      await held;
      await takeover;
      expect(order).toEqual(["w1 committed", "w2 acquire: true"]);
      expect((await store.get("f"))?.token).toBe("t2");
      await other.close();
    });
  });
}
