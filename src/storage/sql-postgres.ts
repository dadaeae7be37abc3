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
  private q(sql: string, params: Param[]) {
    checkStorableParams(params);
    return this.client.query({ text: toPgPlaceholders(sql), values: params, types: pgTypes });
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

export function openPostgresSql(connectionString: string, max = 10): Sql {
  const pool = new pg.Pool({ connectionString, max });
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
      let out;
      try {
        await client.query("BEGIN");
        out = await fn(withSettle(new PgExecutor(client), hooks));
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK").catch(() => {});
        client.release();
        hooks.run(false);
        throw err;
      }
      client.release();
      hooks.run(true);
      return out;
    },
    close: () => pool.end(),
  };
}
