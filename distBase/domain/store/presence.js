import { idAllocator } from "./ids.js";
import { KeyedLanes } from "../rooms/lanes.js";
import { LruCache } from "../cache/lru.js";
const CHUNK = 500;
const marks = (n) => Array.from({ length: n }, () => "?").join(",");
function toRow(r) {
    return {
        userId: r.user_id,
        state: r.state,
        statusMsg: r.status_msg,
        lastActiveTs: Number(r.last_active_ts),
        lastUserSyncTs: Number(r.last_user_sync_ts),
        currentlyActive: Boolean(r.currently_active),
        streamId: Number(r.stream_id),
        lastFederationUpdateTs: Number(r.last_federation_update_ts ?? 0),
    };
}
export class PresenceStore {
    sql;
    streamIds;
    position;
    lane = new KeyedLanes();
    /** Rows by user (null: no row), kept in step by `update`, the only writer: every /sync reads its user's row. */
    rows;
    constructor(sql, rows = new LruCache("presence_rows", 50_000)) {
        this.sql = sql;
        this.rows = rows;
        this.streamIds = idAllocator(sql, "presence", "stream_id", "presence_stream_seq");
    }
    async currentPosition() {
        this.position ??= this.sql.get(`SELECT MAX(stream_id) AS m FROM presence`).then((r) => Number(r?.m ?? 0));
        return this.position;
    }
    async get(userId) {
        const hit = this.rows.get(userId);
        if (hit !== undefined)
            return hit ?? undefined;
        const writes = this.writes;
        const r = await this.sql.get(`SELECT * FROM presence WHERE user_id = ?`, [userId]);
        const row = r ? toRow(r) : undefined;
        // Writes run in the lane and refresh the entry after commit; a read that raced any write is not kept.
        if (writes === this.writes && this.writing === 0)
            this.rows.set(userId, row ?? null);
        return row;
    }
    writes = 0;
    writing = 0;
    /**
     * Read-modify-write of one user's presence, one at a time: `update(current)` returns the new row (without
     * stream id) or undefined to leave it. Returns the written row with its new position, or undefined.
     */
    async update(userId, update) {
        return this.lane.run("presence", async () => {
            const next = update(await this.get(userId));
            if (!next)
                return undefined;
            this.writes++;
            this.writing++;
            this.rows.delete(userId);
            const pos = await this.sql.transaction(async (tx) => {
                const id = await this.streamIds.next(tx);
                const vals = [next.state, next.statusMsg, next.lastActiveTs, next.lastUserSyncTs, next.currentlyActive, id, next.lastFederationUpdateTs ?? 0];
                const changed = await tx.run(`UPDATE presence SET state = ?, status_msg = ?, last_active_ts = ?, last_user_sync_ts = ?, currently_active = ?, stream_id = ?, last_federation_update_ts = ? WHERE user_id = ?`, [...vals, userId]);
                if (changed === 0)
                    await tx.run(`INSERT INTO presence (state, status_msg, last_active_ts, last_user_sync_ts, currently_active, stream_id, last_federation_update_ts, user_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, [...vals, userId]);
                return id;
            }).finally(() => {
                this.writes++;
                this.writing--;
            });
            if (pos > (await this.currentPosition()))
                this.position = Promise.resolve(pos);
            const row = { ...next, lastFederationUpdateTs: next.lastFederationUpdateTs ?? 0, streamId: pos };
            this.rows.set(userId, row);
            return row;
        });
    }
    /** Presence rows of these users changed in (after, upTo] (all when `after` is undefined). One query per 500 users. */
    async ofUsers(userIds, after, upTo) {
        const out = [];
        const ids = [...userIds];
        for (let i = 0; i < ids.length; i += CHUNK) {
            const chunk = ids.slice(i, i + CHUNK);
            const rows = await this.sql.all(`SELECT * FROM presence WHERE user_id IN (${marks(chunk.length)}) AND stream_id > ? AND stream_id <= ? ORDER BY stream_id`, [...chunk, after ?? 0, upTo]);
            for (const r of rows)
                out.push(toRow(r));
        }
        return out;
    }
    /** Users changed in (after, upTo], whoever they are (an incremental sync's candidates). */
    async changed(after, upTo) {
        const rows = await this.sql.all(`SELECT * FROM presence WHERE stream_id > ? AND stream_id <= ? ORDER BY stream_id`, [after, upTo]);
        return rows.map(toRow);
    }
    /** Online users of `serverName` idle since before `ts` (the idle sweep's candidates: remote servers sweep their own). */
    async idleOnline(ts, serverName) {
        const rows = await this.sql.all(`SELECT user_id FROM presence WHERE state = 'online' AND last_active_ts < ? AND user_id LIKE ?`, [ts, `%:${serverName}`]);
        return rows.map((r) => r.user_id);
    }
    /** Users not offline, whoever they are (the federation presence ping picks the local ones). */
    async notOffline() {
        return (await this.sql.all(`SELECT * FROM presence WHERE state <> 'offline'`)).map(toRow);
    }
    /** Remote users not offline whose server has not told us of them since `ts`. */
    async staleRemote(ts) {
        const rows = await this.sql.all(`SELECT user_id FROM presence WHERE state <> 'offline' AND last_federation_update_ts > 0 AND last_federation_update_ts < ?`, [ts]);
        return rows.map((r) => r.user_id);
    }
    /** Notes that remote users' servers told us of them at `ts`, their presence unchanged (no stream move). */
    async touchFederationUpdate(userIds, ts) {
        if (userIds.length === 0)
            return;
        await this.lane.run("presence", async () => {
            this.writes++; // a read racing this write does not cache what it read
            for (let i = 0; i < userIds.length; i += CHUNK) {
                const chunk = userIds.slice(i, i + CHUNK);
                await this.sql.run(`UPDATE presence SET last_federation_update_ts = ? WHERE user_id IN (${marks(chunk.length)})`, [ts, ...chunk]);
            }
            for (const id of userIds) {
                const hit = this.rows.get(id);
                if (hit)
                    this.rows.set(id, { ...hit, lastFederationUpdateTs: ts });
            }
        });
    }
}
