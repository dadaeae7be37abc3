// PostgreSQL's raw-SQL pool (src/storage/sql-postgres.ts) cannot deadlock on transactions that read
// through the pool while they are open (a cache filled on a miss inside a commit — push rules of a new
// user, found under the soak benchmark's load: every connection held by a transaction waiting for one
// more connection, the server hung for good). Here: more concurrent transactions than the pool has
// connections, each reading through the pool between two statements of its own; all of them commit.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makePgDatabase } from "../helpers/server.ts";
import { openPostgresSql } from "../../src/storage/sql-postgres.ts";
import type { Sql } from "../../src/storage/sql.ts";

const pgUrl = process.env.WEFT_TEST_SKIP_PG === "1" ? undefined : true;

describe.runIf(pgUrl)("the PostgreSQL pool under transactions that read through it", () => {
  let db: { url: string; drop(): Promise<void> };
  let sql: Sql;
  const MAX = 4;

  beforeAll(async () => {
    db = await makePgDatabase();
    sql = openPostgresSql(db.url, MAX);
    await sql.run("CREATE TABLE t (id INT PRIMARY KEY, v TEXT)");
  });
  afterAll(async () => {
    await sql?.close();
    await db?.drop();
  });

  it("more transactions than connections, each reading through the pool while open, all commit", async () => {
    const N = MAX * 3;
    // All start at once: unbounded, the first MAX would take every connection and the others queue for
    // one; each holder's read would then wait behind those — for good.
    const inFlight = new Set<number>();
    let most = 0;
    const work = Array.from({ length: N }, (_, i) =>
      sql.transaction(async (tx) => {
        inFlight.add(i);
        most = Math.max(most, inFlight.size);
        await tx.run("INSERT INTO t (id, v) VALUES (?, ?)", [i, `row ${i}`]);
        const outside = await sql.get<{ n: number }>("SELECT COUNT(*)::int AS n FROM t");
        expect(outside!.n).toBeGreaterThanOrEqual(0);
        inFlight.delete(i);
      }),
    );
    const deadline = new Promise<"stuck">((r) => setTimeout(() => r("stuck"), 20_000).unref());
    expect(await Promise.race([Promise.all(work).then(() => "done" as const), deadline])).toBe("done");
    expect((await sql.get<{ n: number }>("SELECT COUNT(*)::int AS n FROM t"))!.n).toBe(N);
    // Transactions never held every connection at once: some were always left for reads.
    expect(most).toBeLessThan(MAX);
  });
});
