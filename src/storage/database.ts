// Opens the database a config names: SQLite (better-sqlite3, WAL, synchronous=NORMAL) or PostgreSQL,
// applies pending migrations first, and returns one Prisma client typed the same for both providers,
// created on first use (lazy-client.ts), and the raw SQL layer. Only the configured provider's client,
// adapter and driver are loaded (each weighs megabytes).
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { PrismaClient as SqliteClient } from "../generated/sqlite/client.ts";
import type { DatabaseConfig } from "../config/config.ts";
import { migratePostgres, migrateSqlite } from "./migrate.ts";
import { openSqliteSql, SQLITE_CONNECTION_PRAGMAS, type Sql } from "./sql.ts";
import { checkStorableParams } from "../domain/text.ts";
import { timePrisma, timedSql, type QueryTimer } from "./timing.ts";
import { lazyClient } from "./lazy-client.ts";

/**
 * STORAGE_NOTE: repositories use `findFirst`, never `findUnique`, and no batch `$transaction([...])` of a
 * varying length.
 * Prisma batches the findUnique calls of one tick into one request, and plans (and caches, keyed by the
 * whole batch's JSON) each batch length separately: under load its plan cache filled with near-identical
 * plans of ~100-250 KB each (issue 11's memory finding).
 */

/**
 * The same guard as the raw SQL layer's: no model operation runs with NUL in a string argument. With a
 * timer, each operation is timed too.
 */
function guarded<C extends { $extends: SqliteClient["$extends"] }>(client: C, timer: QueryTimer | undefined): Db {
  return client.$extends({
    query: {
      $allModels: {
        $allOperations({ model, operation, args, query }) {
          checkStorableParams(args);
          return timer ? timePrisma(timer, model, operation, () => query(args)) : query(args);
        },
      },
    },
  }) as unknown as Db;
}

/** The Prisma client the domain's repositories use. Both providers share one model, so one type serves. */
export type Db = SqliteClient;
/** The client inside `db.$transaction(async (tx) => ...)`. */
export type Tx = Parameters<Parameters<Db["$transaction"]>[0]>[0];

export interface Storage {
  db: Db;
  /** Raw SQL for hot paths, owned by the repository modules that use it. */
  sql: Sql;
  provider: "sqlite" | "postgres";
  close(): Promise<void>;
}

export interface StorageOptions {
  /**
   * Query plans Prisma's query compiler keeps (its default is 1,000). Raw queries are planned per text,
   * and texts vary with IN-list lengths: a plan of a long list weighs ~100 KB, so the default can hold
   * ~100 MB. main.ts sizes it as the cache "prisma_query_plans".
   */
  queryPlanCacheMaxSize?: number;
  /** Times every query (metrics); absent, nothing is timed. */
  timer?: QueryTimer;
  /** Told the first operation that needs the Prisma client, when it loads it (a debug log line). */
  onPrismaLoad?: (operation: string) => void;
}

const maybeTimed = (sql: Sql, timer: QueryTimer | undefined) => (timer ? timedSql(sql, timer) : sql);

export async function openStorage(config: DatabaseConfig, opts: StorageOptions = {}): Promise<Storage> {
  // Interactive transactions (device deletion, registration, admin) wait up to 10 s for a connection and
  // run up to 30 s: Prisma's defaults (2 s, 5 s) turned a busy moment under the soak benchmark's load
  // (every core taken, device-list writes queued on their lock) into 500s on logout. Synapse has no such
  // limits; these stay as a guard against a transaction that never ends.
  const plans = { queryPlanCacheMaxSize: opts.queryPlanCacheMaxSize ?? 100, transactionOptions: { maxWait: 10_000, timeout: 30_000 } };
  const firstUse = (operation: string) => opts.onPrismaLoad?.(operation);
  if (config.provider === "sqlite") {
    mkdirSync(path.dirname(config.path), { recursive: true });
    migrateSqlite(config.path);
    // Prisma loads on first use (lazy-client.ts): start-up and the hot paths run on raw SQL.
    const { db } = lazyClient(async () => {
      const [{ PrismaClient: SqlitePrismaClient }, { PrismaBetterSqlite3 }] = await Promise.all([import("../generated/sqlite/client.ts"), import("@prisma/adapter-better-sqlite3")]);
      const raw = new SqlitePrismaClient({ adapter: new PrismaBetterSqlite3({ url: `file:${config.path}`, timeout: 10_000 }), ...plans });
      for (const pragma of SQLITE_CONNECTION_PRAGMAS) await raw.$queryRawUnsafe(`PRAGMA ${pragma}`);
      await raw.$queryRawUnsafe("PRAGMA wal_autocheckpoint = 0"); // see src/storage/sqlite-checkpointer.ts
      await raw.$queryRawUnsafe("PRAGMA foreign_keys = ON");
      return guarded(raw, opts.timer);
    }, firstUse);
    const sql = maybeTimed(openSqliteSql(config.path), opts.timer);
    return { db, sql, provider: "sqlite", close: async () => { await sql.close(); await db.$disconnect(); } };
  }
  await migratePostgres(config.url);
  const { openPostgresSql } = await import("./sql-postgres.ts");
  const { db } = lazyClient(async () => {
    const [{ PrismaClient: PgClient }, { PrismaPg }] = await Promise.all([import("../generated/postgres/client.ts"), import("@prisma/adapter-pg")]);
    const pg = new PgClient({ adapter: new PrismaPg({ connectionString: config.url, max: 10 }), ...plans });
    await pg.$connect();
    return guarded(pg as unknown as SqliteClient, opts.timer);
  }, firstUse);
  const sql = maybeTimed(openPostgresSql(config.url), opts.timer);
  return { db, sql, provider: "postgres", close: async () => { await sql.close(); await db.$disconnect(); } };
}
