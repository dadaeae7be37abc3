const CHUNK = 200;
function valuesList(n, cols) {
    const row = `(${Array.from({ length: cols }, () => "?").join(", ")})`;
    return Array.from({ length: n }, () => row).join(", ");
}
export class PushNotificationStore {
    sql;
    constructor(sql) {
        this.sql = sql;
    }
    async insert(tx, events, exceptions) {
        for (let i = 0; i < events.length; i += CHUNK) {
            const chunk = events.slice(i, i + CHUNK);
            await tx.run(`INSERT INTO push_events (stream_ordering, event_id, room_id, thread_id, sender, notif, highlight, actions, ts) VALUES ${valuesList(chunk.length, 9)}`, chunk.flatMap((e) => [e.streamOrdering, e.eventId, e.roomId, e.threadId, e.sender, e.notif, e.highlight, e.actions, e.ts]));
        }
        for (let i = 0; i < exceptions.length; i += CHUNK) {
            const chunk = exceptions.slice(i, i + CHUNK);
            await tx.run(`INSERT INTO push_exceptions (user_id, stream_ordering, room_id, notif, highlight, actions) VALUES ${valuesList(chunk.length, 6)}`, chunk.flatMap((x) => [x.userId, x.streamOrdering, x.roomId, x.notif, x.highlight, x.actions]));
        }
    }
    async openSpan(tx, userId, roomId, joinedAt) {
        await tx.run(`INSERT INTO push_member_spans (user_id, room_id, joined_at, left_at) VALUES (?, ?, ?, NULL)`, [userId, roomId, joinedAt]);
    }
    async closeSpan(tx, userId, roomId, leftAt) {
        await tx.run(`UPDATE push_member_spans SET left_at = ? WHERE user_id = ? AND room_id = ? AND left_at IS NULL`, [leftAt, userId, roomId]);
    }
    /** The start of the user's current membership span in each room (rooms they are joined to). */
    async joinedSince(userId, roomIds) {
        const out = new Map();
        for (let i = 0; i < roomIds.length; i += 500) {
            const chunk = roomIds.slice(i, i + 500);
            const rows = await this.sql.all(`SELECT room_id, joined_at FROM push_member_spans WHERE user_id = ? AND left_at IS NULL AND room_id IN (${chunk.map(() => "?").join(",")})`, [userId, ...chunk]);
            for (const r of rows)
                out.set(r.room_id, Math.max(out.get(r.room_id) ?? 0, Number(r.joined_at)));
        }
        return out;
    }
    /** The user's read receipts (m.read and m.read.private, the later of the two) in these rooms, by thread. */
    async readUpTo(userId, roomIds) {
        const out = new Map();
        for (let i = 0; i < roomIds.length; i += 500) {
            const chunk = roomIds.slice(i, i + 500);
            const rows = await this.sql.all(`SELECT r.room_id, r.thread_id, MAX(e.stream_ordering) AS pos FROM receipts r JOIN events e ON e.event_id = r.event_id
         WHERE r.user_id = ? AND r.receipt_type IN ('m.read', 'm.read.private') AND r.room_id IN (${chunk.map(() => "?").join(",")})
         GROUP BY r.room_id, r.thread_id`, [userId, ...chunk]);
            for (const r of rows) {
                let m = out.get(r.room_id);
                if (!m)
                    out.set(r.room_id, (m = new Map()));
                m.set(r.thread_id, Number(r.pos));
            }
        }
        return out;
    }
    /**
     * Unread notification and highlight counts per (room, thread) for `userId`: events after `bounds[room]`
     * (their membership start or unthreaded receipt, the later) and after the thread's own receipt when
     * `threadBounds` has one, not sent by the user. One query per 200 rooms.
     */
    async unreadCounts(userId, bounds, threadBounds) {
        const out = [];
        const rooms = [...bounds];
        for (let i = 0; i < rooms.length; i += CHUNK) {
            const chunk = rooms.slice(i, i + CHUNK);
            const inChunk = new Set(chunk.map(([r]) => r));
            const threads = threadBounds.filter((t) => inChunk.has(t.roomId));
            const params = chunk.flatMap(([r, b]) => [r, b]);
            let threadJoin = "";
            let threadWhere = "";
            let cte = `b(room_id, bound) AS (VALUES ${chunk.map(() => "(CAST(? AS TEXT), CAST(? AS BIGINT))").join(", ")})`;
            if (threads.length > 0) {
                cte += `, t(room_id, thread_id, bound) AS (VALUES ${threads.map(() => "(CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS BIGINT))").join(", ")})`;
                params.push(...threads.flatMap((t) => [t.roomId, t.threadId, t.bound]));
                threadJoin = "LEFT JOIN t ON t.room_id = e.room_id AND t.thread_id = e.thread_id";
                threadWhere = "AND (t.bound IS NULL OR e.stream_ordering > t.bound)";
            }
            params.push(userId, userId);
            const rows = await this.sql.all(`WITH ${cte}
         SELECT e.room_id, e.thread_id,
           SUM(CASE WHEN COALESCE(x.notif, e.notif) THEN 1 ELSE 0 END) AS n,
           SUM(CASE WHEN COALESCE(x.highlight, e.highlight) THEN 1 ELSE 0 END) AS h
         FROM b JOIN push_events e ON e.room_id = b.room_id AND e.stream_ordering > b.bound
         ${threadJoin}
         LEFT JOIN push_exceptions x ON x.user_id = ? AND x.stream_ordering = e.stream_ordering
         WHERE e.sender <> ? ${threadWhere}
         GROUP BY e.room_id, e.thread_id`, params);
            for (const r of rows)
                out.push({ roomId: r.room_id, threadId: r.thread_id, notifications: Number(r.n), highlights: Number(r.h) });
        }
        return out;
    }
    /**
     * The user's notifications (notifying outcomes; highlights only with `onlyHighlight`) in stream order:
     * newest first below `before`, or oldest first above `after`; at most `limit`. Two queries: events whose
     * common outcome applied to the user (a member then, no exception) and the user's own exceptions.
     */
    async list(userId, opts) {
        const desc = opts.after === undefined;
        const cmp = desc ? `< ?` : `> ?`;
        const pos = desc ? (opts.before ?? Number.MAX_SAFE_INTEGER) : opts.after;
        const order = desc ? "DESC" : "ASC";
        const which = opts.onlyHighlight ? "highlight" : "notif";
        const base = await this.sql.all(`SELECT e.stream_ordering, e.event_id, e.room_id, e.thread_id, e.actions, e.highlight, e.ts
       FROM push_member_spans m JOIN push_events e ON e.room_id = m.room_id AND e.stream_ordering > m.joined_at AND (m.left_at IS NULL OR e.stream_ordering <= m.left_at)
       WHERE m.user_id = ? AND e.${which} = ? AND e.sender <> ? AND e.stream_ordering ${cmp}
         AND NOT EXISTS (SELECT 1 FROM push_exceptions x WHERE x.user_id = ? AND x.stream_ordering = e.stream_ordering)
       ORDER BY e.stream_ordering ${order} LIMIT ?`, [userId, true, userId, pos, userId, opts.limit]);
        const own = await this.sql.all(`SELECT x.stream_ordering, e.event_id, e.room_id, e.thread_id, x.actions, x.highlight, e.ts
       FROM push_exceptions x JOIN push_events e ON e.stream_ordering = x.stream_ordering
       WHERE x.user_id = ? AND x.${which} = ? AND x.stream_ordering ${cmp}
       ORDER BY x.stream_ordering ${order} LIMIT ?`, [userId, true, pos, opts.limit]);
        const rows = [...base, ...own].map((r) => ({
            streamOrdering: Number(r.stream_ordering),
            eventId: String(r.event_id),
            roomId: String(r.room_id),
            threadId: String(r.thread_id),
            actions: String(r.actions),
            highlight: Boolean(r.highlight),
            ts: Number(r.ts),
        }));
        rows.sort((a, b) => (desc ? b.streamOrdering - a.streamOrdering : a.streamOrdering - b.streamOrdering));
        return rows.slice(0, opts.limit);
    }
}
