// Repository of thread subscriptions (thread_subscriptions; MSC4306): per local user and thread root,
// subscribed or not, automatic or manual, and where an unsubscription stood in the room's stream. Raw SQL.
import type { Sql } from "../../storage/sql.ts";

export interface ThreadSubscriptionRow {
  subscribed: boolean;
  automatic: boolean;
  /** The room's highest stream position when the user unsubscribed (null while subscribed). */
  unsubscribedAtStream: number | null;
}

export class ThreadSubscriptionStore {
  constructor(private readonly sql: Sql) {}

  async get(userId: string, roomId: string, eventId: string): Promise<ThreadSubscriptionRow | undefined> {
    const r = await this.sql.get<{ subscribed: boolean | number; automatic: boolean | number; unsubscribed_at_stream: number | string | null }>(
      `SELECT subscribed, automatic, unsubscribed_at_stream FROM thread_subscriptions WHERE user_id = ? AND room_id = ? AND event_id = ?`,
      [userId, roomId, eventId],
    );
    return r && { subscribed: !!r.subscribed, automatic: !!r.automatic, unsubscribedAtStream: r.unsubscribed_at_stream === null ? null : Number(r.unsubscribed_at_stream) };
  }

  /** Writes a subscription (replacing any row, an unsubscription's too). */
  async subscribe(userId: string, roomId: string, eventId: string, automatic: boolean): Promise<void> {
    await this.sql.run(
      `INSERT INTO thread_subscriptions (user_id, room_id, event_id, subscribed, automatic, unsubscribed_at_stream) VALUES (?, ?, ?, ?, ?, NULL)
       ON CONFLICT (user_id, room_id, event_id) DO UPDATE SET subscribed = excluded.subscribed, automatic = excluded.automatic, unsubscribed_at_stream = NULL`,
      [userId, roomId, eventId, true, automatic],
    );
  }

  /** Turns a subscription into an unsubscription at the room's highest stream position now; whether there was one. */
  async unsubscribe(userId: string, roomId: string, eventId: string): Promise<boolean> {
    const changed = await this.sql.run(
      `UPDATE thread_subscriptions SET subscribed = ?, unsubscribed_at_stream = (SELECT COALESCE(MAX(stream_ordering), 0) FROM events WHERE room_id = ?)
       WHERE user_id = ? AND room_id = ? AND event_id = ? AND subscribed = ?`,
      [false, roomId, userId, roomId, eventId, true],
    );
    return changed > 0;
  }

  /** The local users subscribed to a thread. */
  async subscribers(roomId: string, eventId: string): Promise<string[]> {
    const rows = await this.sql.all<{ user_id: string }>(`SELECT user_id FROM thread_subscriptions WHERE room_id = ? AND event_id = ? AND subscribed = ?`, [roomId, eventId, true]);
    return rows.map((r) => r.user_id);
  }
}
