// Unread notification counts per user, room and thread (spec: Client-Server API "Receiving
// notifications", "Marking notifications as read", threaded read receipts): the notifying events after
// the user's read receipt — the later of m.read and m.read.private; an unthreaded receipt covers every
// thread, a threaded one ("main" or a thread root) its own — and after they joined. Computed from the
// notification records once per (user, room), then kept in memory: each commit adds its outcomes to
// the cached entries when it settles, a receipt or a join drops the entry. A computation that overlaps a
// commit of the room (between its indexer and its settle) or a drop is not cached, so the memory never
// counts an event twice or misses one.
import type { Services } from "../services.ts";

export interface Count {
  notifications: number;
  highlights: number;
}

/** thread id ("main" or a root) → counts. */
export type ThreadCounts = Map<string, Count>;

const MAX_ENTRIES = 200_000;

export class UnreadCounts {
  /** room → user → counts by thread. */
  private readonly byRoom = new Map<string, Map<string, ThreadCounts>>();
  private entries = 0;
  private readonly pending = new Map<string, number>();
  private readonly roomGen = new Map<string, number>();
  private readonly userGen = new Map<string, number>();

  private bump(map: Map<string, number>, key: string): void {
    map.set(key, (map.get(key) ?? 0) + 1);
  }

  /** A commit of the room is under way (called inside its transaction). */
  begin(roomId: string): void {
    this.bump(this.pending, roomId);
    this.bump(this.roomGen, roomId);
  }

  /** The commit settled: `apply` adds its outcomes to the cached entries when it committed. */
  end(roomId: string, committed: boolean, apply: (entries: Map<string, ThreadCounts>) => void): void {
    const n = (this.pending.get(roomId) ?? 1) - 1;
    if (n <= 0) this.pending.delete(roomId);
    else this.pending.set(roomId, n);
    this.bump(this.roomGen, roomId);
    const entries = this.byRoom.get(roomId);
    if (committed && entries) apply(entries);
  }

  /** Forgets the user's counts in the room (a receipt moved, they joined). */
  drop(userId: string, roomId: string): void {
    this.bump(this.userGen, `${userId}\u0000${roomId}`);
    const m = this.byRoom.get(roomId);
    if (m?.delete(userId)) this.entries--;
  }

  dropRoom(roomId: string): void {
    this.bump(this.roomGen, roomId);
    const m = this.byRoom.get(roomId);
    if (m) {
      this.entries -= m.size;
      this.byRoom.delete(roomId);
    }
  }

  /** The user's counts in each room (rooms without notifications: an empty map). */
  async get(s: Services, userId: string, roomIds: readonly string[]): Promise<Map<string, ThreadCounts>> {
    const out = new Map<string, ThreadCounts>();
    const misses: string[] = [];
    for (const roomId of roomIds) {
      const hit = this.byRoom.get(roomId)?.get(userId);
      if (hit) out.set(roomId, hit);
      else misses.push(roomId);
    }
    if (misses.length === 0) return out;
    const stamp = (roomId: string) => `${this.pending.get(roomId) ?? 0}/${this.roomGen.get(roomId) ?? 0}/${this.userGen.get(`${userId}\u0000${roomId}`) ?? 0}`;
    const before = new Map(misses.map((r) => [r, stamp(r)]));
    const computed = await computeCounts(s, userId, misses);
    for (const roomId of misses) {
      const counts = computed.get(roomId) ?? new Map<string, Count>();
      out.set(roomId, counts);
      if (!this.pending.has(roomId) && stamp(roomId) === before.get(roomId)) {
        if (this.entries >= MAX_ENTRIES) this.clear();
        let m = this.byRoom.get(roomId);
        if (!m) this.byRoom.set(roomId, (m = new Map()));
        if (!m.has(userId)) this.entries++;
        m.set(userId, counts);
      }
    }
    return out;
  }

  private clear(): void {
    for (const roomId of this.byRoom.keys()) this.bump(this.roomGen, roomId);
    this.byRoom.clear();
    this.entries = 0;
  }
}

/** Adds one outcome to a cached entry. */
export function addOutcome(counts: ThreadCounts, threadId: string, notify: boolean, highlight: boolean): void {
  if (!notify && !highlight) return;
  const c = counts.get(threadId) ?? { notifications: 0, highlights: 0 };
  if (notify) c.notifications++;
  if (highlight) c.highlights++;
  counts.set(threadId, c);
}

/** Counts from storage: membership starts and receipts in two queries, the counts in one. */
async function computeCounts(s: Services, userId: string, roomIds: string[]): Promise<Map<string, ThreadCounts>> {
  const store = s.push.notifications;
  const [since, read] = await Promise.all([store.joinedSince(userId, roomIds), store.readUpTo(userId, roomIds)]);
  const bounds = new Map<string, number>();
  const threadBounds: { roomId: string; threadId: string; bound: number }[] = [];
  for (const roomId of roomIds) {
    const r = read.get(roomId);
    const bound = Math.max(since.get(roomId) ?? 0, r?.get("") ?? 0);
    bounds.set(roomId, bound);
    for (const [threadId, pos] of r ?? []) if (threadId !== "" && pos > bound) threadBounds.push({ roomId, threadId, bound: pos });
  }
  const out = new Map<string, ThreadCounts>();
  for (const c of await store.unreadCounts(userId, bounds, threadBounds)) {
    if (c.notifications === 0 && c.highlights === 0) continue;
    let m = out.get(c.roomId);
    if (!m) out.set(c.roomId, (m = new Map()));
    m.set(c.threadId, { notifications: c.notifications, highlights: c.highlights });
  }
  return out;
}

/** Totals over every thread. */
export function total(counts: ThreadCounts | undefined): Count {
  const t = { notifications: 0, highlights: 0 };
  for (const c of counts?.values() ?? []) {
    t.notifications += c.notifications;
    t.highlights += c.highlights;
  }
  return t;
}
