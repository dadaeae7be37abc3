// Repository of durable consumers' positions (stream_consumer_positions): how far each consumer has
// handled a stream. Written in the consumer's own transaction, with its effects (consumers/durable.ts).
import type { Sql, SqlExecutor } from "../../storage/sql.ts";

export class ConsumerPositionStore {
  constructor(private readonly sql: Sql) {}

  async get(consumer: string, stream: string): Promise<number | undefined> {
    const r = await this.sql.get<{ position: number }>(`SELECT position FROM stream_consumer_positions WHERE consumer = ? AND stream = ?`, [consumer, stream]);
    return r ? Number(r.position) : undefined;
  }

  async set(tx: SqlExecutor, consumer: string, stream: string, position: number): Promise<void> {
    await tx.run(
      `INSERT INTO stream_consumer_positions (consumer, stream, position) VALUES (?, ?, ?)
       ON CONFLICT (consumer, stream) DO UPDATE SET position = excluded.position`,
      [consumer, stream, position],
    );
  }
}
