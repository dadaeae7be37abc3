// The SQLite WAL stays bounded under a steady stream of writes: the checkpointer thread restarts it once
// it passes its size limit (a PASSIVE checkpoint alone never finds the WAL idle and lets it grow). A quiet
// database never starts that thread: a few writes are checkpointed on the caller's thread.
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setImmediate as tick } from "node:timers/promises";
import { afterAll, describe, expect, it, vi } from "vitest";
import { openSqliteSql } from "../../src/storage/sql.ts";

const dir = mkdtempSync(path.join(tmpdir(), "weft-wal-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("SQLite WAL checkpoints", () => {
  it("keep the WAL near its restart size while writes never stop", async () => {
    const file = path.join(dir, "wal.db");
    let workers = 0;
    const sql = openSqliteSql(file, { intervalMs: 10, restartFrames: 64, onWorkerStart: () => workers++ });
    try {
      await sql.transaction((tx) => tx.run("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)"));
      const row = "x".repeat(3000); // at least one 4 KB WAL frame per transaction
      const write = async (count: number) => {
        for (let i = 1; i <= count; i++) {
          await sql.transaction((tx) => tx.run("INSERT INTO t (v) VALUES (?)", [row]));
          if (i % 200 === 0) await tick(); // one event-loop turn now and then, as a busy server gives
        }
      };
      // The WAL header's checkpoint sequence number (bytes 12–15) counts the times the file started over.
      const restarts = () => readFileSync(`${file}-wal`).readUInt32BE(12);
      await write(6000);
      const half = statSync(`${file}-wal`).size;
      const restartsAtHalf = restarts();
      await write(6000); // at least 24 MB more of WAL frames
      const end = statSync(`${file}-wal`).size;
      expect(restarts()).toBeGreaterThan(restartsAtHalf + 1);
      const rows = await sql.get<{ n: number }>("SELECT COUNT(*) AS n FROM t");
      expect(rows?.n).toBe(12000);
      // Without restarts the file grows by every frame written; restarted, it reuses its space.
      expect(end - half).toBeLessThan(12 * 1024 * 1024);
      expect(workers).toBe(1);
    } finally {
      await sql.close();
    }
  });

  it("checkpoint a few writes on this thread and start no worker while writes are occasional", async () => {
    const file = path.join(dir, "quiet.db");
    let workers = 0;
    const sql = openSqliteSql(file, { intervalMs: 50, onWorkerStart: () => workers++ }); // a burst spans under 8 intervals
    try {
      await sql.transaction((tx) => tx.run("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)"));
      const row = "y".repeat(3000);
      for (let burst = 1; burst <= 3; burst++) {
        for (let i = 0; i < 5; i++) await sql.transaction((tx) => tx.run("INSERT INTO t (v) VALUES (?)", [row]));
        // The rows reach the database file itself (not only the WAL): a checkpoint ran.
        await vi.waitFor(() => expect(statSync(file).size).toBeGreaterThanOrEqual(burst * 5 * 3000), { timeout: 5000, interval: 10 });
      }
      expect(workers).toBe(0);
      expect((await sql.get<{ n: number }>("SELECT COUNT(*) AS n FROM t"))?.n).toBe(15);
    } finally {
      await sql.close();
    }
  });
});
