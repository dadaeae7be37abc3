// Every SQLite connection the server opens keeps SQLite's own 2 MB page cache, not the 16 MB that
// better-sqlite3 builds SQLite with: the write connection, the read connection and Prisma's (issue 17,
// resident memory; src/storage/sql.ts SQLITE_CONNECTION_PRAGMAS).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { openStorage } from "../../src/storage/database.ts";

const dir = mkdtempSync(path.join(tmpdir(), "weft-page-cache-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type CacheRow = { cache_size: number | bigint };
const kib = (rows: CacheRow[]) => Number(rows[0]!.cache_size);

describe("SQLite page cache", () => {
  it("is 2 MB on the write, read and Prisma connections", async () => {
    // The driver's own default, which the server must not keep.
    const plain = new Database(":memory:");
    expect(kib(plain.pragma("cache_size") as CacheRow[])).toBe(-16000);
    plain.close();

    const storage = await openStorage({ provider: "sqlite", path: path.join(dir, "homeserver.db") });
    try {
      expect(kib(await storage.sql.all<CacheRow>("PRAGMA cache_size"))).toBe(-2000);
      expect(kib(await storage.sql.transaction((tx) => tx.all<CacheRow>("PRAGMA cache_size")))).toBe(-2000);
      expect(kib(await storage.db.$queryRawUnsafe<CacheRow[]>("PRAGMA cache_size"))).toBe(-2000);
    } finally {
      await storage.close();
    }
  });
});
