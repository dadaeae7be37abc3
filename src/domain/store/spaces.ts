// Batch reads for the space hierarchy: the number of joined members of many rooms in one query.
import type { Sql } from "../../storage/sql.ts";

export class SpaceReads {
  constructor(private readonly sql: Sql) {}

  async joinedCounts(roomIds: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (let i = 0; i < roomIds.length; i += 500) {
      const chunk = roomIds.slice(i, i + 500);
      if (chunk.length === 0) continue;
      const rows = await this.sql.all<{ room_id: string; n: number | string }>(
        `SELECT room_id, COUNT(*) AS n FROM room_memberships WHERE membership = ? AND room_id IN (${chunk.map(() => "?").join(",")}) GROUP BY room_id`,
        ["join", ...chunk],
      );
      for (const r of rows) out.set(r.room_id, Number(r.n));
    }
    return out;
  }
}
