// A thin raw-SQL layer for hot paths (send, sync, federation ingest), where Prisma's ~200 µs a query is
// too slow: better-sqlite3 directly on SQLite (a write connection used only inside transactions and a
// read connection with WAL snapshots), a pg pool on PostgreSQL (src/storage/sql-postgres.ts, loaded only
// there). SQL uses `?` placeholders on both.
// Parameters carrying NUL are refused on both before a statement runs (src/domain/text.ts).
import Database from "better-sqlite3";
import { startCheckpointer } from "./sqlite-checkpointer.js";
import { checkStorableParams } from "../domain/text.js";
import { LruCache } from "../domain/cache/lru.js";
/**
 * A write whose result is not needed: queued on a PostgreSQL transaction (see `queue`), run at once
 * elsewhere (SQLite's statements are synchronous anyway). Errors surface at COMMIT on PostgreSQL.
 */
export async function write(tx, sql, params) {
    if (tx.queue)
        tx.queue(sql, params);
    else
        await tx.run(sql, params);
}
/** Collects `onSettled` callbacks of one transaction and runs them once. */
export class SettleHooks {
    fns = [];
    add(fn) {
        if (this.fns)
            this.fns.push(fn);
        else
            throw new Error("transaction already settled");
    }
    run(committed) {
        const fns = this.fns ?? [];
        this.fns = undefined;
        for (const fn of fns)
            fn(committed);
    }
}
/** Gives `executor` an `onSettled` fed by `hooks` (for executors wrapping another transaction API). */
export function withSettle(executor, hooks) {
    return Object.assign(Object.create(executor), { onSettled: (fn) => hooks.add(fn) });
}
const prismaTxHooks = new WeakMap();
/**
 * Runs a Prisma interactive transaction (`s.db.$transaction(fn)`) so that raw executors built over its
 * `tx` (e2ee.ts `prismaExecutor`) can report when it settles: `settleHooksOf(tx)`.
 */
export async function runWithSettleHooks(transaction, fn) {
    const hooks = new SettleHooks();
    let out;
    try {
        out = await transaction((tx) => {
            prismaTxHooks.set(tx, hooks);
            return fn(tx);
        });
    }
    catch (err) {
        hooks.run(false);
        throw err;
    }
    hooks.run(true);
    return out;
}
/** The settle hooks of a Prisma transaction run by `runWithSettleHooks` (undefined otherwise). */
export function settleHooksOf(tx) {
    return prismaTxHooks.get(tx);
}
const normalize = (p) => (typeof p === "boolean" ? (p ? 1 : 0) : p);
class SqliteExecutor {
    db;
    dialect = "sqlite";
    /** Prepared statements by text; bounded, as texts vary with the length of IN lists. */
    statements = new LruCache("sqlite_statements", 500);
    constructor(db) {
        this.db = db;
    }
    stmt(sql, params) {
        checkStorableParams(params);
        let s = this.statements.get(sql);
        if (!s) {
            s = this.db.prepare(sql);
            this.statements.set(sql, s);
        }
        return s;
    }
    async run(sql, params = []) {
        return this.stmt(sql, params).run(...params.map(normalize)).changes;
    }
    async all(sql, params = []) {
        return this.stmt(sql, params).all(...params.map(normalize));
    }
    async get(sql, params = []) {
        return this.stmt(sql, params).get(...params.map(normalize));
    }
}
/** Serializes async work: one SQLite write transaction at a time on the write connection. */
class Lane {
    tail = Promise.resolve();
    run(fn) {
        const next = this.tail.then(fn, fn);
        this.tail = next.catch(() => { });
        return next;
    }
}
export function openSqliteSql(file, checkpoints = {}) {
    const writer = new Database(file, { timeout: 10_000 });
    writer.pragma("journal_mode = WAL");
    writer.pragma("synchronous = NORMAL");
    writer.pragma("wal_autocheckpoint = 0"); // checkpoints run on a worker thread (sqlite-checkpointer.ts)
    const reader = new Database(file, { timeout: 10_000 });
    reader.pragma("synchronous = NORMAL");
    const w = new SqliteExecutor(writer);
    const r = new SqliteExecutor(reader);
    const lane = new Lane();
    // Prepared once: exec() would compile these texts again for every transaction.
    const begin = writer.prepare("BEGIN IMMEDIATE");
    const commit = writer.prepare("COMMIT");
    const rollback = writer.prepare("ROLLBACK");
    const checkpointer = startCheckpointer(file, { ...checkpoints, holdWrites: (fn) => void lane.run(fn) });
    return {
        dialect: "sqlite",
        run: (sql, p) => lane.run(() => w.run(sql, p)),
        all: (sql, p) => r.all(sql, p),
        get: (sql, p) => r.get(sql, p),
        transaction: (fn) => lane.run(async () => {
            const hooks = new SettleHooks();
            begin.run();
            let out;
            try {
                out = await fn(withSettle(w, hooks));
                commit.run();
            }
            catch (err) {
                if (writer.inTransaction)
                    rollback.run();
                hooks.run(false);
                throw err;
            }
            hooks.run(true);
            return out;
        }),
        async close() {
            await lane.run(async () => { });
            await checkpointer.stop();
            writer.close();
            reader.close();
        },
    };
}
