// The raw-SQL layer's PostgreSQL side (src/storage/sql.ts says what the layer is): a pg pool, `?`
// placeholders rewritten to `$n`, int8 read as numbers. Imported only when the database is PostgreSQL, so a
// SQLite server never loads pg.
import type * as Pg from "pg";
import { pg } from "./pg-driver.ts";
import { checkStorableParams } from "../domain/text.ts";
import { SettleHooks, type Param, type Sql, type SqlExecutor } from "./sql.ts";
import { toPgPlaceholders } from "./pg-placeholders.ts";
import { LruCache } from "../domain/cache/lru.ts";

const pgTypes = {
  getTypeParser(oid: number, format?: string) {
    if (oid === 20) return (v: string) => Number(v); // int8: our ids and timestamps fit in 2^53
    return pg.types.getTypeParser(oid, format as "text");
  },
};

/**
 * Server-side prepared statements for the writes run again and again (the send path's inserts and
 * deletes, position allocation): PostgreSQL then parses and analyses each once per connection instead of
 * at every call. Reads stay unnamed: a prepared statement may fall back to a generic plan, which a read
 * whose best plan depends on its parameters must not get. A text is named once it has run PREPARE_AFTER
 * times, and at most MAX_NAMED texts are (a name is never reused for another text: pg refuses that); the
 * texts that vary (IN lists of every length) mostly stay unnamed, so no connection holds an unbounded
 * number of statements.
 */
const PREPARE_AFTER = 20;
const MAX_NAMED = 300;
const runsOfText = new LruCache<string, number>("pg_statement_runs", 2000);
const nameOfText = new Map<string, string>();

