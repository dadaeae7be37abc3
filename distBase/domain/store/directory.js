import { indexableText } from "../text.js";
/** The stats columns a state event sets (all state key ""). */
export const STATS_COLUMNS = {
    name: "name",
    topic: "topic",
    canonicalAlias: "canonical_alias",
    avatarUrl: "avatar_url",
    joinRule: "join_rule",
    historyVisibility: "history_visibility",
    guestAccess: "guest_access",
    roomType: "room_type",
};
function toStats(r) {
    const s = (v) => (typeof v === "string" ? v : null);
    return {
        roomId: r.room_id,
        name: s(r.name),
        topic: s(r.topic),
        canonicalAlias: s(r.canonical_alias),
        avatarUrl: s(r.avatar_url),
        joinRule: s(r.join_rule),
        historyVisibility: s(r.history_visibility),
        guestAccess: s(r.guest_access),
        roomType: s(r.room_type),
        joinedMembers: Number(r.joined_members ?? 0),
    };
}
const placeholders = (n) => Array.from({ length: n }, () => "?").join(",");
/** The WHERE condition (over `r`, the rooms table) selecting a list's rooms. */
function listCondition(list) {
    if (list.kind === "network")
        return ["r.room_id IN (SELECT room_id FROM appservice_room_list WHERE appservice_id = ? AND network_id = ?)", [list.appserviceId, list.networkId]];
    if (list.kind === "all")
        return ["(r.is_public = ? OR r.room_id IN (SELECT room_id FROM appservice_room_list))", [true]];
    return ["r.is_public = ?", [true]];
}
export class DirectoryStore {
    sql;
    constructor(sql) {
        this.sql = sql;
    }
    /** Inserts a mapping; false when the alias is taken (nothing written). */
    async insertAlias(tx, a, now) {
        const n = await tx.run(`INSERT INTO room_aliases (alias, room_id, creator, created_ts) VALUES (?, ?, ?, ?) ON CONFLICT (alias) DO NOTHING`, [a.alias, a.roomId, a.creator, now]);
        return n > 0;
    }
    async getAlias(alias) {
        const r = await this.sql.get(`SELECT alias, room_id, creator FROM room_aliases WHERE alias = ?`, [alias]);
        return r && { alias: r.alias, roomId: r.room_id, creator: r.creator };
    }
    /** Deletes a mapping; false when there was none. */
    async deleteAlias(alias) {
        return (await this.sql.run(`DELETE FROM room_aliases WHERE alias = ?`, [alias])) > 0;
    }
    /** The local aliases of a room, oldest first. */
    async aliasesOf(roomId) {
        const rows = await this.sql.all(`SELECT alias FROM room_aliases WHERE room_id = ? ORDER BY created_ts, alias`, [roomId]);
        return rows.map((r) => r.alias);
    }
    /** The local aliases of many rooms in one query: room id → aliases (oldest first). */
    async aliasesOfRooms(roomIds) {
        const out = new Map();
        for (let i = 0; i < roomIds.length; i += 500) {
            const chunk = roomIds.slice(i, i + 500);
            const rows = await this.sql.all(`SELECT alias, room_id FROM room_aliases WHERE room_id IN (${placeholders(chunk.length)}) ORDER BY created_ts, alias`, chunk);
            for (const r of rows) {
                const list = out.get(r.room_id);
                if (list)
                    list.push(r.alias);
                else
                    out.set(r.room_id, [r.alias]);
            }
        }
        return out;
    }
    /** Points every alias of `from` at `to` (a room upgrade). */
    async moveAliases(tx, from, to) {
        await tx.run(`UPDATE room_aliases SET room_id = ? WHERE room_id = ?`, [to, from]);
    }
    // ---- directory stats
    async ensureStatsRow(tx, roomId) {
        await tx.run(`INSERT INTO room_directory_stats (room_id, joined_members) VALUES (?, 0) ON CONFLICT (room_id) DO NOTHING`, [roomId]);
    }
    async setStats(tx, roomId, fields) {
        const keys = Object.keys(fields);
        if (keys.length === 0)
            return;
        await tx.run(`UPDATE room_directory_stats SET ${keys.map((k) => `${STATS_COLUMNS[k]} = ?`).join(", ")} WHERE room_id = ?`, 
        // Text from event content: a value carrying NUL is left out, as Synapse does (src/domain/text.ts).
        [...keys.map((k) => indexableText(fields[k])), roomId]);
    }
    /** Recounts the joined members from room_memberships (inside the commit that changed them). */
    async recountJoined(tx, roomId) {
        await tx.run(`UPDATE room_directory_stats SET joined_members = (SELECT COUNT(*) FROM room_memberships WHERE room_id = ? AND membership = ?) WHERE room_id = ?`, [roomId, "join", roomId]);
    }
    /** Published rooms that have no stats row yet (rooms created before the directory existed). */
    async publishedWithoutStats() {
        const rows = await this.sql.all(`SELECT r.room_id FROM rooms r LEFT JOIN room_directory_stats d ON d.room_id = r.room_id WHERE r.is_public = ? AND d.room_id IS NULL`, [true]);
        return rows.map((r) => r.room_id);
    }
    /** One page of published rooms in directory order (most joined members first, then room id). */
    async publishedPage(q) {
        const [listed, listParams] = listCondition(q.list ?? { kind: "main" });
        const where = [listed];
        const params = [...listParams];
        if (q.search) {
            const like = `%${q.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
            where.push(`(LOWER(d.name) LIKE ? ESCAPE '\\' OR LOWER(d.topic) LIKE ? ESCAPE '\\' OR LOWER(d.canonical_alias) LIKE ? ESCAPE '\\' OR LOWER(d.room_id) LIKE ? ESCAPE '\\')`);
            params.push(like, like, like, like);
        }
        if (q.roomTypes) {
            const named = q.roomTypes.filter((t) => t !== null);
            const parts = [];
            if (named.length > 0) {
                parts.push(`d.room_type IN (${placeholders(named.length)})`);
                params.push(...named);
            }
            if (q.roomTypes.includes(null))
                parts.push("d.room_type IS NULL");
            where.push(parts.length > 0 ? `(${parts.join(" OR ")})` : "1 = 0");
        }
        let order = "d.joined_members DESC, d.room_id ASC";
        if (q.after) {
            where.push("(d.joined_members < ? OR (d.joined_members = ? AND d.room_id > ?))");
            params.push(q.after.joinedMembers, q.after.joinedMembers, q.after.roomId);
        }
        else if (q.before) {
            where.push("(d.joined_members > ? OR (d.joined_members = ? AND d.room_id < ?))");
            params.push(q.before.joinedMembers, q.before.joinedMembers, q.before.roomId);
            order = "d.joined_members ASC, d.room_id DESC";
        }
        const rows = await this.sql.all(`SELECT d.* FROM room_directory_stats d JOIN rooms r ON r.room_id = d.room_id WHERE ${where.join(" AND ")} ORDER BY ${order} LIMIT ?`, [...params, q.limit]);
        const out = rows.map(toStats);
        return q.before ? out.reverse() : out;
    }
    /** How many rooms are published in a list (the estimate /publicRooms reports). */
    async countPublished(list = { kind: "main" }) {
        const [listed, params] = listCondition(list);
        const r = await this.sql.get(`SELECT COUNT(*) AS n FROM rooms r WHERE ${listed}`, params);
        return Number(r?.n ?? 0);
    }
    /** Lists (or unlists) a room in an application service's network directory. */
    async setNetworkListing(appserviceId, networkId, roomId, listed) {
        if (listed)
            await this.sql.run(`INSERT INTO appservice_room_list (appservice_id, network_id, room_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, [appserviceId, networkId, roomId]);
        else
            await this.sql.run(`DELETE FROM appservice_room_list WHERE appservice_id = ? AND network_id = ? AND room_id = ?`, [appserviceId, networkId, roomId]);
    }
    async hasStats(roomId) {
        return (await this.sql.get(`SELECT room_id FROM room_directory_stats WHERE room_id = ?`, [roomId])) !== undefined;
    }
}
