// In-memory indexes that keep /sync's hot path off storage (ARCHITECTURE "Storage": cache hot reads):
//  - per room, the position of its newest event and the ids of its latest events (like Synapse's
//    StreamChangeCache plus a short per-room event list): an incremental sync skips rooms that did not
//    change since its token and takes the new events of the others from memory;
//  - per user, their memberships (room_memberships rows), dropped whenever one of their member events
//    commits (or they forget a room).
// Both are fed by the commit notice (consumers/commit-feed.ts, a commit listener declared in src/main.ts)
// at the settle of the event-commit transaction, in the same synchronous step that moves the events
// stream's persisted position — so a reader never sees a position whose events are missing here.
// Positions at or below the floor (the events stream's position when this process started: every later
// event commits through this process's pipeline, whose listeners exist before any commit) are not
// indexed: such reads go to storage. Only timeline events are indexed (not outliers, rejected or
// soft-failed ones). Several writer processes (later) would feed these from the bridged notice instead.
// Every map is an LRU sized by caches.global_factor: when a room's (or user's) record is evicted, the
// highest position it held becomes a floor below which memory no longer answers for absent records, so
// an eviction costs a storage read, never a missed event.
import type { Services } from "../services.ts";
import type { StoredEvent } from "../store/events.ts";
import { inTimeline } from "../store/events.ts";
import { SyncReads, type UserMembership } from "../store/sync-reads.ts";
import type { CacheRegistry, LruCache } from "../cache/lru.ts";
import type { CommitListener } from "../consumers/commit-feed.ts";

/** Event ids kept per room: enough for the usual incremental sync (the default timeline limit is 10-20). */
const RECENT_PER_ROOM = 64;

interface RoomRecent {
  /** Position of the room's newest committed event. */
  last: number;
  /** Every event of the room above `complete` is in `recent` (oldest first). */
  complete: number;
  recent: { pos: number; eventId: string }[];
}

export class SyncStreamCache {
  private readonly rooms: LruCache<string, RoomRecent>;
  /** The highest `last` of an evicted room record: rooms without a record may have events up to it. */
  private evictedRoomLast = 0;
  /** Position of the newest member event per room, and per user the member events about them. */
  private readonly memberEventInRoom: LruCache<string, number>;
  private readonly memberEventAbout: LruCache<string, number>;
  /** The highest position an evicted member-event record held (absent records may be that recent). */
  private evictedMemberEvent = 0;
  private readonly memberships: LruCache<string, UserMembership[]>;
  /** Bumped per user on each invalidation: a read that raced one is not cached. */
  private readonly generations: LruCache<string, number>;
  /** Bumped when a generation is evicted: a read that raced an eviction is not cached either. */
  private generationEvictions = 0;

  constructor(caches: CacheRegistry) {
    this.rooms = caches.get("sync_room_recent", 20_000, { onEvict: (_k, r) => (this.evictedRoomLast = Math.max(this.evictedRoomLast, r.last)) });
    const evictedMember = (_k: string, pos: number) => (this.evictedMemberEvent = Math.max(this.evictedMemberEvent, pos));
    this.memberEventInRoom = caches.get("sync_member_event_in_room", 20_000, { onEvict: evictedMember });
    this.memberEventAbout = caches.get("sync_member_event_about", 100_000, { onEvict: evictedMember });
    this.memberships = caches.get("sync_memberships", 100_000, { weigh: (ms) => 64 + ms.length * 120, baseWeight: 64 * 1024 * 1024 });
    this.generations = caches.get("sync_membership_generations", 100_000, { onEvict: () => this.generationEvictions++ });
  }

  /** The events stream position below which nothing is indexed: where the stream started in this process. */
  private async floorPosition(s: Services): Promise<number> {
    const ids = s.rooms.events.streamIds;
    await ids.current();
    return ids.seedPosition()!;
  }

