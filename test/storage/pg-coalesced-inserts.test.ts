// PostgreSQL transactions send consecutive queued plain inserts as one statement (src/storage/sql-postgres.ts
// PgTransaction): the rows all land, in the transaction; a statement between them keeps its place in the
// order of effects; a failing insert among them fails the whole transaction and leaves nothing behind,
// whether it was queued through the transaction's executor or through the one its function is handed.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { makePgDatabase } from "../helpers/server.ts";
import { openPostgresSql } from "../../src/storage/sql-postgres.ts";
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
});
