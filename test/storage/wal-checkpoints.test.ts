// The SQLite WAL stays bounded under a steady stream of writes: the checkpointer thread restarts it once
// it passes its size limit (a PASSIVE checkpoint alone never finds the WAL idle and lets it grow).
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setImmediate as tick } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { openSqliteSql } from "../../src/storage/sql.ts";

const dir = mkdtempSync(path.join(tmpdir(), "weft-wal-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("SQLite WAL checkpoints", () => {
  it("keep the WAL near its restart size while writes never stop", async () => {
    const file = path.join(dir, "wal.db");
    const sql = openSqliteSql(file, { intervalMs: 10, restartFrames: 64 });
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
    } finally {
      await sql.close();
    }
  });
});
