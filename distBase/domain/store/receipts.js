import { idAllocator } from "./ids.js";
import { KeyedLanes } from "../rooms/lanes.js";
const CHUNK = 500;
const marks = (n) => Array.from({ length: n }, () => "?").join(",");
function toRow(r) {
    const data = JSON.parse(r.data);
    return { roomId: r.room_id, receiptType: r.receipt_type, userId: r.user_id, threadId: r.thread_id, eventId: r.event_id, ts: Number(data.ts ?? 0), streamId: Number(r.stream_id) };
}
export class ReceiptStore {
    sql;
    streamIds;
    position;
    lane = new KeyedLanes();
    constructor(sql) {
        this.sql = sql;
        this.streamIds = idAllocator(sql, "receipts", "stream_id", "receipts_stream_seq");
    }
    async currentPosition() {
        this.position ??= this.sql.get(`SELECT MAX(stream_id) AS m FROM receipts`).then((r) => Number(r?.m ?? 0));
        return this.position;
    }
    async get(roomId, receiptType, userId, threadId) {
        const r = await this.sql.get(`SELECT * FROM receipts WHERE room_id = ? AND receipt_type = ? AND user_id = ? AND thread_id = ?`, [roomId, receiptType, userId, threadId]);
        return r ? toRow(r) : undefined;
    }
    /**
     * Writes (replaces) the receipt of (room, type, user, thread) unless `keep(existing)` says the stored one
     * stays; returns the new stream position, or undefined when nothing was written.
     */
    async put(row, keep) {
        return this.lane.run("receipts", async () => {
            const existing = await this.get(row.roomId, row.receiptType, row.userId, row.threadId);
            if (existing && keep && (await keep(existing)))
                return undefined;
            const data = JSON.stringify({ ts: row.ts });
            const pos = await this.sql.transaction(async (tx) => {
                const id = await this.streamIds.next(tx);
                const key = [row.roomId, row.receiptType, row.userId, row.threadId];
                const changed = await tx.run(`UPDATE receipts SET event_id = ?, data = ?, stream_id = ? WHERE room_id = ? AND receipt_type = ? AND user_id = ? AND thread_id = ?`, [row.eventId, data, id, ...key]);
                if (changed === 0)
                    await tx.run(`INSERT INTO receipts (room_id, receipt_type, user_id, thread_id, event_id, data, stream_id) VALUES (?, ?, ?, ?, ?, ?, ?)`, [...key.slice(0, 3), row.threadId, row.eventId, data, id]);
                return id;
            });
            if (pos > (await this.currentPosition()))
                this.position = Promise.resolve(pos);
            return pos;
        });
    }
    /**
     * Receipts in these rooms with positions in (after, upTo] (all when `after` is undefined) that `viewer`
     * may see: everyone's m.read, only their own m.read.private. One query per 500 rooms.
     */
    async inRooms(roomIds, after, upTo, viewer) {
        const out = [];
        const ids = [...roomIds];
        for (let i = 0; i < ids.length; i += CHUNK) {
            const chunk = ids.slice(i, i + CHUNK);
            const params = [...chunk, after ?? 0, upTo, viewer];
            const rows = await this.sql.all(`SELECT * FROM receipts WHERE room_id IN (${marks(chunk.length)}) AND stream_id > ? AND stream_id <= ?
         AND (receipt_type = 'm.read' OR user_id = ?) ORDER BY stream_id`, params);
            for (const r of rows)
                out.push(toRow(r));
        }
        return out;
    }
}