  /** Records committed events (called in the commit's settle, in stream order). */
  recordCommitted(s: Services, events: readonly StoredEvent[]): void {
    // Positions were allocated, so the floor (the stream's start) is known.
    const floor = s.rooms.events.streamIds.seedPosition() ?? Infinity;
    for (const e of events) {
      // Backfilled history (negative positions) lies below every sync token: reads of it go to storage.
      if (!inTimeline(e) || e.streamOrdering < 0) continue;
      const r = this.rooms.get(e.roomId) ?? { last: 0, complete: floor, recent: [] };
      if (e.streamOrdering > r.last) r.last = e.streamOrdering;
      // In stream order (a room's commits are serialized by its lane; insert in place if ever not).
      let i = r.recent.length;
      while (i > 0 && r.recent[i - 1]!.pos > e.streamOrdering) i--;
      if (i > 0 && r.recent[i - 1]!.pos === e.streamOrdering) continue; // a notice heard twice
      r.recent.splice(i, 0, { pos: e.streamOrdering, eventId: e.eventId });
      if (r.recent.length > RECENT_PER_ROOM) r.complete = r.recent.shift()!.pos;
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
  async newestEventIdsOf(s: Services, roomIds: readonly string[], after: number, upTo: number, limit: number): Promise<{ found: Map<string, string[]>; misses: string[] }> {
    const floor = await this.floorPosition(s);
    const found = new Map<string, string[]>();
    const misses: string[] = [];
    for (const roomId of roomIds) {
      const ids = this.newestFromMemory(floor, roomId, after, upTo, limit);
      if (ids === undefined) misses.push(roomId);
      else if (ids.length > 0) found.set(roomId, ids);
    }
    return { found, misses };
  }

  private newestFromMemory(floor: number, roomId: string, after: number, upTo: number, limit: number): string[] | undefined {
    const r = this.rooms.get(roomId);
    if (!r) return after >= Math.max(floor, this.evictedRoomLast) ? [] : undefined;
    if (r.last <= after) return [];
    if (after < Math.max(r.complete, floor)) return undefined;
    const out: string[] = [];
    for (let i = r.recent.length - 1; i >= 0 && out.length < limit; i--) {
      const e = r.recent[i]!;
      if (e.pos <= after) break;
      if (e.pos <= upTo) out.push(e.eventId);
    }
    return out;
  }

  /**
   * The position of the room's newest committed timeline event when memory knows it and it is at or
   * below `upTo` (a room's record holds every event since the stream's start in this process), else
   * undefined (read storage): the sliding-sync room list's activity order.
   */
  lastPositionOf(roomId: string, upTo: number): number | undefined {
    const r = this.rooms.get(roomId);
    return r && r.last <= upTo ? r.last : undefined;
  }

  /**
   * Whether a member event may have committed after `after` in one of `roomIds` or about `userId`
   * (false only when memory knows there was none: the device-list stream skips its membership read).
   */
  async memberEventsMaybeSince(s: Services, roomIds: readonly string[], userId: string, after: number): Promise<boolean> {
    if (after < Math.max(await this.floorPosition(s), this.evictedMemberEvent)) return true;
    if ((this.memberEventAbout.get(userId) ?? 0) > after) return true;
    return roomIds.some((r) => (this.memberEventInRoom.get(r) ?? 0) > after);
  }

  /** The user's memberships, from memory or `read` (cached unless a member event of theirs raced it). */
  async membershipsOf(userId: string, read: () => Promise<UserMembership[]>): Promise<UserMembership[]> {
    const hit = this.memberships.get(userId);
    if (hit) return hit;
    const gen = this.generations.get(userId) ?? 0;
    const evictions = this.generationEvictions;
    const rows = await read();
    if ((this.generations.get(userId) ?? 0) === gen && this.generationEvictions === evictions) this.memberships.set(userId, rows);
    return rows;
  }

  /** The rooms `userId` is joined to now (from the memberships above). */
  async joinedRoomIds(s: Services, userId: string): Promise<readonly string[]> {
    const ms = await this.membershipsOf(userId, () => new SyncReads(s.storage.sql).membershipsOf(userId));
    let joined = this.joinedOf.get(ms);
    if (!joined) this.joinedOf.set(ms, (joined = ms.filter((m) => m.membership === "join").map((m) => m.roomId)));
    return joined;
  }
  /** joinedRoomIds of each memberships list while it is held (a list is never changed once cached). */
  private readonly joinedOf = new WeakMap<readonly UserMembership[], readonly string[]>();

  /** An out-of-band member event about `userId` (an outlier: not in any room's timeline) committed at `pos`. */
  recordOutOfBandMembership(userId: string, pos: number): void {
    this.invalidateMemberships(userId);
    if (pos > (this.memberEventAbout.get(userId) ?? 0)) this.memberEventAbout.set(userId, pos);
  }

  invalidateMemberships(userId: string): void {
    this.memberships.delete(userId);
    this.generations.set(userId, (this.generations.get(userId) ?? 0) + 1);
  }
}

/** Feeds `s.sync.streamCache` from every event commit (a commit listener). */
export const recordSyncCommits: CommitListener = (s, c) => {
  s.sync.streamCache.recordCommitted(s, c.events);
  for (const userId of c.notice.outOfBandMembers ?? []) s.sync.streamCache.recordOutOfBandMembership(userId, c.notice.position);
};
