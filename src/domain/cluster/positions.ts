// The stream_positions table (Synapse's): each writer's own persisted-up-to position per stream, written
// by that writer (a short debounce after it moves, and by the safety-net round) and read by every process
// when it catches up. Only with several processes.
import type { Sql } from "../../storage/sql.ts";

export interface WriterPosition {
  stream: string;
  instance: string;
  position: number;
}

export class StreamPositionStore {
  constructor(private readonly sql: Sql) {}

  async all(): Promise<WriterPosition[]> {
    const rows = await this.sql.all<{ stream_name: string; instance_name: string; stream_id: number | string | bigint }>(`SELECT stream_name, instance_name, stream_id FROM stream_positions`);
    return rows.map((r) => ({ stream: r.stream_name, instance: r.instance_name, position: Number(r.stream_id) }));
  }

  /** Records this instance's positions (never moving one back). */
  async record(instance: string, positions: ReadonlyMap<string, number>): Promise<void> {
    if (positions.size === 0) return;
    await this.sql.transaction(async (tx) => {
      for (const [stream, position] of positions)
        await tx.run(
          `INSERT INTO stream_positions (stream_name, instance_name, stream_id) VALUES (?, ?, ?)
           ON CONFLICT (stream_name, instance_name) DO UPDATE SET stream_id = excluded.stream_id WHERE stream_positions.stream_id < excluded.stream_id`,
          [stream, instance, position],
        );
    });
  }
}
