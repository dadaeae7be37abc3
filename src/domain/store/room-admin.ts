// Repository of the admin API's room records (blocked_rooms, room_deletions) and the purge of a room:
// every row of the room's events, state, memberships, receipts, push bookkeeping, directory entries and
// outbound queue, in one transaction on either database. Users' own data (account data, key backups) stays.
import type { Sql, SqlExecutor } from "../../storage/sql.ts";

export interface DeletionRow {
  deleteId: string;
  roomId: string;
  status: string;
  error: string | null;
  result: Record<string, unknown>;
  /** What was asked and by whom (JSON), for resuming after a restart; null on rows from before it was kept. */
  params: string | null;
}

/** Tables whose rows belong to one room (room_id column), purged with it. */
const ROOM_TABLES = [
  "event_edges",
  "forward_extremities",
  "current_state_events",
  "event_txn_ids",
  "redactions",
  "room_publicity",
  "event_relations",
  "room_aliases",
  "room_directory_stats",
  "receipts",
  "push_events",
  "push_exceptions",
  "push_member_spans",
  "federation_outbound_pdus",
  "appservice_room_list",
  "room_memberships",
];

export class RoomAdminStore {
  constructor(private readonly sql: Sql) {}

  async isBlocked(roomId: string): Promise<{ userId: string } | undefined> {
    const r = await this.sql.get<{ user_id: string }>(`SELECT user_id FROM blocked_rooms WHERE room_id = ?`, [roomId]);
    return r && { userId: r.user_id };
  }

  async setBlocked(roomId: string, userId: string, blocked: boolean, now: number, tx: SqlExecutor = this.sql): Promise<void> {
    if (!blocked) {
      await tx.run(`DELETE FROM blocked_rooms WHERE room_id = ?`, [roomId]);
      return;
    }
    await tx.run(`INSERT INTO blocked_rooms (room_id, user_id, created_ts) VALUES (?, ?, ?) ON CONFLICT (room_id) DO NOTHING`, [roomId, userId, now]);
  }

  async insertDeletion(d: DeletionRow, now: number): Promise<void> {
    await this.sql.run(`INSERT INTO room_deletions (delete_id, room_id, status, error, result, params, created_ts) VALUES (?, ?, ?, ?, ?, ?, ?)`, [
      d.deleteId, d.roomId, d.status, d.error, JSON.stringify(d.result), d.params, now,
    ]);
  }

  async updateDeletion(deleteId: string, status: string, error: string | null, result: Record<string, unknown>): Promise<void> {
    await this.sql.run(`UPDATE room_deletions SET status = ?, error = ?, result = ? WHERE delete_id = ?`, [status, error, JSON.stringify(result), deleteId]);
  }

  async deletion(deleteId: string): Promise<DeletionRow | undefined> {
    const r = await this.sql.get<Record<string, unknown>>(`SELECT * FROM room_deletions WHERE delete_id = ?`, [deleteId]);
    return r && toDeletion(r);
  }

  async deletionsOf(roomId: string): Promise<DeletionRow[]> {
    return (await this.sql.all<Record<string, unknown>>(`SELECT * FROM room_deletions WHERE room_id = ? ORDER BY created_ts`, [roomId])).map(toDeletion);
  }

  /** Deletions that were running when the server stopped, oldest first. */
  async unfinishedDeletions(): Promise<DeletionRow[]> {
    return (await this.sql.all<Record<string, unknown>>(`SELECT * FROM room_deletions WHERE status IN ('scheduled', 'active') ORDER BY created_ts`)).map(toDeletion);
  }

  /** Is a deletion of the room still running? */
  async deletionRunning(roomId: string): Promise<boolean> {
    const r = await this.sql.get(`SELECT delete_id FROM room_deletions WHERE room_id = ? AND status IN ('scheduled', 'active')`, [roomId]);
    return r !== undefined;
  }

  /** Deletes everything stored of the room (not the users' own data); one transaction. */
  async purge(roomId: string): Promise<void> {
    await this.sql.transaction(async (tx) => {
      const searchKey = tx.dialect === "sqlite" ? "rowid" : "stream_ordering";
      await tx.run(`DELETE FROM event_search WHERE ${searchKey} IN (SELECT stream_ordering FROM events WHERE room_id = ?)`, [roomId]);
      await tx.run(`DELETE FROM state_group_entries WHERE state_group IN (SELECT id FROM state_groups WHERE room_id = ?)`, [roomId]);
      await tx.run(`DELETE FROM state_groups WHERE room_id = ?`, [roomId]);
      for (const table of ROOM_TABLES) await tx.run(`DELETE FROM ${table} WHERE room_id = ?`, [roomId]);
      await tx.run(`DELETE FROM events WHERE room_id = ?`, [roomId]);
      await tx.run(`DELETE FROM rooms WHERE room_id = ?`, [roomId]);
    });
  }
}

function toDeletion(r: Record<string, unknown>): DeletionRow {
  return {
    deleteId: r.delete_id as string,
    roomId: r.room_id as string,
    status: r.status as string,
    error: (r.error as string | null) ?? null,
    result: JSON.parse(r.result as string) as Record<string, unknown>,
    params: (r.params as string | null | undefined) ?? null,
  };
}
