// The raw-SQL layer's PostgreSQL side (src/storage/sql.ts says what the layer is): a pg pool, `?`
// placeholders rewritten to `$n`, int8 read as numbers. Imported only when the database is PostgreSQL, so a
// SQLite server never loads pg.
import type * as Pg from "pg";
import { pg, QueryConfig } from "./pg-driver.ts";
import { checkStorableParams } from "../domain/text.ts";
import { SettleHooks, type Param, type QueueOptions, type Sql, type SqlExecutor } from "./sql.ts";
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

/** Writes, position allocation, and the writes a transaction sends as one statement (PgTransaction). */
const PREPARABLE = /^\s*(INSERT|UPDATE|DELETE|SELECT nextval\(|WITH w0 AS \((INSERT|DELETE))/i;

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
    return this.client.query(new QueryConfig(text, params.length > 0 ? statementName(text) : undefined, params, pgTypes) as unknown as Pg.QueryConfig);
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
 * Queued writes that may share one statement with their neighbours (data-modifying WITH clauses), with
 * the table each writes:
 * - a plain `INSERT INTO t (...) VALUES (...)`: it reads nothing, and inserts can affect one another only by
 *   a unique violation, which fails the transaction either way;
 * - a `DELETE FROM t WHERE ...` queued with `disjointFromInserts` (sql.ts `QueueOptions`): the caller's word
 *   that it removes no row the transaction inserts, so it does not matter that, sharing a statement, it
 *   does not see the rows inserted beside it.
 * Neither may carry ON CONFLICT, RETURNING, USING, a WITH of its own or a sub-select.
 */
const PLAIN_INSERT = /^\s*INSERT INTO ([\w"]+)\s*\([^()]*\)\s*VALUES\s*\(/i;
const PLAIN_DELETE = /^\s*DELETE FROM ([\w"]+)\s+WHERE\s/i;
const NOT_PLAIN = /\b(ON\s+CONFLICT|RETURNING|USING|WITH|SELECT)\b/i;

/** A write held to share a statement: its table and whether it inserts. */
interface Held {
  sql: string;
  params: Param[];
  table: string;
  inserts: boolean;
}

/** What a statement text is, for `holdable`: a plain insert or delete of a table, or neither. */
type Shape = { table: string; inserts: boolean } | null;
/** Shapes by statement text: the same few texts are queued again and again (bounded: IN lists vary). */
const shapeOfText = new LruCache<string, Shape>("pg_statement_shapes", 2000);

function shapeOf(sql: string): Shape {
  let shape = shapeOfText.get(sql);
  if (shape !== undefined) return shape;
  const plain = !NOT_PLAIN.test(sql);
  const insert = plain ? PLAIN_INSERT.exec(sql) : null;
  const del = plain && !insert ? PLAIN_DELETE.exec(sql) : null;
  shape = insert ? { table: insert[1]!, inserts: true } : del ? { table: del[1]!, inserts: false } : null;
  shapeOfText.set(sql, shape);
  return shape;
}

function holdable(sql: string, opts: QueueOptions | undefined): Pick<Held, "table" | "inserts"> | undefined {
  const shape = shapeOf(sql);
  if (!shape || (!shape.inserts && !opts?.disjointFromInserts)) return undefined;
  return shape;
}

/**
 * The statement a run of held writes goes out as, by the texts of its writes: a trie, so that the same
 * writes give the same string, not one built (and hashed by every cache it is looked up in) per
 * transaction. Past MAX_COMPOSED statements (multi-row inserts vary in length) the trie is dropped and
 * fills again as statements are asked for.
 */
interface Composed {
  next: Map<string, Composed>;
  text: string | undefined;
}
const MAX_COMPOSED = 500;
const emptyTrie = (): Composed => ({ next: new Map(), text: undefined });
let composedRoot = emptyTrie();
let composedCount = 0;

function composedText(batch: readonly Held[]): string {
  let node = composedRoot;
  for (const b of batch) {
    let n = node.next.get(b.sql);
    if (!n) node.next.set(b.sql, (n = emptyTrie()));
    node = n;
  }
  if (node.text === undefined) {
    const withs = batch.slice(0, -1).map((b, i) => `w${i} AS (${b.sql})`);
    node.text = `WITH ${withs.join(", ")} ${batch[batch.length - 1]!.sql}`;
    if (++composedCount > MAX_COMPOSED) {
      composedRoot = emptyTrie();
      composedCount = 0;
    }
  }
  return node.text;
}

/**
 * Most writes one statement carries, and most parameters (PostgreSQL allows 65,535). Planning a WITH
 * list grows faster than its length: 4,000 single-row inserts took 476 ms as one statement, 92 ms one by
 * one and 26–31 ms in statements of 16–64 (this machine).
 */
const MAX_COALESCED = 48;
const MAX_COALESCED_PARAMS = 20_000;

/**
 * A transaction's executor that pipelines queued writes: they go out at once (pg's pipeline mode), a
 * later read waits behind them on the connection as any query would, and COMMIT follows the last one.
 *
 * Consecutive holdable writes (see `holdable`) queued in one turn are sent as one statement: `WITH w0 AS
 * (INSERT ...), w1 AS (INSERT ...) DELETE ...`. A message's event row, DAG edge, transaction id and
 * forward extremities are one statement instead of five. A write joins the statement held only if no
 * delete in it writes the same table (an insert after a delete of its table may put back a key the
 * delete removes, which one statement could refuse). Any other statement, and the end of the turn, sends
 * what is held before it first, so the order of effects is kept.
 *
 * BEGIN goes out with the first statement. A transaction whose writes are all held when it commits — the
 * common send — goes out as that one statement alone, without BEGIN and COMMIT: PostgreSQL runs a lone
 * statement atomically. One message in, one answer back, instead of four.
 */
class PgTransaction extends PgExecutor {
  private readonly pending: Promise<unknown>[] = [];
  /** The first failure of a write nobody awaits. */
  failure: unknown;
  /** Whether BEGIN has been sent (a transaction that never sends one ran as a lone statement, or not at all). */
  began = false;
  /** The connection's socket while it is corked (see `cork`). */
  private corked: { cork(): void; uncork(): void } | undefined;
  /** The end-of-turn flush of a corked socket, until it runs or a flush comes first. */
  private flushAtTurnEnd: NodeJS.Immediate | undefined;
  /** Writes held to share one statement (see the class comment), and their parameter count. */
  private held: Held[] = [];
  private heldParams = 0;
  constructor(
    private readonly conn: Pg.PoolClient,
    private readonly hooks: SettleHooks,
  ) {
    super(conn);
  }
  /**
   * The transaction reports its own settling: the function is handed this object itself, not one derived
   * from it (sql.ts `withSettle`), through which an assigned field — a failure, the held writes — would
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
    this.flushAtTurnEnd = setImmediate(() => this.flush());
  }
  /** Sends the writes held, then writes what is held on the socket (see `cork`). */
  flush(): void {
    this.sendHeld();
    const stream = this.corked;
    this.corked = undefined;
    // Flushed before the turn's end (a commit): no turn of the event loop is spent on nothing.
    if (this.flushAtTurnEnd) clearImmediate(this.flushAtTurnEnd);
    this.flushAtTurnEnd = undefined;
    stream?.uncork();
  }
  /** BEGIN, once, before the transaction's first statement. */
  private begin(): void {
    if (this.began) return;
    this.began = true;
    this.cork();
    this.track(this.conn.query("BEGIN"));
  }
  protected override send(sql: string, params: Param[]) {
    this.sendHeld();
    this.begin();
    this.cork();
    return super.send(sql, params);
  }
  /** The held writes as one statement (one alone as itself); `alone`: as the whole transaction, no BEGIN. */
  private sendHeld(alone = false): void {
    const batch = this.takeHeld();
    if (batch.length === 0) return;
    if (!alone) this.begin();
    this.cork();
    const last = batch[batch.length - 1]!;
    if (batch.length === 1) return this.track(super.send(last.sql, last.params));
    this.track(super.send(composedText(batch), batch.flatMap((b) => b.params)));
  }
  /** The held writes, no longer held. */
  private takeHeld(): Held[] {
    const batch = this.held;
    this.held = [];
    this.heldParams = 0;
    return batch;
  }
  readonly queue = (sql: string, params: Param[] = [], opts?: QueueOptions): void => {
    checkStorableParams(params);
    const form = holdable(sql, opts);
    if (!form) return this.track(this.send(sql, params));
    const full = this.held.length >= MAX_COALESCED || this.heldParams + params.length > MAX_COALESCED_PARAMS;
    if (full || this.held.some((h) => !h.inserts && h.table === form.table)) this.sendHeld();
    this.held.push({ sql, params, table: form.table, inserts: form.inserts });
    this.heldParams += params.length;
    this.cork();
  };
  track(p: Promise<unknown>): void {
    this.pending.push(
      p.catch((err) => {
        this.failure ??= err;
      }),
    );
  }
  /** Waits for every write sent; throws the first failure. */
  async settle(): Promise<void> {
    await Promise.all(this.pending);
    this.pending.length = 0;
    if (this.failure !== undefined) throw this.failure;
  }
  /**
   * Commits: COMMIT behind the last write; or, when nothing has gone out yet, the held writes alone as one
   * statement (or nothing at all). Throws the first failure of any write.
   */
  async commit(): Promise<void> {
    if (!this.began) {
      this.sendHeld(true);
      this.flush();
      return this.settle();
    }
    this.sendHeld();
    const committed = this.conn.query("COMMIT");
    committed.catch(() => {}); // awaited below, unless a write failed first
    this.flush();
    await this.settle();
    await committed;
  }
  /** After a failure: drops the writes still held and lets out what was sent, to be answered. */
  async abandon(): Promise<void> {
    this.takeHeld();
    this.flush();
    await this.settle().catch(() => {});
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
        // BEGIN goes out with the first statement, COMMIT right behind the last queued write (or neither,
        // for a transaction that is one statement: PgTransaction). A failed write aborts the transaction,
        // and COMMIT then rolls it back: commit() throws that failure.
        out = await fn(tx);
        await tx.commit();
      } catch (err) {
        await tx.abandon();
        if (tx.began) await client.query("ROLLBACK").catch(() => {});
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
