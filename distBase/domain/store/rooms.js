import { stateKeyOf } from "./state-groups.js";
import { indexableText } from "../text.js";
export class RoomStore {
    sql;
    constructor(sql) {
        this.sql = sql;
    }
    async insertRoom(tx, r, now) {
        await tx.run(`INSERT INTO rooms (room_id, room_version, creator, is_public, created_ts) VALUES (?, ?, ?, ?, ?)`, [r.roomId, r.roomVersion, r.creator, r.isPublic, now]);
    }
    /**
     * Inserts the row of a room first known from its create event, or sets the version and creator of the
     * row an out-of-band membership made (whose version the inviting server claimed).
     */
    async upsertRoom(tx, r, now) {
        await tx.run(`INSERT INTO rooms (room_id, room_version, creator, is_public, created_ts) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (room_id) DO UPDATE SET room_version = excluded.room_version, creator = excluded.creator`, [r.roomId, r.roomVersion, r.creator, r.isPublic, now]);
    }
    /** The row of a room this server holds no state of (an out-of-band membership), unless there is one. */
    async insertRoomIfAbsent(tx, r, now) {
        await tx.run(`INSERT INTO rooms (room_id, room_version, creator, is_public, created_ts) VALUES (?, ?, ?, ?, ?) ON CONFLICT (room_id) DO NOTHING`, [r.roomId, r.roomVersion, r.creator, r.isPublic, now]);
    }
    async getRoom(roomId) {
        const r = await this.sql.get(`SELECT room_id, room_version, creator, is_public FROM rooms WHERE room_id = ?`, [roomId]);
        return r && { roomId: r.room_id, roomVersion: r.room_version, creator: r.creator, isPublic: Boolean(r.is_public) };
    }
    async setPublic(roomId, isPublic, tx = this.sql) {
        await tx.run(`UPDATE rooms SET is_public = ? WHERE room_id = ?`, [isPublic, roomId]);
    }
    async currentState(roomId) {
        const rows = await this.sql.all(`SELECT type, state_key, event_id FROM current_state_events WHERE room_id = ?`, [roomId]);
        return new Map(rows.map((r) => [stateKeyOf(r.type, r.state_key), r.event_id]));
    }
    /** Applies changes to current state: each key gets its new event id, or (null) leaves the state. */
    async changeCurrentState(tx, roomId, changes) {
        for (const [k, eventId] of changes) {
            const sep = k.indexOf("\u0000");
            const type = k.slice(0, sep);
            const stateKey = k.slice(sep + 1);
            if (eventId === null) {
                await tx.run(`DELETE FROM current_state_events WHERE room_id = ? AND type = ? AND state_key = ?`, [roomId, type, stateKey]);
                continue;
            }
            const changed = await tx.run(`UPDATE current_state_events SET event_id = ? WHERE room_id = ? AND type = ? AND state_key = ?`, [eventId, roomId, type, stateKey]);
            if (changed === 0)
                await tx.run(`INSERT INTO current_state_events (room_id, type, state_key, event_id) VALUES (?, ?, ?, ?)`, [roomId, type, stateKey, eventId]);
        }
    }
    async upsertMembership(tx, row) {
        // Display name and avatar come from event content: a value carrying NUL is left out (src/domain/text.ts).
        const m = { ...row, displayname: indexableText(row.displayname), avatarUrl: indexableText(row.avatarUrl) };
        const changed = await tx.run(`UPDATE room_memberships SET membership = ?, event_id = ?, sender = ?, displayname = ?, avatar_url = ?, stream_ordering = ?, forgotten = ? WHERE room_id = ? AND user_id = ?`, [m.membership, m.eventId, m.sender, m.displayname, m.avatarUrl, m.streamOrdering, false, m.roomId, m.userId]);
        if (changed === 0)
            await tx.run(`INSERT INTO room_memberships (room_id, user_id, membership, event_id, sender, displayname, avatar_url, stream_ordering, forgotten) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, [m.roomId, m.userId, m.membership, m.eventId, m.sender, m.displayname, m.avatarUrl, m.streamOrdering, false]);
    }
    async membership(roomId, userId) {
        const r = await this.sql.get(`SELECT * FROM room_memberships WHERE room_id = ? AND user_id = ?`, [roomId, userId]);
        return r && toMembership(r);
    }
    async membersOf(roomId) {
        return (await this.sql.all(`SELECT * FROM room_memberships WHERE room_id = ?`, [roomId])).map(toMembership);
    }
    async roomsOfUser(userId, membership) {
        const rows = await this.sql.all(`SELECT room_id FROM room_memberships WHERE user_id = ? AND membership = ?`, [userId, membership]);
        return rows.map((r) => r.room_id);
    }
    /** The joined members of many rooms (room id → user ids), one query per 500 rooms. */
    async joinedMembersOf(roomIds) {
        const out = new Map();
        for (const chunk of chunks([...new Set(roomIds)])) {
            const rows = await this.sql.all(`SELECT room_id, user_id FROM room_memberships WHERE membership = ? AND room_id IN (${placeholders(chunk.length)})`, ["join", ...chunk]);
            for (const r of rows) {
                const list = out.get(r.room_id);
                if (list)
                    list.push(r.user_id);
                else
                    out.set(r.room_id, [r.user_id]);
            }
        }
        return out;
    }
    async forget(roomId, userId) {
        await this.sql.run(`UPDATE room_memberships SET forgotten = ? WHERE room_id = ? AND user_id = ?`, [true, roomId, userId]);
    }
}
/** IN (...) lists are split into chunks of this many parameters (SQLite's variable limit). */
const CHUNK = 500;
const placeholders = (n) => Array.from({ length: n }, () => "?").join(",");
function chunks(items) {
    const out = [];
    for (let i = 0; i < items.length; i += CHUNK)
        out.push(items.slice(i, i + CHUNK));
    return out;
}
/** Batch reads for faces that show many rooms at once: one query per kind of lookup, never one per room. */
export class RoomBatchReads {
    sql;
    constructor(sql) {
        this.sql = sql;
    }
    /** The rooms among `roomIds` that exist, with `userId`'s membership of each. */
    async roomsWithMembership(userId, roomIds) {
        const out = [];
        for (const chunk of chunks(roomIds)) {
            const rows = await this.sql.all(`SELECT r.room_id, r.room_version, m.membership, m.event_id FROM rooms r
         LEFT JOIN room_memberships m ON m.room_id = r.room_id AND m.user_id = ?
         WHERE r.room_id IN (${placeholders(chunk.length)})`, [userId, ...chunk]);
            for (const r of rows)
                out.push({ roomId: r.room_id, roomVersion: r.room_version, membership: r.membership ?? undefined, membershipEventId: r.event_id ?? undefined });
        }
        return out;
    }
    /** Current state event ids of the given types (state key "") per room: room id → type → event id. */
    async currentStateOfTypes(roomIds, types) {
        const out = new Map();
        for (const chunk of chunks(roomIds)) {
            const rows = await this.sql.all(`SELECT room_id, type, event_id FROM current_state_events
         WHERE state_key = ? AND type IN (${placeholders(types.length)}) AND room_id IN (${placeholders(chunk.length)})`, ["", ...types, ...chunk]);
            for (const row of rows) {
                let m = out.get(row.room_id);
                if (!m)
                    out.set(row.room_id, (m = new Map()));
                m.set(row.type, row.event_id);
            }
        }
        return out;
    }
    /**
     * One page of the rooms where `userId` has one of `memberships` (forgotten rooms left out), newest
     * membership change first, below stream position `before` when given; `limit + 1` rows tell if there is more.
     */
    async membershipPage(userId, memberships, before, limit) {
        const params = [userId, false, ...memberships];
        let where = `user_id = ? AND forgotten = ? AND membership IN (${placeholders(memberships.length)})`;
        if (before !== undefined) {
            where += " AND stream_ordering < ?";
            params.push(before);
        }
        const rows = await this.sql.all(`SELECT room_id, membership, stream_ordering FROM room_memberships WHERE ${where} ORDER BY stream_ordering DESC LIMIT ?`, [...params, limit + 1]);
        return rows.map((x) => ({ roomId: x.room_id, membership: x.membership, streamOrdering: Number(x.stream_ordering) }));
    }
}
function toMembership(r) {
    return {
        roomId: r.room_id,
        userId: r.user_id,
        membership: r.membership,
        eventId: r.event_id,
        sender: r.sender,
        displayname: r.displayname ?? null,
        avatarUrl: r.avatar_url ?? null,
        streamOrdering: Number(r.stream_ordering),
        forgotten: Boolean(r.forgotten),
    };
}
