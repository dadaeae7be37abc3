// Repository of read receipts (receipts): the latest receipt of a user per room, receipt type and thread,
// each write moving the receipts stream (stream_id). Writes are serialized in this process so positions
// commit in order (a reader never sees position n+1 before n). Raw SQL: sync reads it on every request.
// Spec: Client-Server API "Receipts".
import type { Param, Sql } from "../../storage/sql.ts";
import { idAllocator, WrittenMax, type IdAllocator } from "./ids.ts";
import { KeyedLanes } from "../rooms/lanes.ts";

export interface ReceiptRow {
  roomId: string;
  receiptType: string;
  userId: string;
  /** "" for an unthreaded receipt. */
  threadId: string;
  eventId: string;
  ts: number;
  streamId: number;
}

interface Row {
  room_id: string;
  receipt_type: string;
  user_id: string;
  thread_id: string;
  event_id: string;
  data: string;
  stream_id: number | string;
}

const CHUNK = 500;
const marks = (n: number) => Array.from({ length: n }, () => "?").join(",");

function toRow(r: Row): ReceiptRow {
  const data = JSON.parse(r.data) as { ts?: number };
  return { roomId: r.room_id, receiptType: r.receipt_type, userId: r.user_id, threadId: r.thread_id, eventId: r.event_id, ts: Number(data.ts ?? 0), streamId: Number(r.stream_id) };
}

export class ReceiptStore {
  private readonly streamIds: IdAllocator;
  private readonly position: WrittenMax;
  private readonly lane = new KeyedLanes();

  constructor(private readonly sql: Sql) {
    this.streamIds = idAllocator(sql, "receipts", "stream_id", "receipts_stream_seq");
    this.position = new WrittenMax(async () => Number((await sql.get<{ m: number | string | null }>(`SELECT MAX(stream_id) AS m FROM receipts`))?.m ?? 0));
  }

  currentPosition(): number | Promise<number> {
    return this.position.current();
  }

  /** Another process wrote receipts up to `position` (cluster/replication.ts). */
  writtenElsewhere(position: number): void {
    this.position.advance(position);
  }

  async get(roomId: string, receiptType: string, userId: string, threadId: string): Promise<ReceiptRow | undefined> {
    const r = await this.sql.get<Row>(`SELECT * FROM receipts WHERE room_id = ? AND receipt_type = ? AND user_id = ? AND thread_id = ?`, [roomId, receiptType, userId, threadId]);
    return r ? toRow(r) : undefined;
  }

  /**
   * Writes (replaces) the receipt of (room, type, user, thread) unless `keep(existing)` says the stored one
   * stays; returns the new stream position, or undefined when nothing was written.
   */
  async put(row: Omit<ReceiptRow, "streamId">, keep?: (existing: ReceiptRow) => Promise<boolean>): Promise<number | undefined> {
    return this.lane.run("receipts", async () => {
      const existing = await this.get(row.roomId, row.receiptType, row.userId, row.threadId);
      if (existing && keep && (await keep(existing))) return undefined;
      const data = JSON.stringify({ ts: row.ts });
      const pos = await this.sql.transaction(async (tx) => {
        const id = await this.streamIds.next(tx);
        const key = [row.roomId, row.receiptType, row.userId, row.threadId];
        const changed = await tx.run(`UPDATE receipts SET event_id = ?, data = ?, stream_id = ? WHERE room_id = ? AND receipt_type = ? AND user_id = ? AND thread_id = ?`, [row.eventId, data, id, ...key]);
        if (changed === 0) await tx.run(`INSERT INTO receipts (room_id, receipt_type, user_id, thread_id, event_id, data, stream_id) VALUES (?, ?, ?, ?, ?, ?, ?)`, [...key.slice(0, 3), row.threadId, row.eventId, data, id]);
        return id;
      });
      this.position.advance(pos);
      return pos;
    });
  }

  /**
   * Receipts in these rooms with positions in (after, upTo] (all when `after` is undefined) that `viewer`
   * may see: everyone's m.read, only their own m.read.private. One query per 500 rooms.
   */
  async inRooms(roomIds: readonly string[], after: number | undefined, upTo: number, viewer: string): Promise<ReceiptRow[]> {
    const out: ReceiptRow[] = [];
    const ids = [...roomIds];
    for (let i = 0; i < ids.length; i += CHUNK) {
      const chunk = ids.slice(i, i + CHUNK);
      const params: Param[] = [...chunk, after ?? 0, upTo, viewer];
      const rows = await this.sql.all<Row>(
        `SELECT * FROM receipts WHERE room_id IN (${marks(chunk.length)}) AND stream_id > ? AND stream_id <= ?
         AND (receipt_type = 'm.read' OR user_id = ?) ORDER BY stream_id`,
        params,
      );
      for (const r of rows) out.push(toRow(r));
    }
    return out;
  }
}
