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
    sql;
    constructor(sql) {
        this.sql = sql;
    }
    async isBlocked(roomId) {
        const r = await this.sql.get(`SELECT user_id FROM blocked_rooms WHERE room_id = ?`, [roomId]);
        return r && { userId: r.user_id };
    }
    async setBlocked(roomId, userId, blocked, now, tx = this.sql) {
        if (!blocked) {
            await tx.run(`DELETE FROM blocked_rooms WHERE room_id = ?`, [roomId]);
            return;
        }
        await tx.run(`INSERT INTO blocked_rooms (room_id, user_id, created_ts) VALUES (?, ?, ?) ON CONFLICT (room_id) DO NOTHING`, [roomId, userId, now]);
    }
    async insertDeletion(d, now) {
        await this.sql.run(`INSERT INTO room_deletions (delete_id, room_id, status, error, result, params, created_ts) VALUES (?, ?, ?, ?, ?, ?, ?)`, [
            d.deleteId, d.roomId, d.status, d.error, JSON.stringify(d.result), d.params, now,
        ]);
    }
    async updateDeletion(deleteId, status, error, result) {
        await this.sql.run(`UPDATE room_deletions SET status = ?, error = ?, result = ? WHERE delete_id = ?`, [status, error, JSON.stringify(result), deleteId]);
    }
    async deletion(deleteId) {
        const r = await this.sql.get(`SELECT * FROM room_deletions WHERE delete_id = ?`, [deleteId]);
        return r && toDeletion(r);
    }
    async deletionsOf(roomId) {
        return (await this.sql.all(`SELECT * FROM room_deletions WHERE room_id = ? ORDER BY created_ts`, [roomId])).map(toDeletion);
    }
    /** Deletions that were running when the server stopped, oldest first. */
    async unfinishedDeletions() {
        return (await this.sql.all(`SELECT * FROM room_deletions WHERE status IN ('scheduled', 'active') ORDER BY created_ts`)).map(toDeletion);
    }
    /** Is a deletion of the room still running? */
    async deletionRunning(roomId) {
        const r = await this.sql.get(`SELECT delete_id FROM room_deletions WHERE room_id = ? AND status IN ('scheduled', 'active')`, [roomId]);
        return r !== undefined;
    }
    /** Deletes everything stored of the room (not the users' own data); one transaction. */
    async purge(roomId) {
        await this.sql.transaction(async (tx) => {
            const searchKey = tx.dialect === "sqlite" ? "rowid" : "stream_ordering";
            await tx.run(`DELETE FROM event_search WHERE ${searchKey} IN (SELECT stream_ordering FROM events WHERE room_id = ?)`, [roomId]);
            await tx.run(`DELETE FROM state_group_entries WHERE state_group IN (SELECT id FROM state_groups WHERE room_id = ?)`, [roomId]);
            await tx.run(`DELETE FROM state_groups WHERE room_id = ?`, [roomId]);
            for (const table of ROOM_TABLES)
                await tx.run(`DELETE FROM ${table} WHERE room_id = ?`, [roomId]);
            await tx.run(`DELETE FROM events WHERE room_id = ?`, [roomId]);
            await tx.run(`DELETE FROM rooms WHERE room_id = ?`, [roomId]);
        });
    }
}
function toDeletion(r) {
    return {
        deleteId: r.delete_id,
        roomId: r.room_id,
        status: r.status,
        error: r.error ?? null,
        result: JSON.parse(r.result),
        params: r.params ?? null,
    };
}
