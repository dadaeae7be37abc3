// A thin raw-SQL layer for hot paths (send, sync, federation ingest), where Prisma's ~200 µs a query is
// too slow: better-sqlite3 directly on SQLite (a write connection used only inside transactions and a
// read connection with WAL snapshots), a pg pool on PostgreSQL (src/storage/sql-postgres.ts, loaded only
// there). SQL uses `?` placeholders on both.
// Parameters carrying NUL are refused on both before a statement runs (src/domain/text.ts).
import Database from "better-sqlite3";
import { startCheckpointer, type CheckpointerOptions } from "./sqlite-checkpointer.ts";
import { checkStorableParams } from "../domain/text.ts";
import { LruCache } from "../domain/cache/lru.ts";

export type Dialect = "sqlite" | "postgres";
export type Param = string | number | bigint | boolean | null | Buffer;

export interface SqlExecutor {
  readonly dialect: Dialect;
  run(sql: string, params?: Param[]): Promise<number>;
  all<T = Record<string, unknown>>(sql: string, params?: Param[]): Promise<T[]>;
  get<T = Record<string, unknown>>(sql: string, params?: Param[]): Promise<T | undefined>;
  /**
   * Inside a transaction only: runs `fn` once the transaction settled, after its COMMIT (true) or
   * ROLLBACK (false). Stream position trackers use it (src/domain/store/ids.ts).
   */
  onSettled?(fn: (committed: boolean) => void): void;
  /**
   * Inside a PostgreSQL transaction only: sends a write whose result nobody reads at once, without waiting
   * for its answer (pipelined: the commit's writes and its COMMIT share one round trip). A failure fails
   * the transaction. Use `write()`, which falls back to `run` elsewhere.
   */
  queue?(sql: string, params?: Param[], opts?: QueueOptions): void;
}

/** What a queued write tells the transaction about itself. */
export interface QueueOptions {
  /**
   * A DELETE (without sub-selects): the caller's word that it removes no row this transaction inserts.
   * On PostgreSQL it may then share one statement with the inserts queued beside it, where it would not
   * see their rows (sql-postgres.ts PgTransaction).
   */
  disjointFromInserts?: boolean;
}

/**
 * A write whose result is not needed: queued on a PostgreSQL transaction (see `queue`), run at once
 * elsewhere (SQLite's statements are synchronous anyway). Errors surface at COMMIT on PostgreSQL.
 */
export async function write(tx: SqlExecutor, sql: string, params?: Param[], opts?: QueueOptions): Promise<void> {
  if (tx.queue) tx.queue(sql, params, opts);
  else await tx.run(sql, params);
}

/** Collects `onSettled` callbacks of one transaction and runs them once. */
export class SettleHooks {
  private fns: ((committed: boolean) => void)[] | undefined = [];
  add(fn: (committed: boolean) => void): void {
    if (this.fns) this.fns.push(fn);
    else throw new Error("transaction already settled");
  }
  run(committed: boolean): void {
    const fns = this.fns ?? [];
    this.fns = undefined;
    for (const fn of fns) fn(committed);
  }
}

/**
 * Gives `executor` an `onSettled` fed by `hooks`: an object derived from it (for an executor shared by
 * every transaction, as SQLite's write connection is). Only for executors that keep no per-transaction
 * state in fields: a field assigned through the derived object would land on it alone.
 */
export function withSettle<E extends SqlExecutor>(executor: E, hooks: SettleHooks): E {
  return Object.assign(Object.create(executor) as E, { onSettled: (fn: (committed: boolean) => void) => hooks.add(fn) });
}

const prismaTxHooks = new WeakMap<object, SettleHooks>();

/**
 * Runs a Prisma interactive transaction (`s.db.$transaction(fn)`) so that raw executors built over its
 * `tx` (e2ee.ts `prismaExecutor`) can report when it settles: `settleHooksOf(tx)`.
 */
export async function runWithSettleHooks<Tx extends object, T>(transaction: (fn: (tx: Tx) => Promise<T>) => Promise<T>, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const hooks = new SettleHooks();
  let out: T;
  try {
    out = await transaction((tx) => {
      prismaTxHooks.set(tx, hooks);
      return fn(tx);
    });
  } catch (err) {
    hooks.run(false);
    throw err;
  }
  hooks.run(true);
  return out;
}

