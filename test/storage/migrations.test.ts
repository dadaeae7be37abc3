// The migration runner on SQLite and PostgreSQL: applies every migration once, keeps Prisma's
// _prisma_migrations ledger, refuses edited migrations, lets concurrent workers start safely, and the
// committed schemas and migrations match prisma/models.prisma.
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { listMigrations, migratePostgres, migrateSqlite } from "../../src/storage/migrate.ts";
import { PG_ADMIN_URL } from "../helpers/server.ts";
// @ts-expect-error plain .mjs helper without types
import { providerSchemas } from "../../scripts/prisma-generate.mjs";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe("schema files", () => {
  it("provider schemas are generated from prisma/models.prisma", () => {
    const expected = providerSchemas() as Record<string, string>;
    for (const provider of ["sqlite", "postgres"]) {
      expect(readFileSync(`prisma/${provider}/schema.prisma`, "utf8"), `run npm run generate (${provider})`).toBe(expected[provider]);
    }
  });

  it("every model change has a migration", () => {
    expect(readFileSync("prisma/migrations/models.snapshot.prisma", "utf8"), "run npm run migrations:new -- NAME").toBe(
      readFileSync("prisma/models.prisma", "utf8"),
    );
    expect(listMigrations("sqlite").map((m) => m.name)).toEqual(listMigrations("postgres").map((m) => m.name));
  });
});

describe("SQLite migrations", () => {
  it("apply once, keep the ledger, and leave the database in WAL mode", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "weft-mig-"));
    dirs.push(dir);
    const file = path.join(dir, "db.sqlite");
    const all = listMigrations("sqlite");
    expect(migrateSqlite(file)).toEqual(all.map((m) => m.name));
    expect(migrateSqlite(file)).toEqual([]);
    const db = new Database(file);
    const rows = db.prepare(`SELECT migration_name, checksum, finished_at, applied_steps_count FROM _prisma_migrations ORDER BY migration_name`).all() as {
      migration_name: string;
      checksum: string;
      finished_at: number;
      applied_steps_count: number;
    }[];
    expect(rows.map((r) => r.migration_name)).toEqual(all.map((m) => m.name));
    const sql = readFileSync(`prisma/migrations/sqlite/${all[0]!.name}/migration.sql`, "utf8");
    expect(rows[0]!.checksum).toBe(createHash("sha256").update(sql).digest("hex"));
    expect(rows[0]!.finished_at).not.toBeNull();
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    const tables = (db.prepare(`SELECT name FROM sqlite_master WHERE type='table'`).all() as { name: string }[]).map((r) => r.name);
    expect(tables).toEqual(expect.arrayContaining(["users", "devices", "access_tokens", "uia_sessions", "room_memberships"]));
    db.close();
  });

  it("refuses to start when an applied migration was edited", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "weft-mig-"));
    dirs.push(dir);
    const file = path.join(dir, "db.sqlite");
    migrateSqlite(file);
    const edited = listMigrations("sqlite").map((m, i) => (i === 0 ? { ...m, checksum: "0".repeat(64) } : m));
    expect(() => migrateSqlite(file, edited)).toThrow(/was changed after it was applied/);
  });

  it("rolls back a failing migration with nothing half-applied", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "weft-mig-"));
    dirs.push(dir);
    const file = path.join(dir, "db.sqlite");
    const broken = [{ name: "20990101000000_broken", sql: `CREATE TABLE "half" (id INTEGER);\nTHIS IS NOT SQL;`, checksum: "x" }];
    expect(() => migrateSqlite(file, broken)).toThrow();
    const db = new Database(file);
    expect(db.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE name = 'half'`).get()).toEqual({ n: 0 });
    expect(db.prepare(`SELECT count(*) AS n FROM _prisma_migrations`).get()).toEqual({ n: 0 });
    db.close();
  });
});

describe("PostgreSQL migrations", () => {
  const made: string[] = [];
  async function freshDb(): Promise<string> {
    const name = `weft_mig_${randomBytes(5).toString("hex")}`;
    const c = new pg.Client({ connectionString: PG_ADMIN_URL });
    await c.connect();
    await c.query(`CREATE DATABASE ${name}`);
    await c.end();
    made.push(name);
    const url = new URL(PG_ADMIN_URL);
    url.pathname = `/${name}`;
    return url.toString();
  }
  afterAll(async () => {
    const c = new pg.Client({ connectionString: PG_ADMIN_URL });
    await c.connect();
    for (const n of made) await c.query(`DROP DATABASE IF EXISTS ${n} WITH (FORCE)`);
    await c.end();
  });

  it("two workers starting at once apply each migration exactly once", async () => {
    const url = await freshDb();
    const [a, b] = await Promise.all([migratePostgres(url), migratePostgres(url)]);
    const names = listMigrations("postgres").map((m) => m.name);
    expect([...a, ...b].sort()).toEqual(names.sort());
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const { rows } = await c.query(`SELECT migration_name, finished_at FROM _prisma_migrations`);
    expect(rows).toHaveLength(names.length);
    expect(rows.every((r) => r.finished_at !== null)).toBe(true);
    const tables = await c.query(`SELECT tablename FROM pg_tables WHERE schemaname = 'public'`);
    expect(tables.rows.map((r) => r.tablename)).toEqual(expect.arrayContaining(["users", "access_tokens", "uia_sessions"]));
    await c.end();
    expect(await migratePostgres(url)).toEqual([]);
  });

  it("rolls back a failing migration", async () => {
    const url = await freshDb();
    await expect(migratePostgres(url, [{ name: "20990101000000_broken", sql: `CREATE TABLE half (id int); NOT SQL;`, checksum: "x" }])).rejects.toThrow(/broken failed/);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    expect((await c.query(`SELECT to_regclass('public.half') AS t`)).rows[0].t).toBeNull();
    await c.end();
  });
});
