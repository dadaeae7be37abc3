// PostgreSQL transactions send consecutive queued plain inserts, and deletes queued as disjoint from them,
// as one statement (src/storage/sql-postgres.ts PgTransaction): the rows all land, in the transaction; a
// statement between them keeps its place in the order of effects; a failing insert among them fails the
// whole transaction and leaves nothing behind, whether it was queued through the transaction's executor or
// through the one its function is handed. A transaction that is one such statement goes out alone,
// without BEGIN and COMMIT; one that reads sends BEGIN first.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { makePgDatabase } from "../helpers/server.ts";
import { openPostgresSql } from "../../src/storage/sql-postgres.ts";
import { pg } from "../../src/storage/pg-driver.ts";
import { write, type Sql } from "../../src/storage/sql.ts";

const pgUrl = process.env.WEFT_TEST_SKIP_PG === "1" ? undefined : true;

describe.runIf(pgUrl)("PostgreSQL transactions coalescing queued inserts", () => {
  let db: { url: string; drop(): Promise<void> };
  let sql: Sql;
  const count = async (table: string) => (await sql.get<{ n: number }>(`SELECT COUNT(*)::int AS n FROM ${table}`))!.n;

  beforeAll(async () => {
    db = await makePgDatabase();
    sql = openPostgresSql(db.url, 4);
    await sql.run("CREATE TABLE a (id INT PRIMARY KEY, v TEXT)");
    await sql.run("CREATE TABLE b (id INT PRIMARY KEY, a_id INT NOT NULL REFERENCES a (id))");
  });
  beforeEach(async () => {
    await sql.run("DELETE FROM b");
    await sql.run("DELETE FROM a");
  });
  afterAll(async () => {
    await sql?.close();
    await db?.drop();
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** The texts of the statements sent on the pool's connections while `fn` runs. */
  async function statementsOf(fn: () => Promise<unknown>): Promise<string[]> {
    const texts: string[] = [];
    const query = pg.Client.prototype.query;
    vi.spyOn(pg.Client.prototype, "query").mockImplementation(function (this: InstanceType<typeof pg.Client>, ...args: unknown[]) {
      const q = args[0] as string | { text: string };
      texts.push(typeof q === "string" ? q : q.text);
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query);
    await fn();
    vi.restoreAllMocks();
    return texts;
  }

  it("queued inserts into several tables commit together, a row referencing one inserted beside it included", async () => {
    await sql.transaction(async (tx) => {
      for (let i = 1; i <= 5; i++) {
        await write(tx, "INSERT INTO a (id, v) VALUES (?, ?)", [i, `it's ${i}?`]);
        await write(tx, "INSERT INTO b (id, a_id) VALUES (?, ?)", [i * 10, i]);
      }
    });
    expect(await count("a")).toBe(5);
    expect(await count("b")).toBe(5);
    // Values with quotes and question marks arrive as sent (parameters, not text).
    expect((await sql.get<{ v: string }>("SELECT v FROM a WHERE id = 3"))!.v).toBe("it's 3?");
  });

  it("a statement queued between inserts keeps its place: a delete sees the rows inserted before it, not those after", async () => {
    await sql.transaction(async (tx) => {
      await write(tx, "INSERT INTO a (id, v) VALUES (?, ?)", [1, "x"]);
      await write(tx, "INSERT INTO a (id, v) VALUES (?, ?)", [2, "x"]);
      await write(tx, "DELETE FROM a WHERE v = ?", ["x"]);
      await write(tx, "INSERT INTO a (id, v) VALUES (?, ?)", [3, "x"]);
      // A read inside the transaction sees every write queued before it.
      expect((await tx.get<{ n: number }>("SELECT COUNT(*)::int AS n FROM a"))!.n).toBe(1);
      await write(tx, "INSERT INTO a (id, v) VALUES (?, ?)", [1, "again"]);
    });
    expect((await sql.all<{ id: number }>("SELECT id FROM a ORDER BY id")).map((r) => r.id)).toEqual([1, 3]);
  });

  it("a failing insert among coalesced ones fails the transaction and leaves no row behind", async () => {
    await sql.run("INSERT INTO a (id, v) VALUES (7, 'there')");
    await expect(
      sql.transaction(async (tx) => {
        await write(tx, "INSERT INTO a (id, v) VALUES (?, ?)", [1, "new"]);
        await write(tx, "INSERT INTO b (id, a_id) VALUES (?, ?)", [10, 1]);
        await write(tx, "INSERT INTO a (id, v) VALUES (?, ?)", [7, "duplicate"]);
      }),
    ).rejects.toMatchObject({ code: "23505", constraint: "a_pkey" });
    expect(await count("a")).toBe(1);
    expect(await count("b")).toBe(0);
  });

  it("inserts held when the function's executor runs a statement still fail the transaction if they fail", async () => {
    await sql.run("INSERT INTO a (id, v) VALUES (7, 'there')");
    await expect(
      sql.transaction(async (tx) => {
        await write(tx, "INSERT INTO a (id, v) VALUES (?, ?)", [7, "duplicate"]);
        await write(tx, "INSERT INTO a (id, v) VALUES (?, ?)", [8, "new"]);
        // This statement sends the held inserts first (through the executor the function was handed).
        await tx.run("UPDATE a SET v = ? WHERE id = ?", ["changed", 7]).catch(() => 0);
      }),
    ).rejects.toMatchObject({ code: "23505" });
    expect((await sql.all<{ id: number; v: string }>("SELECT id, v FROM a ORDER BY id"))).toEqual([{ id: 7, v: "there" }]);
  });

  it("many inserts (more than one statement carries) all commit", async () => {
    await sql.transaction(async (tx) => {
      for (let i = 1; i <= 12_000; i++) await write(tx, "INSERT INTO a (id, v) VALUES (?, ?)", [i, "v"]);
    });
    expect(await count("a")).toBe(12_000);
  });

  it("a delete queued as disjoint from the inserts shares their statement, and a transaction that is that statement goes out without BEGIN or COMMIT", async () => {
    await sql.run("INSERT INTO a (id, v) VALUES (1, 'old'), (2, 'old')");
    const sent = await statementsOf(() =>
      sql.transaction(async (tx) => {
        await write(tx, "INSERT INTO a (id, v) VALUES (?, ?)", [3, "new"]);
        await write(tx, "INSERT INTO b (id, a_id) VALUES (?, ?)", [30, 3]);
        await write(tx, "DELETE FROM a WHERE v = ? AND id IN (?, ?)", ["old", 1, 2], { disjointFromInserts: true });
        await write(tx, "INSERT INTO a (id, v) VALUES (?, ?)", [4, "old"]);
      }),
    );
    expect((await sql.all<{ id: number; v: string }>("SELECT id, v FROM a ORDER BY id"))).toEqual([
      { id: 3, v: "new" },
      { id: 4, v: "old" },
    ]);
    expect(await count("b")).toBe(1);
    // The insert after the delete of its table starts a second statement (see the next test), so this
    // transaction needs BEGIN and COMMIT; the same without that last insert is one statement alone.
    expect(sent.map((t) => t.split(" ")[0])).toEqual(["BEGIN", "WITH", "INSERT", "COMMIT"]);
    expect(sent[1]).toMatch(/^WITH w0 AS \(INSERT INTO a .*\), w1 AS \(INSERT INTO b .*\) DELETE FROM a WHERE/s);

    const alone = await statementsOf(() =>
      sql.transaction(async (tx) => {
        await write(tx, "INSERT INTO a (id, v) VALUES (?, ?)", [5, "new"]);
        await write(tx, "DELETE FROM a WHERE id IN (?)", [4], { disjointFromInserts: true });
      }),
    );
    expect(alone).toHaveLength(1);
    expect(alone[0]).toMatch(/^WITH w0 AS \(INSERT INTO a .*\) DELETE FROM a WHERE/s);
    expect((await sql.all<{ id: number }>("SELECT id FROM a ORDER BY id")).map((r) => r.id)).toEqual([3, 5]);
  });

  it("a key a delete removes can be inserted again behind it (the insert does not share the delete's statement)", async () => {
    await sql.run("INSERT INTO a (id, v) VALUES (1, 'old')");
    await sql.transaction(async (tx) => {
      await write(tx, "DELETE FROM a WHERE id IN (?)", [1], { disjointFromInserts: true });
      await write(tx, "INSERT INTO a (id, v) VALUES (?, ?)", [1, "new"]);
    });
    expect((await sql.all<{ id: number; v: string }>("SELECT id, v FROM a"))).toEqual([{ id: 1, v: "new" }]);
  });

  it("a delete without the caller's word, or with a sub-select, is sent on its own", async () => {
    await sql.run("INSERT INTO a (id, v) VALUES (1, 'old')");
    const sent = await statementsOf(() =>
      sql.transaction(async (tx) => {
        await write(tx, "INSERT INTO a (id, v) VALUES (?, ?)", [2, "x"]);
        await write(tx, "DELETE FROM a WHERE v = ?", ["x"]);
        await write(tx, "INSERT INTO a (id, v) VALUES (?, ?)", [3, "x"]);
        await write(tx, "DELETE FROM a WHERE id IN (SELECT a_id FROM b)", [], { disjointFromInserts: true });
      }),
    );
    expect(sent.map((t) => t.split(" ")[0])).toEqual(["BEGIN", "INSERT", "DELETE", "INSERT", "DELETE", "COMMIT"]);
    // The first delete saw the row inserted before it, as it would have one statement at a time.
    expect((await sql.all<{ id: number }>("SELECT id FROM a ORDER BY id")).map((r) => r.id)).toEqual([1, 3]);
  });

  it("a lone statement that fails leaves nothing behind and no transaction open on its connection", async () => {
    await sql.run("INSERT INTO a (id, v) VALUES (7, 'there')");
    for (let round = 0; round < 6; round++) {
      const sent = await statementsOf(() =>
        expect(
          sql.transaction(async (tx) => {
            await write(tx, "INSERT INTO a (id, v) VALUES (?, ?)", [1, "new"]);
            await write(tx, "INSERT INTO a (id, v) VALUES (?, ?)", [7, "duplicate"]);
          }),
        ).rejects.toMatchObject({ code: "23505" }),
      );
      expect(sent).toHaveLength(1);
    }
    expect(await count("a")).toBe(1);
    // The connection those statements used (the pool hands back the one released last) is outside any
    // transaction: left in an aborted one, this read would fail and nothing would commit.
    await sql.transaction(async (tx) => {
      expect((await tx.get<{ n: number }>("SELECT COUNT(*)::int AS n FROM a"))!.n).toBe(1);
      await write(tx, "INSERT INTO a (id, v) VALUES (?, ?)", [10, "later"]);
    });
    expect(await count("a")).toBe(2);
  });

  it("a read in the transaction goes out behind BEGIN, with the writes held before it", async () => {
    const sent = await statementsOf(() =>
      sql.transaction(async (tx) => {
        await write(tx, "INSERT INTO a (id, v) VALUES (?, ?)", [1, "x"]);
        expect((await tx.get<{ n: number }>("SELECT COUNT(*)::int AS n FROM a"))!.n).toBe(1);
      }),
    );
    expect(sent.map((t) => t.split(" ")[0])).toEqual(["BEGIN", "INSERT", "SELECT", "COMMIT"]);
  });
});
