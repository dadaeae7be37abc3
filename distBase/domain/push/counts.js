const MAX_ENTRIES = 200_000;
export class UnreadCounts {
    /** room → user → counts by thread. */
    byRoom = new Map();
    entries = 0;
    pending = new Map();
    roomGen = new Map();
    userGen = new Map();
    bump(map, key) {
        map.set(key, (map.get(key) ?? 0) + 1);
    }
    /** A commit of the room is under way (called inside its transaction). */
    begin(roomId) {
        this.bump(this.pending, roomId);
        this.bump(this.roomGen, roomId);
    }
    /** The commit settled: `apply` adds its outcomes to the cached entries when it committed. */
    end(roomId, committed, apply) {
        const n = (this.pending.get(roomId) ?? 1) - 1;
        if (n <= 0)
            this.pending.delete(roomId);
        else
            this.pending.set(roomId, n);
        this.bump(this.roomGen, roomId);
        const entries = this.byRoom.get(roomId);
        if (committed && entries)
            apply(entries);
    }
    /** Forgets the user's counts in the room (a receipt moved, they joined). */
    drop(userId, roomId) {
        this.bump(this.userGen, `${userId}\u0000${roomId}`);
        const m = this.byRoom.get(roomId);
        if (m?.delete(userId))
            this.entries--;
    }
    dropRoom(roomId) {
        this.bump(this.roomGen, roomId);
        const m = this.byRoom.get(roomId);
        if (m) {
            this.entries -= m.size;
            this.byRoom.delete(roomId);
        }
    }
    /** The user's counts in each room (rooms without notifications: an empty map). */
    async get(s, userId, roomIds) {
        const out = new Map();
        const misses = [];
        for (const roomId of roomIds) {
            const hit = this.byRoom.get(roomId)?.get(userId);
            if (hit)
                out.set(roomId, hit);
            else
                misses.push(roomId);
        }
        if (misses.length === 0)
            return out;
        const stamp = (roomId) => `${this.pending.get(roomId) ?? 0}/${this.roomGen.get(roomId) ?? 0}/${this.userGen.get(`${userId}\u0000${roomId}`) ?? 0}`;
        const before = new Map(misses.map((r) => [r, stamp(r)]));
        const computed = await computeCounts(s, userId, misses);
        for (const roomId of misses) {
            const counts = computed.get(roomId) ?? new Map();
            out.set(roomId, counts);
            if (!this.pending.has(roomId) && stamp(roomId) === before.get(roomId)) {
                if (this.entries >= MAX_ENTRIES)
                    this.clear();
                let m = this.byRoom.get(roomId);
                if (!m)
                    this.byRoom.set(roomId, (m = new Map()));
                if (!m.has(userId))
                    this.entries++;
                m.set(userId, counts);
            }
        }
        return out;
    }
    clear() {
        for (const roomId of this.byRoom.keys())
            this.bump(this.roomGen, roomId);
        this.byRoom.clear();
        this.entries = 0;
    }
}
/** Adds one outcome to a cached entry. */
export function addOutcome(counts, threadId, notify, highlight) {
    if (!notify && !highlight)
        return;
    const c = counts.get(threadId) ?? { notifications: 0, highlights: 0 };
    if (notify)
        c.notifications++;
    if (highlight)
        c.highlights++;
    counts.set(threadId, c);
}
/** Counts from storage: membership starts and receipts in two queries, the counts in one. */
async function computeCounts(s, userId, roomIds) {
    const store = s.push.notifications;
    const [since, read] = await Promise.all([store.joinedSince(userId, roomIds), store.readUpTo(userId, roomIds)]);
    const bounds = new Map();
    const threadBounds = [];
    for (const roomId of roomIds) {
        const r = read.get(roomId);
        const bound = Math.max(since.get(roomId) ?? 0, r?.get("") ?? 0);
        bounds.set(roomId, bound);
        for (const [threadId, pos] of r ?? [])
            if (threadId !== "" && pos > bound)
                threadBounds.push({ roomId, threadId, bound: pos });
    }
    const out = new Map();
    for (const c of await store.unreadCounts(userId, bounds, threadBounds)) {
        if (c.notifications === 0 && c.highlights === 0)
            continue;
        let m = out.get(c.roomId);
        if (!m)
            out.set(c.roomId, (m = new Map()));
        m.set(c.threadId, { notifications: c.notifications, highlights: c.highlights });
    }
    return out;
}
/** Totals over every thread. */
export function total(counts) {
    const t = { notifications: 0, highlights: 0 };
    for (const c of counts?.values() ?? []) {
        t.notifications += c.notifications;
        t.highlights += c.highlights;
    }
    return t;
}