/** The settle hooks of a Prisma transaction run by `runWithSettleHooks` (undefined otherwise). */
export function settleHooksOf(tx: object): SettleHooks | undefined {
  return prismaTxHooks.get(tx);
}

export interface Sql extends SqlExecutor {
  /** Runs `fn` in one transaction (SQLite: BEGIN IMMEDIATE, serialized in-process). */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

const normalize = (p: Param) => (typeof p === "boolean" ? (p ? 1 : 0) : p);

class SqliteExecutor implements SqlExecutor {
  readonly dialect = "sqlite" as const;
  /** Prepared statements by text; bounded, as texts vary with the length of IN lists. */
  private readonly statements = new LruCache<string, Database.Statement>("sqlite_statements", 500);
  constructor(private readonly db: Database.Database) {}
  private stmt(sql: string, params: Param[]) {
    checkStorableParams(params);
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }
  async run(sql: string, params: Param[] = []) {
    return this.stmt(sql, params).run(...params.map(normalize)).changes;
  }
  async all<T>(sql: string, params: Param[] = []) {
    return this.stmt(sql, params).all(...params.map(normalize)) as T[];
  }
  async get<T>(sql: string, params: Param[] = []) {
    return this.stmt(sql, params).get(...params.map(normalize)) as T | undefined;
  }
}

/** Serializes async work: one SQLite write transaction at a time on the write connection. */
class Lane {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => {});
    return next;
  }
}

/**
 * What every SQLite connection the server opens is set to (writer, reader, Prisma's: database.ts):
 * - `synchronous = NORMAL`: in WAL mode a commit survives the process being killed, only not a power loss;
 * - SQLite's own page cache of 2 MB. better-sqlite3 builds SQLite with 16 MB, which each connection fills
 *   over time (the main thread's malloc heap grew by 30 MB in a minute of sends): resident memory that buys
 *   nothing measurable here, since the hot pages stay in the operating system's cache and the event, state
 *   and room caches sit above (send throughput and initial sync unchanged at 2 MB, bench/send-vs-peer,
 *   bench/sync).
 */
export const SQLITE_CONNECTION_PRAGMAS = ["synchronous = NORMAL", "cache_size = -2000"] as const;

export function openSqliteSql(file: string, checkpoints: Omit<CheckpointerOptions, "holdWrites" | "checkpointHere"> = {}): Sql {
  const writer = new Database(file, { timeout: 10_000 });
  writer.pragma("journal_mode = WAL");
  writer.pragma("wal_autocheckpoint = 0"); // checkpoints run off the write path (sqlite-checkpointer.ts)
  const reader = new Database(file, { timeout: 10_000 });
  for (const pragma of SQLITE_CONNECTION_PRAGMAS) {
    writer.pragma(pragma);
    reader.pragma(pragma);
  }
  const w = new SqliteExecutor(writer);
  const r = new SqliteExecutor(reader);
  const lane = new Lane();
  // Prepared once: exec() would compile these texts again for every transaction.
  const begin = writer.prepare("BEGIN IMMEDIATE");
  const commit = writer.prepare("COMMIT");
  const rollback = writer.prepare("ROLLBACK");
  const checkpointer = startCheckpointer(file, {
    ...checkpoints,
    holdWrites: (fn) => void lane.run(fn),
    checkpointHere: () => void reader.pragma("wal_checkpoint(PASSIVE)"),
  });
  return {
    dialect: "sqlite",
    run: (sql, p) => lane.run(() => w.run(sql, p)),
    all: (sql, p) => r.all(sql, p),
    get: (sql, p) => r.get(sql, p),
    transaction: (fn) =>
      lane.run(async () => {
        const hooks = new SettleHooks();
        begin.run();
        let out;
        try {
          out = await fn(withSettle(w, hooks));
          commit.run();
        } catch (err) {
          if (writer.inTransaction) rollback.run();
          hooks.run(false);
          throw err;
        }
        hooks.run(true);
        return out;
      }),
    async close() {
      await lane.run(async () => {});
      await checkpointer.stop();
      writer.close();
      reader.close();
    },
  };
}
