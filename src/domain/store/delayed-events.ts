// Repository of delayed events (delayed_events, delayed_event_txns; MSC4140): the scheduled events of
// local users, taken for sending (is_processed) when due or asked for, deleted once sent or cancelled;
// and the transaction ids of delayed sends. Raw SQL.
import type { Sql, SqlExecutor } from "../../storage/sql.ts";

export interface DelayedEventRow {
  delayId: string;
  userId: string;
  deviceId: string | null;
  roomId: string;
  type: string;
  stateKey: string | null;
  content: Record<string, unknown>;
  delay: number;
  sendTs: number;
  /** MSC4354: sent as a sticky event of this duration (null: not sticky). */
  stickyDurationMs: number | null;
}

type Raw = {
  delay_id: string; user_id: string; device_id: string | null; room_id: string; event_type: string;
  state_key: string | null; content: string; delay: number | string; send_ts: number | string; sticky_duration_ms: number | string | null;
};

const COLUMNS = "delay_id, user_id, device_id, room_id, event_type, state_key, content, delay, send_ts, sticky_duration_ms";

function toRow(r: Raw): DelayedEventRow {
  return {
    delayId: r.delay_id, userId: r.user_id, deviceId: r.device_id, roomId: r.room_id, type: r.event_type,
    stateKey: r.state_key, content: JSON.parse(r.content) as Record<string, unknown>, delay: Number(r.delay), sendTs: Number(r.send_ts),
    stickyDurationMs: r.sticky_duration_ms === null || r.sticky_duration_ms === undefined ? null : Number(r.sticky_duration_ms),
  };
}

export class DelayedEventStore {
  constructor(private readonly sql: Sql) {}

  /**
   * Inserts `e` unless its user already has `limit` scheduled: then nothing is written and the answer is
   * the send time at which one of them will have gone (the caller's retry_after). Else undefined.
   */
  async add(e: DelayedEventRow, limit: number, txn?: { deviceKey: string; txnId: string; requestHash: string; now: number }): Promise<{ full: number } | undefined> {
    return this.sql.transaction(async (tx) => {
      const scheduled = await tx.all<{ send_ts: number | string }>(`SELECT send_ts FROM delayed_events WHERE user_id = ? ORDER BY send_ts LIMIT ?`, [e.userId, limit]);
      if (scheduled.length >= limit) return { full: Number(scheduled[0]!.send_ts) };
      await tx.run(
        `INSERT INTO delayed_events (${COLUMNS}, is_processed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, FALSE)`,
        [e.delayId, e.userId, e.deviceId, e.roomId, e.type, e.stateKey, JSON.stringify(e.content), e.delay, e.sendTs, e.stickyDurationMs],
      );
      if (txn)
        await tx.run(`INSERT INTO delayed_event_txns (user_id, device_key, txn_id, request_hash, delay_id, created_ts) VALUES (?, ?, ?, ?, ?, ?)`, [
          e.userId, txn.deviceKey, txn.txnId, txn.requestHash, e.delayId, txn.now,
        ]);
      return undefined;
    });
  }

  async findTxn(userId: string, deviceKey: string, txnId: string): Promise<{ delayId: string; requestHash: string } | undefined> {
    const r = await this.sql.get<{ delay_id: string; request_hash: string }>(`SELECT delay_id, request_hash FROM delayed_event_txns WHERE user_id = ? AND device_key = ? AND txn_id = ?`, [userId, deviceKey, txnId]);
    return r && { delayId: r.delay_id, requestHash: r.request_hash };
  }

  /** The user's scheduled events (not yet taken for sending), soonest first. */
  async scheduledOf(userId: string): Promise<DelayedEventRow[]> {
    const rows = await this.sql.all<Raw>(`SELECT ${COLUMNS} FROM delayed_events WHERE user_id = ? AND NOT is_processed ORDER BY send_ts, delay_id`, [userId]);
    return rows.map(toRow);
  }

  /** Deletes a scheduled event; whether there was one. */
  async cancel(delayId: string): Promise<boolean> {
    return (await this.sql.run(`DELETE FROM delayed_events WHERE delay_id = ? AND NOT is_processed`, [delayId])) > 0;
  }

  /** Sets a scheduled event's send time to `now` + its delay; the new time, or undefined if there is none. */
  async restart(delayId: string, now: number): Promise<number | undefined> {
    return this.sql.transaction(async (tx) => {
      const changed = await tx.run(`UPDATE delayed_events SET send_ts = ? + delay WHERE delay_id = ? AND NOT is_processed`, [now, delayId]);
      if (changed === 0) return undefined;
      const r = await tx.get<{ send_ts: number | string }>(`SELECT send_ts FROM delayed_events WHERE delay_id = ?`, [delayId]);
      return Number(r!.send_ts);
    });
  }

  /** Takes one scheduled event for sending now (marks it processed); undefined if there is none. */
  async take(delayId: string): Promise<DelayedEventRow | undefined> {
    const rows = await this.sql.transaction((tx) => tx.all<Raw>(`UPDATE delayed_events SET is_processed = TRUE WHERE delay_id = ? AND NOT is_processed RETURNING ${COLUMNS}`, [delayId]));
    return rows[0] && toRow(rows[0]);
  }

  /**
   * Takes every event due by `now` for sending, soonest first; with `again`, also those taken before (a
   * restart: their sending may not have completed). One statement: a concurrent `take` gets none of them.
   */
  async takeDue(now: number, again = false): Promise<DelayedEventRow[]> {
    const rows = await this.sql.transaction((tx) =>
      tx.all<Raw>(`UPDATE delayed_events SET is_processed = TRUE WHERE send_ts <= ?${again ? "" : " AND NOT is_processed"} RETURNING ${COLUMNS}`, [now]),
    );
    return rows.map(toRow).sort((a, b) => a.sendTs - b.sendTs || (a.delayId < b.delayId ? -1 : 1));
  }

  /** The send time of the next scheduled event, if any. */
  async nextSendTs(): Promise<number | undefined> {
    const r = await this.sql.get<{ t: number | string | null }>(`SELECT MIN(send_ts) AS t FROM delayed_events WHERE NOT is_processed`);
    return r?.t === null || r?.t === undefined ? undefined : Number(r.t);
  }

  /** Forgets an event once sent (or failed to send). */
  async remove(delayId: string): Promise<void> {
    await this.sql.run(`DELETE FROM delayed_events WHERE delay_id = ?`, [delayId]);
  }

  /**
   * In a consumer's transaction: cancels the scheduled state events of (room, type, state key) of every
   * user but `exceptUserId` (a state change by someone else overrides them).
   */
  async cancelStateOfOthers(tx: SqlExecutor, roomId: string, type: string, stateKey: string, exceptUserId: string): Promise<void> {
    await tx.run(`DELETE FROM delayed_events WHERE room_id = ? AND event_type = ? AND state_key = ? AND user_id <> ? AND NOT is_processed`, [roomId, type, stateKey, exceptUserId]);
  }

  /** Cancels every scheduled event of a user (deactivation). */
  async cancelAllOf(userId: string): Promise<void> {
    await this.sql.run(`DELETE FROM delayed_events WHERE user_id = ? AND NOT is_processed`, [userId]);
  }
}
