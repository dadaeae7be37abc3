import { inTimeline } from "../store/events.js";
import { SyncReads } from "../store/sync-reads.js";
/** Event ids kept per room: enough for the usual incremental sync (the default timeline limit is 10-20). */
const RECENT_PER_ROOM = 64;
export class SyncStreamCache {
    rooms;
    /** The highest `last` of an evicted room record: rooms without a record may have events up to it. */
    evictedRoomLast = 0;
    /** Position of the newest member event per room, and per user the member events about them. */
    memberEventInRoom;
    memberEventAbout;
    /** The highest position an evicted member-event record held (absent records may be that recent). */
    evictedMemberEvent = 0;
    memberships;
    /** Bumped per user on each invalidation: a read that raced one is not cached. */
    generations;
    /** Bumped when a generation is evicted: a read that raced an eviction is not cached either. */
    generationEvictions = 0;
    constructor(caches) {
        this.rooms = caches.get("sync_room_recent", 20_000, { onEvict: (_k, r) => (this.evictedRoomLast = Math.max(this.evictedRoomLast, r.last)) });
        const evictedMember = (_k, pos) => (this.evictedMemberEvent = Math.max(this.evictedMemberEvent, pos));
        this.memberEventInRoom = caches.get("sync_member_event_in_room", 20_000, { onEvict: evictedMember });
        this.memberEventAbout = caches.get("sync_member_event_about", 100_000, { onEvict: evictedMember });
        this.memberships = caches.get("sync_memberships", 100_000, { weigh: (ms) => 64 + ms.length * 120, baseWeight: 64 * 1024 * 1024 });
        this.generations = caches.get("sync_membership_generations", 100_000, { onEvict: () => this.generationEvictions++ });
    }
    /** The events stream position below which nothing is indexed: where the stream started in this process. */
    async floorPosition(s) {
        const ids = s.rooms.events.streamIds;
        await ids.current();
        return ids.seedPosition();
    }
    /** Records committed events (called in the commit's settle, in stream order). */
    recordCommitted(s, events) {
        // Positions were allocated, so the floor (the stream's start) is known.
        const floor = s.rooms.events.streamIds.seedPosition() ?? Infinity;
        for (const e of events) {
            // Backfilled history (negative positions) lies below every sync token: reads of it go to storage.
            if (!inTimeline(e) || e.streamOrdering < 0)
                continue;
            const r = this.rooms.get(e.roomId) ?? { last: 0, complete: floor, recent: [] };
            if (e.streamOrdering > r.last)
                r.last = e.streamOrdering;
            // In stream order (a room's commits are serialized by its lane; insert in place if ever not).
            let i = r.recent.length;
            while (i > 0 && r.recent[i - 1].pos > e.streamOrdering)
                i--;
            if (i > 0 && r.recent[i - 1].pos === e.streamOrdering)
                continue; // a notice heard twice
            r.recent.splice(i, 0, { pos: e.streamOrdering, eventId: e.eventId });
            if (r.recent.length > RECENT_PER_ROOM)
                r.complete = r.recent.shift().pos;
            // Set once updated: an eviction (even of this very record) must see its newest position.
            this.rooms.set(e.roomId, r);
            if (e.pdu.type === "m.room.member" && e.pdu.state_key !== undefined) {
                this.invalidateMemberships(e.pdu.state_key);
                this.memberEventInRoom.set(e.roomId, e.streamOrdering);
                this.memberEventAbout.set(e.pdu.state_key, e.streamOrdering);
            }
        }
    }
    /**
     * Per room, the ids of the newest `limit` events with `after < position <= upTo`, newest first, where
     * memory can answer (rooms without such events absent); `misses`: the rooms memory cannot answer for
     * (read storage). One await for all rooms: an incremental sync of a user in hundreds of rooms asks for
     * every one.
     */
    async newestEventIdsOf(s, roomIds, after, upTo, limit) {
        const floor = await this.floorPosition(s);
        const found = new Map();
        const misses = [];
        for (const roomId of roomIds) {
            const ids = this.newestFromMemory(floor, roomId, after, upTo, limit);
            if (ids === undefined)
                misses.push(roomId);
            else if (ids.length > 0)
                found.set(roomId, ids);
        }
        return { found, misses };
    }
    newestFromMemory(floor, roomId, after, upTo, limit) {
        const r = this.rooms.get(roomId);
        if (!r)
            return after >= Math.max(floor, this.evictedRoomLast) ? [] : undefined;
        if (r.last <= after)
            return [];
        if (after < Math.max(r.complete, floor))
            return undefined;
        const out = [];
        for (let i = r.recent.length - 1; i >= 0 && out.length < limit; i--) {
            const e = r.recent[i];
            if (e.pos <= after)
                break;
            if (e.pos <= upTo)
                out.push(e.eventId);
        }
        return out;
    }
    /**
     * Whether a member event may have committed after `after` in one of `roomIds` or about `userId`
     * (false only when memory knows there was none: the device-list stream skips its membership read).
     */
    async memberEventsMaybeSince(s, roomIds, userId, after) {
        if (after < Math.max(await this.floorPosition(s), this.evictedMemberEvent))
            return true;
        if ((this.memberEventAbout.get(userId) ?? 0) > after)
            return true;
        return roomIds.some((r) => (this.memberEventInRoom.get(r) ?? 0) > after);
    }
    /** The user's memberships, from memory or `read` (cached unless a member event of theirs raced it). */
    async membershipsOf(userId, read) {
        const hit = this.memberships.get(userId);
        if (hit)
            return hit;
        const gen = this.generations.get(userId) ?? 0;
        const evictions = this.generationEvictions;
        const rows = await read();
        if ((this.generations.get(userId) ?? 0) === gen && this.generationEvictions === evictions)
            this.memberships.set(userId, rows);
        return rows;
    }
    /** The rooms `userId` is joined to now (from the memberships above). */
    async joinedRoomIds(s, userId) {
        const ms = await this.membershipsOf(userId, () => new SyncReads(s.storage.sql).membershipsOf(userId));
        return ms.filter((m) => m.membership === "join").map((m) => m.roomId);
    }
    /** An out-of-band member event about `userId` (an outlier: not in any room's timeline) committed at `pos`. */
    recordOutOfBandMembership(userId, pos) {
        this.invalidateMemberships(userId);
        if (pos > (this.memberEventAbout.get(userId) ?? 0))
            this.memberEventAbout.set(userId, pos);
    }
    invalidateMemberships(userId) {
        this.memberships.delete(userId);
        this.generations.set(userId, (this.generations.get(userId) ?? 0) + 1);
    }
}
/** Feeds `s.sync.streamCache` from every event commit (a commit listener). */
export const recordSyncCommits = (s, c) => {
    s.sync.streamCache.recordCommitted(s, c.events);
    for (const userId of c.notice.outOfBandMembers ?? [])
        s.sync.streamCache.recordOutOfBandMembership(userId, c.notice.position);
};
