// Repository of uploaded sync filters (user_filters): per user, ids counting up from 0. Cold path: Prisma
// is not needed either; two small raw queries.
import type { Sql } from "../../storage/sql.ts";

export class FilterStore {
  constructor(private readonly sql: Sql) {}

  async add(userId: string, json: string): Promise<number> {
    return this.sql.transaction(async (tx) => {
      const r = await tx.get<{ m: number | null }>(`SELECT MAX(filter_id) AS m FROM user_filters WHERE user_id = ?`, [userId]);
      const id = r?.m === null || r?.m === undefined ? 0 : Number(r.m) + 1;
      await tx.run(`INSERT INTO user_filters (user_id, filter_id, json) VALUES (?, ?, ?)`, [userId, id, json]);
      return id;
    });
  }

  async get(userId: string, filterId: number): Promise<string | undefined> {
    const r = await this.sql.get<{ json: string }>(`SELECT json FROM user_filters WHERE user_id = ? AND filter_id = ?`, [userId, filterId]);
    return r?.json;
  }
}
