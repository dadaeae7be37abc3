// Repository of the full-text index of room events (event_search), behind one interface with two
// implementations: SQLite FTS5 (a virtual table whose rowid is the event's stream position, bm25 ranking,
// porter stemming) and PostgreSQL full-text search (a tsvector per event with a GIN index, prefix
// to_tsquery, ts_rank_cd). Both tables are created by hand in the search migration. Filtering by room,
// sender and type joins the events table. Spec: Client-Server API "Server Side Search".
import { write } from "../../storage/sql.js";
import { searchIndexText } from "../text.js";
const placeholders = (n) => Array.from({ length: n }, () => "?").join(",");
/** The WHERE conditions on `e` (events) shared by both dialects: rooms with their bounds, types, senders. */
function eventConditions(q) {
    const params = [];
    const whole = q.rooms.filter((r) => r.upTo === undefined).map((r) => r.roomId);
    const bounded = q.rooms.filter((r) => r.upTo !== undefined);
    const roomParts = [];
    if (whole.length > 0) {
        roomParts.push(`e.room_id IN (${placeholders(whole.length)})`);
        params.push(...whole);
    }
    for (const r of bounded) {
        roomParts.push(`(e.room_id = ? AND e.stream_ordering <= ?)`);
        params.push(r.roomId, r.upTo);
    }
    const parts = [roomParts.length > 0 ? `(${roomParts.join(" OR ")})` : "1 = 0"];
    parts.push(`e.type IN (${placeholders(q.types.length)})`);
    params.push(...q.types);
    if (q.senders) {
        parts.push(q.senders.length > 0 ? `e.sender IN (${placeholders(q.senders.length)})` : "1 = 0");
        params.push(...q.senders);
    }
    if (q.notSenders && q.notSenders.length > 0) {
        parts.push(`e.sender NOT IN (${placeholders(q.notSenders.length)})`);
        params.push(...q.notSenders);
    }
    return { sql: parts.join(" AND "), params };
}
/** The cursor condition and ORDER BY over the columns `rank` and `stream_ordering` of the inner query. */
function pageClause(q) {
    const order = q.orderBy === "rank" ? "rank DESC, stream_ordering DESC" : "stream_ordering DESC";
    if (!q.after)
        return { where: "", order, params: [] };
    if (q.orderBy === "recent")
        return { where: "WHERE stream_ordering < ?", order, params: [q.after.streamOrdering] };
    return {
        where: "WHERE (rank < ? OR (rank = ? AND stream_ordering < ?))",
        order,
        params: [q.after.rank, q.after.rank, q.after.streamOrdering],
    };
}
const toHit = (r) => ({
    streamOrdering: Number(r.stream_ordering),
    eventId: r.event_id,
    roomId: r.room_id,
    sender: r.sender,
    rank: Number(r.rank ?? 0),
});
/** The part both implementations share: which rooms a user's search covers. */
class BaseSearchStore {
    sql;
    constructor(sql) {
        this.sql = sql;
    }
    async scopesOf(userId) {
        const rows = await this.sql.all(`SELECT room_id, membership, stream_ordering FROM room_memberships
       WHERE user_id = ? AND forgotten = ? AND membership IN ('join', 'leave', 'ban')`, [userId, false]);
        return rows.map((r) => r.membership === "join"
            ? { roomId: r.room_id, membership: r.membership }
            : { roomId: r.room_id, membership: r.membership, upTo: Number(r.stream_ordering) });
    }
}
class SqliteSearchStore extends BaseSearchStore {
    async index(tx, entries) {
        if (entries.length > 0)
            await write(tx, `INSERT INTO event_search (rowid, value) VALUES ${entries.map(() => "(?, ?)").join(", ")}`, entries.flatMap((e) => [e.streamOrdering, searchIndexText(e.value)]));
    }
    async remove(tx, roomId, eventIds) {
        if (eventIds.length === 0)
            return;
        await tx.run(`DELETE FROM event_search WHERE rowid IN (SELECT stream_ordering FROM events WHERE room_id = ? AND event_id IN (${placeholders(eventIds.length)}))`, [roomId, ...eventIds]);
    }
    /** FTS5 query syntax: every word a quoted prefix term, implicitly AND-ed. */
    match(words) {
        return words.map((w) => `"${w.replace(/"/g, '""')}"*`).join(" ");
    }
    inner(q) {
        const cond = eventConditions(q);
        return {
            sql: `SELECT e.stream_ordering AS stream_ordering, e.event_id AS event_id, e.room_id AS room_id, e.sender AS sender, -bm25(event_search) AS rank
            FROM event_search JOIN events e ON e.stream_ordering = event_search.rowid
            WHERE event_search MATCH ? AND ${cond.sql}`,
            params: [this.match(q.words), ...cond.params],
        };
    }
    async search(q) {
        if (q.words.length === 0 || q.rooms.length === 0)
            return [];
        const inner = this.inner(q);
        const page = pageClause(q);
        const rows = await this.sql.all(`SELECT * FROM (${inner.sql}) AS hits ${page.where} ORDER BY ${page.order} LIMIT ?`, [
            ...inner.params,
            ...page.params,
            q.limit,
        ]);
        return rows.map(toHit);
    }
    async count(q) {
        if (q.words.length === 0 || q.rooms.length === 0)
            return 0;
        const inner = this.inner(q);
        const r = await this.sql.get(`SELECT COUNT(*) AS n FROM (${inner.sql}) AS hits`, inner.params);
        return Number(r?.n ?? 0);
    }
}
class PostgresSearchStore extends BaseSearchStore {
    async index(tx, entries) {
        if (entries.length > 0)
            await write(tx, `INSERT INTO event_search (stream_ordering, vector) VALUES ${entries.map(() => "(?, to_tsvector('english', ?))").join(", ")} ON CONFLICT DO NOTHING`, entries.flatMap((e) => [e.streamOrdering, searchIndexText(e.value)]));
    }
    async remove(tx, roomId, eventIds) {
        if (eventIds.length === 0)
            return;
        await tx.run(`DELETE FROM event_search WHERE stream_ordering IN (SELECT stream_ordering FROM events WHERE room_id = ? AND event_id IN (${placeholders(eventIds.length)}))`, [roomId, ...eventIds]);
    }
    /** to_tsquery syntax: every word a prefix lexeme (`word:*`), AND-ed (words hold only letters and digits). */
    tsquery(words) {
        return words.map((w) => `${w}:*`).join(" & ");
    }
    inner(q) {
        const cond = eventConditions(q);
        return {
            sql: `SELECT e.stream_ordering AS stream_ordering, e.event_id AS event_id, e.room_id AS room_id, e.sender AS sender,
                   CAST(ts_rank_cd(es.vector, tq.q) AS double precision) AS rank
            FROM event_search es
            JOIN events e ON e.stream_ordering = es.stream_ordering
            CROSS JOIN (SELECT to_tsquery('english', ?) AS q) AS tq
            WHERE es.vector @@ tq.q AND ${cond.sql}`,
            params: [this.tsquery(q.words), ...cond.params],
        };
    }
    async search(q) {
        if (q.words.length === 0 || q.rooms.length === 0)
            return [];
        const inner = this.inner(q);
        const page = pageClause(q);
        const where = page.where.replace(/rank (<|=) \?/g, "rank $1 CAST(? AS double precision)");
        const rows = await this.sql.all(`SELECT * FROM (${inner.sql}) AS hits ${where} ORDER BY ${page.order} LIMIT ?`, [
            ...inner.params,
            ...page.params,
            q.limit,
        ]);
        return rows.map(toHit);
    }
    async count(q) {
        if (q.words.length === 0 || q.rooms.length === 0)
            return 0;
        const inner = this.inner(q);
        const r = await this.sql.get(`SELECT COUNT(*) AS n FROM (${inner.sql}) AS hits`, inner.params);
        return Number(r?.n ?? 0);
    }
}
export function createSearchStore(sql) {
    return sql.dialect === "sqlite" ? new SqliteSearchStore(sql) : new PostgresSearchStore(sql);
}
