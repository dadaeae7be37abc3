// Multi-writer stream positions (src/domain/store/ids.ts joinCluster/observe, Synapse's
// MultiWriterIdGenerator): two writers drawing from one PostgreSQL sequence and a reader. A reader's
// position is the minimum over the writers' own positions, so nothing in flight on one writer is ever
// below it; a writer with nothing in flight does not hold the others back; values a writer reserved
// below a position seen elsewhere are never handed out. PostgreSQL only: on SQLite one process writes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { idAllocator, type StreamIdTracker } from "../../src/domain/store/ids.ts";
import type { SqlExecutor } from "../../src/storage/sql.ts";

function latch<T>() {
  let open!: (v: T) => void;
  const promise = new Promise<T>((r) => (open = r));
  return { promise, open };
}

describe("multi-writer stream positions on postgres", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ backend: "postgres" });
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A transaction that allocates a position on `tracker`, writes it, and commits when told. */
  function held(tracker: StreamIdTracker) {
    const got = latch<number>();
    const finish = latch<void>();
    const done = t.hs.services.storage.sql.transaction(async (tx: SqlExecutor) => {
      const pos = await tracker.next(tx);
      await tx.run(`INSERT INTO stream_high_water (stream, position) VALUES (?, ?)`, [`mw${pos}`, pos]);
      got.open(pos);
      await finish.promise;
    });
    return { position: got.promise, commit: () => finish.open(), done };
  }

  it("the reader's position is the minimum over the writers; an idle writer follows the others; reserved values below are dropped", async () => {
    const sql = t.hs.services.storage.sql;
    const make = () => idAllocator(sql, "stream_high_water", "position", "account_data_stream_seq", `SELECT MAX(position) AS m FROM stream_high_water WHERE stream LIKE 'mw%'`);
    const w1 = make();
    const w2 = make();
    const reader = make();
    // What replication carries: each writer's own position, to the others.
    await w1.joinCluster(["w2"], (pos) => (w2.observe("w1", pos), reader.observe("w1", pos)));
    await w2.joinCluster(["w1"], (pos) => (w1.observe("w2", pos), reader.observe("w2", pos)));
    await reader.joinCluster(["w1", "w2"], () => {});
    const start = await reader.current();

    // w1 reserves a block of the sequence (its first allocation), and keeps it in flight.
    const a = held(w1);
    const pa = await a.position;
    // w2 takes values after w1's block and commits one: the reader must not pass w1's position in flight.
    const b = held(w2);
    const pb = await b.position;
    expect(pb).toBeGreaterThan(pa);
    b.commit();
    await b.done;
    expect(w2.ownPosition()).toBe(pb);
    expect(await reader.current()).toBeLessThan(pa);
    expect(await reader.current()).toBeGreaterThanOrEqual(start);
    expect(await w2.current()).toBeLessThan(pa); // a writer reads the others' positions too
    const heard: number[] = [];
    reader.whenPersisted(pb, () => heard.push(pb));
    expect(heard).toEqual([]);

    // w1 commits: with nothing in flight it counts as up to the highest position seen (pb), not its own pa.
    a.commit();
    await a.done;
    expect(w1.ownPosition()).toBe(pb);
    expect(await reader.current()).toBe(pb);
    expect(heard).toEqual([pb]);

    // w1's next position is above pb although its reserved block had values between pa and pb.
    const c = held(w1);
    const pc = await c.position;
    expect(pc).toBeGreaterThan(pb);
    expect(await reader.current()).toBe(pb);
    c.commit();
    await c.done;
    expect(await reader.current()).toBe(pc);

    // w2, idle, does not hold the reader back after w1 moved on; and positions never go back.
    expect(w2.ownPosition()).toBe(pc);
    w1.observe("w2", pb);
    expect(await w1.current()).toBe(pc);
    const rows = await sql.all<{ position: number }>(`SELECT position FROM stream_high_water WHERE stream LIKE 'mw%' ORDER BY position`);
    expect(rows.map((r) => Number(r.position))).toEqual([pa, pb, pc]);
  });
});
