// Opens the database a config names: SQLite (better-sqlite3, WAL, synchronous=NORMAL) or PostgreSQL,
// applies pending migrations first, and returns one Prisma client typed the same for both providers,
// created on first use (lazy-client.ts), and the raw SQL layer. Only the configured provider's client,
// adapter and driver are loaded (each weighs megabytes).
import { mkdirSync } from "node:fs";
import path from "node:path";
import { migratePostgres, migrateSqlite } from "./migrate.js";
import { openSqliteSql } from "./sql.js";
import { checkStorableParams } from "../domain/text.js";
import { timePrisma, timedSql } from "./timing.js";
import { lazyClient } from "./lazy-client.js";
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
function guarded(client, timer) {
    return client.$extends({
        query: {
            $allModels: {
                $allOperations({ model, operation, args, query }) {
                    checkStorableParams(args);
                    return timer ? timePrisma(timer, model, operation, () => query(args)) : query(args);
                },
            },
        },
    });
}
const maybeTimed = (sql, timer) => (timer ? timedSql(sql, timer) : sql);
export async function openStorage(config, opts = {}) {
    const plans = { queryPlanCacheMaxSize: opts.queryPlanCacheMaxSize ?? 100 };
    const firstUse = (operation) => opts.onPrismaLoad?.(operation);
    if (config.provider === "sqlite") {
        mkdirSync(path.dirname(config.path), { recursive: true });
        migrateSqlite(config.path);
        // Prisma loads on first use (lazy-client.ts): start-up and the hot paths run on raw SQL.
        const { db } = lazyClient(async () => {
            const [{ PrismaClient: SqlitePrismaClient }, { PrismaBetterSqlite3 }] = await Promise.all([import("../generated/sqlite/client.js"), import("@prisma/adapter-better-sqlite3")]);
            const raw = new SqlitePrismaClient({ adapter: new PrismaBetterSqlite3({ url: `file:${config.path}`, timeout: 10_000 }), ...plans });
            await raw.$queryRawUnsafe("PRAGMA synchronous = NORMAL");
            await raw.$queryRawUnsafe("PRAGMA wal_autocheckpoint = 0"); // see src/storage/sqlite-checkpointer.ts
            await raw.$queryRawUnsafe("PRAGMA foreign_keys = ON");
            return guarded(raw, opts.timer);
        }, firstUse);
        const sql = maybeTimed(openSqliteSql(config.path), opts.timer);
        return { db, sql, provider: "sqlite", close: async () => { await sql.close(); await db.$disconnect(); } };
    }
    await migratePostgres(config.url);
    const { openPostgresSql } = await import("./sql-postgres.js");
    const { db } = lazyClient(async () => {
        const [{ PrismaClient: PgClient }, { PrismaPg }] = await Promise.all([import("../generated/postgres/client.js"), import("@prisma/adapter-pg")]);
        const pg = new PgClient({ adapter: new PrismaPg({ connectionString: config.url, max: 10 }), ...plans });
        await pg.$connect();
        return guarded(pg, opts.timer);
    }, firstUse);
    const sql = maybeTimed(openPostgresSql(config.url), opts.timer);
    return { db, sql, provider: "postgres", close: async () => { await sql.close(); await db.$disconnect(); } };
}
