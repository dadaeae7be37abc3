// Applies prisma/migrations/<provider>/*/migration.sql at start-up, keeping Prisma's own
// `_prisma_migrations` ledger (id, sha256 checksum, names, timestamps) so `prisma migrate deploy` agrees.
// Each migration and its ledger row commit together; PostgreSQL workers serialize on an advisory lock.
import { createHash, randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";
import Database from "better-sqlite3";

export type Provider = "sqlite" | "postgres";

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

const MIGRATIONS_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../prisma/migrations");

export function listMigrations(provider: Provider, root = MIGRATIONS_ROOT): Migration[] {
  const dir = path.join(root, provider);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => existsSync(path.join(dir, name, "migration.sql")))
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

const LEDGER_SQLITE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" TEXT PRIMARY KEY NOT NULL, "checksum" TEXT NOT NULL, "finished_at" DATETIME, "migration_name" TEXT NOT NULL,
  "logs" TEXT, "rolled_back_at" DATETIME, "started_at" DATETIME NOT NULL DEFAULT current_timestamp,
  "applied_steps_count" INTEGER UNSIGNED NOT NULL DEFAULT 0)`;
const LEDGER_PG = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL, "checksum" VARCHAR(64) NOT NULL, "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL, "logs" TEXT, "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(), "applied_steps_count" INTEGER NOT NULL DEFAULT 0)`;

interface LedgerRow {
  migration_name: string;
  checksum: string;
  finished_at: unknown;
  rolled_back_at: unknown;
}

/** Which migrations still need applying; refuses a ledger whose applied migrations were edited or failed. */
function pending(all: Migration[], rows: LedgerRow[]): Migration[] {
  const applied = new Map<string, LedgerRow>();
  for (const row of rows) if (row.rolled_back_at === null) applied.set(row.migration_name, row);
  for (const [name, row] of applied) {
    const m = all.find((x) => x.name === name);
    if (row.finished_at === null) throw new Error(`migration ${name} failed earlier; resolve it before starting`);
    if (m && m.checksum !== row.checksum) throw new Error(`migration ${name} was changed after it was applied`);
  }
  return all.filter((m) => !applied.has(m.name));
}

export function migrateSqlite(file: string, migrations = listMigrations("sqlite")): string[] {
  const db = new Database(file, { timeout: 10_000 });
  try {
    db.pragma("journal_mode = WAL");
    db.exec(LEDGER_SQLITE);
    const done: string[] = [];
    const run = db.transaction(() => {
      const rows = db.prepare(`SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"`).all() as LedgerRow[];
      for (const m of pending(migrations, rows)) {
        const started = Date.now();
        db.exec(m.sql);
        db.prepare(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, started_at, applied_steps_count) VALUES (?, ?, ?, ?, ?, 1)`,
        ).run(randomUUID(), m.checksum, Date.now(), m.name, started);
        done.push(m.name);
      }
    });
    run.immediate();
    return done;
  } finally {
    db.close();
  }
}

export async function migratePostgres(connectionString: string, migrations = listMigrations("postgres")): Promise<string[]> {
  const { pg } = await import("./pg-driver.ts"); // loaded only on PostgreSQL
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock(72656674)"); // "weft" workers start one at a time
    await client.query(LEDGER_PG);
    const { rows } = await client.query<LedgerRow>(`SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"`);
    const done: string[] = [];
    for (const m of pending(migrations, rows)) {
      await client.query("BEGIN");
      try {
        const started = new Date();
        await client.query(m.sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, started_at, applied_steps_count) VALUES ($1, $2, now(), $3, $4, 1)`,
          [randomUUID(), m.checksum, m.name, started],
        );
        await client.query("COMMIT");
        done.push(m.name);
      } catch (err) {
        await client.query("ROLLBACK");
        throw new Error(`migration ${m.name} failed: ${(err as Error).message}`);
      }
    }
    return done;
  } finally {
    await client.query("SELECT pg_advisory_unlock(72656674)").catch(() => {});
    await client.end();
  }
}
