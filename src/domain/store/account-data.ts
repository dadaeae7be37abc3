// Repository of account data (account_data): a user's global (room_id "") and per-room key/value
// events, the latest value per type, each write moving the account-data stream (stream_id). Raw SQL:
// sync reads it on every request.
import type { Sql } from "../../storage/sql.ts";
import { idAllocator, type IdAllocator } from "./ids.ts";

export interface AccountDataRow {
  roomId: string;
  type: string;
  content: Record<string, unknown>;
  streamId: number;
}

export class AccountDataStore {
  readonly streamIds: IdAllocator;
  constructor(private readonly sql: Sql) {
    this.streamIds = idAllocator(sql, "account_data", "stream_id", "account_data_stream_seq");
  }

  /** The stream's persisted-up-to position (ids.ts). */
  currentPosition(): number | Promise<number> {
    return this.streamIds.now();
  }

  /** Writes (replaces) one entry; returns its new stream position. */
  async put(userId: string, roomId: string, type: string, content: Record<string, unknown>): Promise<number> {
    const json = JSON.stringify(content);
    return this.sql.transaction(async (tx) => {
      const id = await this.streamIds.next(tx);
      const changed = await tx.run(`UPDATE account_data SET content = ?, stream_id = ? WHERE user_id = ? AND room_id = ? AND type = ?`, [json, id, userId, roomId, type]);
      if (changed === 0) await tx.run(`INSERT INTO account_data (user_id, room_id, type, content, stream_id) VALUES (?, ?, ?, ?, ?)`, [userId, roomId, type, json, id]);
      return id;
    });
  }

  /**
   * MSC3391: deletes one entry by setting its content to `{}` (as Synapse stores a deletion, so incremental
   * syncs see it go); returns the new stream position, or undefined when there was nothing to delete.
   */
  async remove(userId: string, roomId: string, type: string): Promise<number | undefined> {
    return this.sql.transaction(async (tx) => {
      const id = await this.streamIds.next(tx);
      const changed = await tx.run(`UPDATE account_data SET content = '{}', stream_id = ? WHERE user_id = ? AND room_id = ? AND type = ? AND content <> '{}'`, [id, userId, roomId, type]);
      return changed === 0 ? undefined : id;
    });
  }

  async get(userId: string, roomId: string, type: string): Promise<Record<string, unknown> | undefined> {
    const r = await this.sql.get<{ content: string }>(`SELECT content FROM account_data WHERE user_id = ? AND room_id = ? AND type = ?`, [userId, roomId, type]);
    return r ? (JSON.parse(r.content) as Record<string, unknown>) : undefined;
  }

  /**
   * Entries of `userId` changed in (after, upTo] (all of them when `after` is undefined). One query.
   * `skipDeleted` leaves out entries whose content is `{}` (MSC3391's deleted ones, for initial syncs).
   */
  async changed(userId: string, after: number | undefined, upTo: number, skipDeleted = false): Promise<AccountDataRow[]> {
    const rows = await this.sql.all<{ room_id: string; type: string; content: string; stream_id: number }>(
      `SELECT room_id, type, content, stream_id FROM account_data WHERE user_id = ? AND stream_id > ? AND stream_id <= ?${skipDeleted ? ` AND content <> '{}'` : ""} ORDER BY stream_id`,
      [userId, after ?? 0, upTo],
    );
    return rows.map((r) => ({ roomId: r.room_id, type: r.type, content: JSON.parse(r.content) as Record<string, unknown>, streamId: Number(r.stream_id) }));
  }
}
