// Query timing for the metrics (src/observability/metrics.ts): the raw SQL layer and the Prisma client are
// wrapped only when a timer is given, so a server without metrics pays nothing.
import type { Sql, SqlExecutor } from "./sql.ts";

/** Receives each query's client, operation and duration in seconds. */
export type QueryTimer = (client: "sql" | "prisma", operation: string, seconds: number) => void;

async function time<T>(timer: QueryTimer, client: "sql" | "prisma", operation: string, run: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await run();
  } finally {
    timer(client, operation, (performance.now() - started) / 1000);
  }
}

/** An executor whose run/all/get are timed; everything else (onSettled ...) is the original's. */
function timedExecutor<E extends SqlExecutor>(inner: E, timer: QueryTimer): E {
  return Object.assign(Object.create(inner) as E, {
    run: (sql: string, p?: Parameters<SqlExecutor["run"]>[1]) => time(timer, "sql", "run", () => inner.run(sql, p)),
    all: (sql: string, p?: Parameters<SqlExecutor["all"]>[1]) => time(timer, "sql", "all", () => inner.all(sql, p)),
    get: (sql: string, p?: Parameters<SqlExecutor["get"]>[1]) => time(timer, "sql", "get", () => inner.get(sql, p)),
  });
}

/** `sql` with every query timed, those inside transactions too, and each transaction as a whole. */
export function timedSql(sql: Sql, timer: QueryTimer): Sql {
  const outer = timedExecutor(sql, timer);
  return Object.assign(outer, {
    transaction: <T>(fn: (tx: SqlExecutor) => Promise<T>) => time(timer, "sql", "transaction", () => sql.transaction((tx) => fn(timedExecutor(tx, timer)))),
    close: () => sql.close(),
  });
}

/** Times a Prisma operation (called from the client's `$allOperations` extension). */
export function timePrisma<T>(timer: QueryTimer, model: string | undefined, operation: string, run: () => Promise<T>): Promise<T> {
  return time(timer, "prisma", model ? `${model}.${operation}` : operation, run);
}
