import { idAllocator } from "./ids.js";
export class AccountDataStore {
    sql;
    streamIds;
    constructor(sql) {
        this.sql = sql;
        this.streamIds = idAllocator(sql, "account_data", "stream_id", "account_data_stream_seq");
    }
    /** The stream's persisted-up-to position (ids.ts). */
    async currentPosition() {
        return this.streamIds.current();
    }
    /** Writes (replaces) one entry; returns its new stream position. */
    async put(userId, roomId, type, content) {
        const json = JSON.stringify(content);
        return this.sql.transaction(async (tx) => {
            const id = await this.streamIds.next(tx);
            const changed = await tx.run(`UPDATE account_data SET content = ?, stream_id = ? WHERE user_id = ? AND room_id = ? AND type = ?`, [json, id, userId, roomId, type]);
            if (changed === 0)
                await tx.run(`INSERT INTO account_data (user_id, room_id, type, content, stream_id) VALUES (?, ?, ?, ?, ?)`, [userId, roomId, type, json, id]);
            return id;
        });
    }
    async get(userId, roomId, type) {
        const r = await this.sql.get(`SELECT content FROM account_data WHERE user_id = ? AND room_id = ? AND type = ?`, [userId, roomId, type]);
        return r ? JSON.parse(r.content) : undefined;
    }
    /** Entries of `userId` changed in (after, upTo] (all of them when `after` is undefined). One query. */
    async changed(userId, after, upTo) {
        const rows = await this.sql.all(`SELECT room_id, type, content, stream_id FROM account_data WHERE user_id = ? AND stream_id > ? AND stream_id <= ? ORDER BY stream_id`, [userId, after ?? 0, upTo]);
        return rows.map((r) => ({ roomId: r.room_id, type: r.type, content: JSON.parse(r.content), streamId: Number(r.stream_id) }));
    }
}
