import { stateKeyOf } from "./state-groups.js";
import { IN_TIMELINE_SQL } from "./events.js";
const CHUNK = 400;
const marks = (n) => Array.from({ length: n }, () => "?").join(",");
function chunks(items) {
    const out = [];
    for (let i = 0; i < items.length; i += CHUNK)
        out.push(items.slice(i, i + CHUNK));
    return out;
}
export class SyncReads {
    sql;
    constructor(sql) {
        this.sql = sql;
    }
    /** Every room `userId` has a membership in, with the room's version. One query. */
    async membershipsOf(userId) {
        const rows = await this.sql.all(`SELECT m.room_id, r.room_version, m.membership, m.event_id, m.stream_ordering, m.forgotten
       FROM room_memberships m JOIN rooms r ON r.room_id = m.room_id WHERE m.user_id = ?`, [userId]);
        return rows.map((r) => ({ roomId: r.room_id, roomVersion: r.room_version, membership: r.membership, eventId: r.event_id, streamOrdering: Number(r.stream_ordering), forgotten: Boolean(r.forgotten) }));
    }
    /**
     * The ids of the newest `perRoom` events of each room with `after < stream_ordering <= upTo`, newest
     * first per room. One query per 400 rooms, each room's part a walk down the (room_id, stream_ordering)
     * index that stops after `perRoom` rows (a LATERAL join on PostgreSQL, a correlated subquery on
     * SQLite): the cost follows what is returned, not the rooms' history (a window over every event of
     * the rooms costs 10x more at 50 events a room).
     */
    async newestEventIds(roomIds, after, upTo, perRoom) {
        const out = new Map();
        for (const chunk of chunks(roomIds)) {
            if (this.sql.dialect === "postgres") {
                const rows = await this.sql.all(`SELECT r.room_id, e.event_id FROM rooms r CROSS JOIN LATERAL (
             SELECT event_id, stream_ordering FROM events
             WHERE room_id = r.room_id AND ${IN_TIMELINE_SQL} AND stream_ordering > ? AND stream_ordering <= ?
             ORDER BY stream_ordering DESC LIMIT ?
           ) e WHERE r.room_id IN (${marks(chunk.length)}) ORDER BY r.room_id, e.stream_ordering DESC`, [after, upTo, perRoom, ...chunk]);
                for (const r of rows) {
                    let list = out.get(r.room_id);
                    if (!list)
                        out.set(r.room_id, (list = []));
                    list.push(r.event_id);
                }
            }
            else {
                const rows = await this.sql.all(`SELECT r.room_id, (SELECT json_group_array(event_id ORDER BY stream_ordering DESC) FROM (
             SELECT event_id, stream_ordering FROM events
             WHERE room_id = r.room_id AND ${IN_TIMELINE_SQL} AND stream_ordering > ? AND stream_ordering <= ?
             ORDER BY stream_ordering DESC LIMIT ?
           )) AS ids FROM rooms r WHERE r.room_id IN (${marks(chunk.length)})`, [after, upTo, perRoom, ...chunk]);
                for (const r of rows) {
                    const ids = r.ids ? JSON.parse(r.ids) : [];
                    if (ids.length > 0)
                        out.set(r.room_id, ids);
                }
            }
        }
        return out;
    }
    /** Current state of many rooms: room id → state key → event id. */
    async currentState(roomIds) {
        const out = new Map();
        for (const id of roomIds)
            out.set(id, new Map());
        for (const chunk of chunks(roomIds)) {
            const rows = await this.sql.all(`SELECT room_id, type, state_key, event_id FROM current_state_events WHERE room_id IN (${marks(chunk.length)})`, chunk);
            for (const r of rows)
                out.get(r.room_id).set(stateKeyOf(r.type, r.state_key), r.event_id);
        }
        return out;
    }
    /**
     * Per room, the state group after its last timeline event at or before stream position `pos` (the
     * state at that position; a room with no such event is absent). One query per 400 rooms, each room's
     * lookup a single step down the (room_id, stream_ordering) index.
     */
    async stateGroupsAt(roomIds, pos) {
        const out = new Map();
        for (const chunk of chunks(roomIds)) {
            const rows = await this.sql.all(`SELECT r.room_id, (SELECT state_group FROM events e WHERE e.room_id = r.room_id AND ${IN_TIMELINE_SQL} AND e.stream_ordering <= ?
                            ORDER BY e.stream_ordering DESC LIMIT 1) AS state_group
         FROM rooms r WHERE r.room_id IN (${marks(chunk.length)})`, [pos, ...chunk]);
            for (const r of rows)
                if (r.state_group !== null)
                    out.set(r.room_id, Number(r.state_group));
        }
        return out;
    }
    /** Joined and invited members of many rooms (for member counts and heroes), oldest membership first. */
    async activeMembers(roomIds) {
        const out = new Map();
        for (const chunk of chunks(roomIds)) {
            const rows = await this.sql.all(`SELECT room_id, user_id, membership FROM room_memberships WHERE membership IN (?, ?) AND room_id IN (${marks(chunk.length)}) ORDER BY stream_ordering`, ["join", "invite", ...chunk]);
            for (const r of rows) {
                let list = out.get(r.room_id);
                if (!list)
                    out.set(r.room_id, (list = []));
                list.push({ userId: r.user_id, membership: r.membership });
            }
        }
        return out;
    }
}
