// The raw-SQL layer's PostgreSQL side (src/storage/sql.ts says what the layer is): a pg pool, `?`
// placeholders rewritten to `$n`, int8 read as numbers. Imported only when the database is PostgreSQL, so a
// SQLite server never loads pg.
import pg from "pg";
import { checkStorableParams } from "../domain/text.ts";
import { SettleHooks, withSettle, type Param, type Sql, type SqlExecutor } from "./sql.ts";
import { toPgPlaceholders } from "./pg-placeholders.ts";

const pgTypes = {
  getTypeParser(oid: number, format?: string) {
    if (oid === 20) return (v: string) => Number(v); // int8: our ids and timestamps fit in 2^53
    return pg.types.getTypeParser(oid, format as "text");
  },
};

class PgExecutor implements SqlExecutor {
  readonly dialect = "postgres" as const;
  constructor(private readonly client: pg.Pool | pg.PoolClient) {}
  protected send(sql: string, params: Param[]) {
    return this.client.query({ text: toPgPlaceholders(sql), values: params, types: pgTypes });
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
 * A transaction's executor that pipelines queued writes: they go out at once (pg's pipeline mode), a
 * later read waits behind them on the connection as any query would, and COMMIT follows the last one.
 */
class PgTransaction extends PgExecutor {
  private readonly pending: Promise<unknown>[] = [];
  failure: unknown;
  constructor(client: pg.PoolClient) {
    super(client);
  }
  readonly queue = (sql: string, params: Param[] = []): void => {
    checkStorableParams(params);
    this.track(this.send(sql, params));
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
    await Promise.all(this.pending);
    this.pending.length = 0;
    if (this.failure !== undefined) throw this.failure;
  }
}

export function openPostgresSql(connectionString: string, max = 10): Sql {
  // Pipeline mode: a query is written at once even while earlier ones await their answers, which only
  // happens where a transaction queues writes (PgTransaction); awaited queries run one by one as ever.
  const pool = new pg.Pool({ connectionString, max, pipeline: true } as pg.PoolConfig);
  // An idle connection that breaks (PostgreSQL restarted, a network cut) is an 'error' on the pool: without
  // a listener Node would end the process. The pool drops that client; the next query opens a new one.
  pool.on("error", (err) => process.emitWarning(`PostgreSQL idle connection lost: ${err.message}`));
  const direct = new PgExecutor(pool);
  return {
    dialect: "postgres",
    run: (s, p) => direct.run(s, p),
    all: (s, p) => direct.all(s, p),
    get: (s, p) => direct.get(s, p),
    async transaction(fn) {
      const client = await pool.connect();
      const hooks = new SettleHooks();
      const tx = new PgTransaction(client);
      let out;
      try {
        // BEGIN goes out with the first statement; COMMIT right behind the last queued write. A failed
        // write aborts the transaction, and COMMIT then rolls it back: settle() throws that failure.
        tx.track(client.query("BEGIN"));
        out = await fn(withSettle(tx, hooks));
        const committed = client.query("COMMIT");
        committed.catch(() => {}); // awaited below, unless a queued write failed first
        await tx.settle();
        await committed;
      } catch (err) {
        await tx.settle().catch(() => {});
        await client.query("ROLLBACK").catch(() => {});
        client.release();
        hooks.run(false);
        throw tx.failure ?? err;
      }
      client.release();
      hooks.run(true);
      return out;
    },
    close: () => pool.end(),
  };
}
