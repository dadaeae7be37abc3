// Allocators for stream positions and state group ids. PostgreSQL uses sequences shared by all workers;
// SQLite has a single writer process, so an in-process counter seeded from the table's maximum suffices.
import type { Sql, SqlExecutor } from "../../storage/sql.ts";

export interface IdAllocator {
  next(tx: SqlExecutor): Promise<number>;
}

export function idAllocator(sql: Sql, table: string, column: string, sequence: string): IdAllocator {
  if (sql.dialect === "postgres") {
    const q = `SELECT nextval('${sequence}') AS id`;
    return { next: async (tx) => Number((await tx.get<{ id: number }>(q))!.id) };
  }
  let last: Promise<number> | undefined;
  return {
    async next(tx) {
      last ??= tx.get<{ m: number | null }>(`SELECT MAX(${column}) AS m FROM ${table}`).then((r) => Number(r?.m ?? 0));
      const n = (await last) + 1;
      last = Promise.resolve(n);
      return n;
    },
  };
}