/** Writes, position allocation, and the inserts a transaction sends as one statement (PgTransaction). */
const PREPARABLE = /^\s*(INSERT|UPDATE|DELETE|SELECT nextval\(|WITH w0 AS \(INSERT)/i;

function statementName(text: string): string | undefined {
  const named = nameOfText.get(text);
  if (named !== undefined || nameOfText.size >= MAX_NAMED) return named;
  if (!PREPARABLE.test(text)) return undefined;
  const runs = (runsOfText.get(text) ?? 0) + 1;
  if (runs < PREPARE_AFTER) {
    runsOfText.set(text, runs);
    return undefined;
  }
  runsOfText.delete(text);
  const name = `weft_${nameOfText.size + 1}`;
  nameOfText.set(text, name);
  return name;
}

class PgExecutor implements SqlExecutor {
  readonly dialect = "postgres" as const;
  constructor(private readonly client: Pg.Pool | Pg.PoolClient) {}
  protected send(sql: string, params: Param[]) {
    const text = toPgPlaceholders(sql);
    return this.client.query({ text, name: params.length > 0 ? statementName(text) : undefined, values: params, types: pgTypes });
  }
  private q(sql: string, params: Param[]) {
    checkStorableParams(params);
    return this.send(sql, params);
  }
  async run(sql: string, params: Param[] = []) {
    return (await this.q(sql, params)).rowCount ?? 0;
  }
  async all<T>(sql: string, params: Param[] = []) {
    return (await this.q(sql, params)).rows as T[];
  }
  async get<T>(sql: string, params: Param[] = []) {
    return (await this.q(sql, params)).rows[0] as T | undefined;
  }
}

/**
 * A queued write that may share one statement with its neighbours: a plain `INSERT INTO t (...) VALUES
 * (...)` (no ON CONFLICT, RETURNING or sub-select). Such inserts neither read the database nor can be
 * affected by one another except by a unique violation, which fails the transaction either way.
 */
const PLAIN_INSERT = /^\s*INSERT INTO [\w"]+\s*\([^()]*\)\s*VALUES\s*\(/i;
const NOT_PLAIN = /\b(ON\s+CONFLICT|RETURNING|SELECT)\b/i;
const isPlainInsert = (sql: string) => PLAIN_INSERT.test(sql) && !NOT_PLAIN.test(sql);

/**
 * Most inserts one statement carries, and most parameters (PostgreSQL allows 65,535). Planning a WITH
 * list grows faster than its length: 4,000 single-row inserts took 476 ms as one statement, 92 ms one by
 * one and 26–31 ms in statements of 16–64 (this machine).
 */
const MAX_COALESCED = 48;
const MAX_COALESCED_PARAMS = 20_000;

/**
 * A transaction's executor that pipelines queued writes: they go out at once (pg's pipeline mode), a
 * later read waits behind them on the connection as any query would, and COMMIT follows the last one.
 * Consecutive plain inserts queued in one turn are sent as one statement (data-modifying WITH clauses:
 * `WITH w0 AS (INSERT ...), w1 AS (INSERT ...) INSERT ...`): a message's event row, DAG edge,
 * transaction id and forward extremity are one statement instead of four. Any other statement, and the
 * end of the turn, sends the inserts held before it first, so the order of effects is kept.
 */
class PgTransaction extends PgExecutor {
  private readonly pending: Promise<unknown>[] = [];
  /** The first failure of a write nobody awaits. */
  failure: unknown;
  /** The connection's socket while it is corked (see `cork`). */
  private corked: { cork(): void; uncork(): void } | undefined;
  /** Plain inserts queued and not sent yet (see the class comment), and their parameter count. */
  private inserts: { sql: string; params: Param[] }[] = [];
  private insertParams = 0;
  constructor(
    private readonly conn: Pg.PoolClient,
    private readonly hooks: SettleHooks,
  ) {
    super(conn);
  }
  /**
   * The transaction reports its own settling: the function is handed this object itself, not one derived
   * from it (sql.ts `withSettle`), through which an assigned field — a failure, the held inserts — would
   * land on the derived object and never be seen here.
   */
  onSettled(fn: (committed: boolean) => void): void {
    this.hooks.add(fn);
  }
  /**
   * Holds the statements sent in this turn of the event loop and writes them to the socket together (one
   * write instead of one per statement: BEGIN, the lookups and nextval of a group commit; its writes and
   * COMMIT), at the end of the turn or at `flush`. A system call per statement costs more than a
   * statement's own work on a busy machine.
   */
  private cork(): void {
    if (this.corked) return;
    const stream = (this.conn as unknown as { connection?: { stream?: { cork?(): void; uncork?(): void } } }).connection?.stream;
    if (!stream?.cork || !stream.uncork) return;
    stream.cork();
    this.corked = stream as { cork(): void; uncork(): void };
    setImmediate(() => this.flush());
  }
  /** Sends the inserts held, then writes what is held on the socket (see `cork`). */
  flush(): void {
    this.sendInserts();
    const stream = this.corked;
    this.corked = undefined;
    stream?.uncork();
  }
  protected override send(sql: string, params: Param[]) {
    this.sendInserts();
    this.cork();
    return super.send(sql, params);
  }
  /** The held inserts as one statement (one alone as itself). */
  private sendInserts(): void {
    const batch = this.inserts;
    if (batch.length === 0) return;
    this.inserts = [];
    this.insertParams = 0;
    this.cork();
    const last = batch[batch.length - 1]!;
    if (batch.length === 1) return this.track(super.send(last.sql, last.params));
    const withs = batch.slice(0, -1).map((b, i) => `w${i} AS (${b.sql})`);
    this.track(super.send(`WITH ${withs.join(", ")} ${last.sql}`, batch.flatMap((b) => b.params)));
  }
  /** A statement without parameters (BEGIN, COMMIT), held with the others. */
  command(sql: string): Promise<unknown> {
    this.sendInserts();
    this.cork();
    return this.conn.query(sql);
  }
  readonly queue = (sql: string, params: Param[] = []): void => {
    checkStorableParams(params);
    if (!isPlainInsert(sql)) return this.track(this.send(sql, params));
    if (this.inserts.length >= MAX_COALESCED || this.insertParams + params.length > MAX_COALESCED_PARAMS) this.sendInserts();
    this.inserts.push({ sql, params });
    this.insertParams += params.length;
    this.cork();
  };
  track(p: Promise<unknown>): void {
    this.pending.push(
      p.catch((err) => {
        this.failure ??= err;
      }),
    );
  }
  /** Waits for every queued write; throws the first failure. */
  async settle(): Promise<void> {
    this.sendInserts();
    await Promise.all(this.pending);
    this.pending.length = 0;
    if (this.failure !== undefined) throw this.failure;
  }
}

/** Connections of the pool that transactions never take: reads outside a transaction always find one. */
const RESERVED_FOR_READS = 3;

/**
 * At most `slots` holders at once; the others wait in order. Transactions take a slot before they take a
 * connection, so a read made through the pool while a transaction is open (a cache filled on a miss, in a
 * commit) never waits for a connection that only another open transaction could give back: with every
 * connection held by transactions waiting for such reads, the pool would deadlock for good.
 */
class Slots {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly slots: number) {}
  async take(): Promise<void> {
    if (this.active < this.slots) {
      this.active++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }
  give(): void {
    const next = this.waiting.shift();
    if (next) next(); // the slot passes to the next in line
    else this.active--;
  }
}

export function openPostgresSql(connectionString: string, max = 10): Sql {
  // Pipeline mode: a query is written at once even while earlier ones await their answers, which only
  // happens where a transaction queues writes (PgTransaction); awaited queries run one by one as ever.
  const pool = new pg.Pool({ connectionString, max, pipeline: true } as Pg.PoolConfig);
  // An idle connection that breaks (PostgreSQL restarted, a network cut) is an 'error' on the pool: without
  // a listener Node would end the process. The pool drops that client; the next query opens a new one.
  pool.on("error", (err) => process.emitWarning(`PostgreSQL idle connection lost: ${err.message}`));
  const direct = new PgExecutor(pool);
  const slots = new Slots(Math.max(1, max - RESERVED_FOR_READS));
  return {
    dialect: "postgres",
    run: (s, p) => direct.run(s, p),
    all: (s, p) => direct.all(s, p),
    get: (s, p) => direct.get(s, p),
    async transaction(fn) {
      await slots.take();
      let client: Pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        slots.give();
        throw err;
      }
      const hooks = new SettleHooks();
      const tx = new PgTransaction(client, hooks);
      let out;
      try {
        // BEGIN goes out with the first statement; COMMIT right behind the last queued write. A failed
        // write aborts the transaction, and COMMIT then rolls it back: settle() throws that failure.
        tx.track(tx.command("BEGIN"));
        out = await fn(tx);
        const committed = tx.command("COMMIT");
        tx.flush();
        committed.catch(() => {}); // awaited below, unless a queued write failed first
        await tx.settle();
        await committed;
      } catch (err) {
        tx.flush();
        await tx.settle().catch(() => {});
        await client.query("ROLLBACK").catch(() => {});
        client.release();
        slots.give();
        hooks.run(false);
        throw tx.failure ?? err;
      }
      client.release();
      slots.give();
      hooks.run(true);
      return out;
    },
    close: () => pool.end(),
  };
}
