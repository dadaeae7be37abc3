// Repository of sticky events (sticky_events, MSC4354): one row per sticky timeline event while it is
// sticky, with its position on the sticky-events stream, its room, sender and expiry. Written inside the
// event commit (src/domain/sticky/index-hook.ts); read by /sync's `msc4354_sticky` section, the sliding-sync
// extension and the federation sender (a server that joins a room is sent our unexpired sticky events).
// Expired rows are never read and are deleted hourly, the highest position deleted kept in
// stream_high_water so positions never go back after a restart. Raw SQL: /sync reads it.
import type { Param, Sql, SqlExecutor } from "../../storage/sql.ts";
import { write } from "../../storage/sql.ts";
import { idAllocator, type IdAllocator } from "./ids.ts";

export interface StickyRow {
  streamId: number;
  eventId: string;
  roomId: string;
  eventStreamOrdering: number;
  sender: string;
  expiresAt: number;
}

interface Row {
  stream_id: number | string;
  event_id: string;
  room_id: string;
  event_stream_ordering: number | string;
  sender: string;
  expires_at: number | string;
}

const toRow = (r: Row): StickyRow => ({ streamId: Number(r.stream_id), eventId: r.event_id, roomId: r.room_id, eventStreamOrdering: Number(r.event_stream_ordering), sender: r.sender, expiresAt: Number(r.expires_at) });
const marks = (n: number) => Array.from({ length: n }, () => "?").join(",");
/** Rooms named in one query; more are read by position and filtered here. */
const ROOMS_PER_QUERY = 500;
const SCAN_BATCH = 500;
const COLUMNS = "stream_id, event_id, room_id, event_stream_ordering, sender, expires_at";

export class StickyEventStore {
  readonly streamIds: IdAllocator;

  constructor(private readonly sql: Sql) {
    const seed = `SELECT MAX(m) AS m FROM (SELECT MAX(stream_id) AS m FROM sticky_events UNION ALL SELECT position AS m FROM stream_high_water WHERE stream = 'sticky_events') x`;
    this.streamIds = idAllocator(sql, "sticky_events", "stream_id", "sticky_events_stream_seq", seed);
  }

  /** The stream's persisted-up-to position. */
  currentPosition(): number | Promise<number> {
    return this.streamIds.now();
  }

  /** Adds rows (in the event commit's transaction), each at a new position, in the order given; returns the highest. */
  async insert(tx: SqlExecutor, rows: readonly Omit<StickyRow, "streamId">[]): Promise<number | undefined> {
    if (rows.length === 0) return undefined;
    const ids = await this.streamIds.nextMany(tx, rows.length);
    const params: Param[] = [];
    rows.forEach((r, i) => params.push(ids[i]!, r.eventId, r.roomId, r.eventStreamOrdering, r.sender, r.expiresAt));
    await write(tx, `INSERT INTO sticky_events (${COLUMNS}) VALUES ${rows.map(() => "(?, ?, ?, ?, ?, ?)").join(", ")} ON CONFLICT (event_id) DO NOTHING`, params);
    return ids[ids.length - 1];
  }

  /** Drops the rows of these events (redacted: no longer sticky). */
  async remove(tx: SqlExecutor, eventIds: readonly string[]): Promise<void> {
    if (eventIds.length === 0) return;
    await write(tx, `DELETE FROM sticky_events WHERE event_id IN (${marks(eventIds.length)})`, [...eventIds]);
  }

  /**
   * The unexpired sticky events of `roomIds` with positions in (after, upTo], by position, at most `limit`
   * (undefined: all). A few rooms are named in the query; many are filtered from a scan by position.
   */
  async inRooms(roomIds: ReadonlySet<string>, after: number, upTo: number, now: number, limit: number | undefined): Promise<StickyRow[]> {
    if (roomIds.size === 0 || upTo <= after || limit === 0) return [];
    const lim = limit === undefined ? "" : " LIMIT ?";
    const limParam = limit === undefined ? [] : [limit];
    if (roomIds.size <= ROOMS_PER_QUERY) {
      const rows = await this.sql.all<Row>(
        `SELECT ${COLUMNS} FROM sticky_events WHERE room_id IN (${marks(roomIds.size)}) AND stream_id > ? AND stream_id <= ? AND expires_at > ? ORDER BY stream_id${lim}`,
        [...roomIds, after, upTo, now, ...limParam],
      );
      return rows.map(toRow);
    }
    const out: StickyRow[] = [];
    let from = after;
    for (;;) {
      const rows = await this.sql.all<Row>(`SELECT ${COLUMNS} FROM sticky_events WHERE stream_id > ? AND stream_id <= ? AND expires_at > ? ORDER BY stream_id LIMIT ?`, [from, upTo, now, SCAN_BATCH]);
      for (const r of rows) {
        if (!roomIds.has(r.room_id)) continue;
        out.push(toRow(r));
        if (limit !== undefined && out.length >= limit) return out;
      }
      if (rows.length < SCAN_BATCH) return out;
      from = Number(rows[rows.length - 1]!.stream_id);
    }
  }

  /** The unexpired sticky events of one room sent by users of `serverName`, by position (a server that joined is sent them). */
  async unexpiredFrom(tx: SqlExecutor, roomId: string, serverName: string, now: number): Promise<StickyRow[]> {
    const rows = await tx.all<Row>(`SELECT ${COLUMNS} FROM sticky_events WHERE room_id = ? AND expires_at > ? ORDER BY stream_id`, [roomId, now]);
    const suffix = ":" + serverName;
    return rows.map(toRow).filter((r) => r.sender.endsWith(suffix));
  }

  /** Deletes the rows expired by `now`; returns how many. */
  async deleteExpired(now: number): Promise<number> {
    return this.sql.transaction(async (tx) => {
      const top = await tx.get<{ m: number | string | null }>(`SELECT MAX(stream_id) AS m FROM sticky_events WHERE expires_at <= ?`, [now]);
      if (top?.m === null || top?.m === undefined) return 0;
      await tx.run(
        `INSERT INTO stream_high_water (stream, position) VALUES ('sticky_events', ?) ON CONFLICT (stream) DO UPDATE SET position = excluded.position WHERE stream_high_water.position < excluded.position`,
        [Number(top.m)],
      );
      return tx.run(`DELETE FROM sticky_events WHERE expires_at <= ?`, [now]);
    });
  }
}
