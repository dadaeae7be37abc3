import { LruCache } from "../cache/lru.js";
import { idAllocator } from "./ids.js";
const MAX_CHAIN = 50;
export function stateKeyOf(type, stateKey) {
    return `${type}\u0000${stateKey}`;
}
function keepsEveryKey(before, after) {
    if (after.size < before.size)
        return false;
    for (const k of before.keys())
        if (!after.has(k))
            return false;
    return true;
}
/** Writes a group's entries, 100 rows a statement. */
async function insertEntries(tx, group, entries) {
    for (let i = 0; i < entries.length; i += 100) {
        const chunk = entries.slice(i, i + 100);
        const params = [];
        for (const [k, v] of chunk) {
            const sep = k.indexOf("\u0000");
            params.push(group, k.slice(0, sep), k.slice(sep + 1), v);
        }
        await tx.run(`INSERT INTO state_group_entries (state_group, type, state_key, event_id) VALUES ${chunk.map(() => "(?, ?, ?, ?)").join(", ")}`, params);
    }
}
export class StateGroupStore {
    sql;
    cache;
    chainLength;
    ids;
    constructor(sql, cache, 
    /** Chain length per group (read from storage when not here). */
    chainLength = new LruCache("state_group_chain_lengths", 50_000)) {
        this.sql = sql;
        this.cache = cache;
        this.chainLength = chainLength;
        this.ids = idAllocator(sql, "state_groups", "id", "state_group_id_seq");
    }
    /**
     * Stores the state `full` for `eventId` as a delta over `prev` (whose state is `prevState`) when the
     * chain is short enough, else as a snapshot. Returns the new group's id.
     */
    async create(tx, roomId, eventId, full, prev) {
        const id = await this.ids.next(tx);
        let entries;
        let prevGroup = null;
        let chain = 0;
        const prevChain = prev ? await this.chainOf(tx, prev.id) : undefined;
        // A delta only adds or replaces entries: a state that lost one of prev's keys (state resolution can
        // drop a key) is stored whole.
        if (prev && prevChain !== undefined && prevChain < MAX_CHAIN && keepsEveryKey(prev.state, full)) {
            prevGroup = prev.id;
            chain = prevChain + 1;
            entries = [...full].filter(([k, v]) => prev.state.get(k) !== v);
        }
        else {
            entries = [...full];
        }
        await tx.run(`INSERT INTO state_groups (id, room_id, event_id, prev_group, chain_length) VALUES (?, ?, ?, ?, ?)`, [id, roomId, eventId, prevGroup, chain]);
        await insertEntries(tx, id, entries);
        this.chainLength.set(id, chain);
        this.cache.set(id, full);
        return id;
    }
    /**
     * Adds `entries` to every snapshot group of the room that lacks their keys (a partial-state room's
     * groups, completed once its full state is known; deltas inherit them through their snapshot). The
     * room's groups are evicted from the cache once `tx` commits.
     */
    async completeSnapshots(tx, roomId, entries) {
        if (entries.size === 0)
            return;
        const groups = await tx.all(`SELECT id, prev_group FROM state_groups WHERE room_id = ?`, [roomId]);
        for (const g of groups) {
            if (g.prev_group !== null)
                continue;
            const id = Number(g.id);
            const have = new Set((await tx.all(`SELECT type, state_key FROM state_group_entries WHERE state_group = ?`, [id])).map((r) => stateKeyOf(r.type, r.state_key)));
            await insertEntries(tx, id, [...entries].filter(([k]) => !have.has(k)));
        }
        const ids = new Set(groups.map((g) => Number(g.id)));
        const evict = () => this.cache.deleteWhere((_v, k) => ids.has(k));
        evict();
        tx.onSettled?.(evict);
    }
    async chainOf(tx, id) {
        const known = this.chainLength.get(id);
        if (known !== undefined)
            return known;
        const r = await tx.get(`SELECT chain_length FROM state_groups WHERE id = ?`, [id]);
        if (r)
            this.chainLength.set(id, Number(r.chain_length));
        return r ? Number(r.chain_length) : undefined;
    }
    /** The full state of a group, resolving deltas down to the snapshot. */
    async get(id) {
        return this.cache.get(id) ?? (await this.getMany([id])).get(id);
    }
    /**
     * The full states of several groups: their delta chains are walked level by level (one query per
     * level for all of them, at most MAX_CHAIN), then every entry is read in one query per 500 groups.
     */
    async getMany(ids) {
        const out = new Map();
        const prevOf = new Map();
        // Cached groups the chains reach, held here (the cache may evict them while the reads run).
        const bases = new Map();
        let frontier = [];
        for (const id of new Set(ids)) {
            const hit = this.cache.get(id);
            if (hit)
                out.set(id, hit);
            else
                frontier.push(id);
        }
        const wanted = [...frontier];
        while (frontier.length > 0) {
            const next = [];
            for (let i = 0; i < frontier.length; i += 500) {
                const chunk = frontier.slice(i, i + 500);
                const rows = await this.sql.all(`SELECT id, prev_group FROM state_groups WHERE id IN (${chunk.map(() => "?").join(",")})`, chunk);
                for (const r of rows) {
                    const prev = r.prev_group === null ? null : Number(r.prev_group);
                    prevOf.set(Number(r.id), prev);
                    if (prev === null || prevOf.has(prev) || bases.has(prev))
                        continue;
                    const cached = this.cache.get(prev);
                    if (cached)
                        bases.set(prev, cached);
                    else
                        next.push(prev);
                }
            }
            for (const id of frontier)
                if (!prevOf.has(id))
                    throw new Error(`unknown state group ${id}`);
            frontier = [...new Set(next)];
        }
        const entries = new Map();
        const toRead = [...prevOf.keys()];
        for (let i = 0; i < toRead.length; i += 500) {
            const chunk = toRead.slice(i, i + 500);
            const rows = await this.sql.all(`SELECT state_group, type, state_key, event_id FROM state_group_entries WHERE state_group IN (${chunk.map(() => "?").join(",")})`, chunk);
            for (const r of rows) {
                const g = Number(r.state_group);
                let list = entries.get(g);
                if (!list)
                    entries.set(g, (list = []));
                list.push([stateKeyOf(r.type, r.state_key), r.event_id]);
            }
        }
        // Each wanted group: from the nearest cached (or first) group of its chain up, applying each delta.
        const resolve = (id) => {
            const chain = [];
            let cur = id;
            let base;
            while (cur !== null) {
                const known = bases.get(cur);
                if (known) {
                    base = known;
                    break;
                }
                chain.push(cur);
                cur = prevOf.get(cur) ?? null;
            }
            const state = new Map(base ?? []);
            for (const g of chain.reverse())
                for (const [k, v] of entries.get(g) ?? [])
                    state.set(k, v);
            return state;
        };
        for (const id of wanted) {
            const state = resolve(id);
            this.cache.set(id, state);
            out.set(id, state);
        }
        return out;
    }
}
