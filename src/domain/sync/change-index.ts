// Which streams moved for a user since a sync token, answered from memory (like Synapse's stream change
// caches): per stream, the position of the latest notice that named each user, each room, or everyone.
// A long poll whose token is already current for the user then waits without reading anything — the
// usual case right after a response, when the client polls again at once. Fed by the same notices that
// wake waiting requests (rooms/notifier.ts), from the moment the Services exist: every change this
// process makes after that is recorded (services.ts calls `listen`). Below `floor` (the streams' positions when first asked, never
// lower than at start) or an evicted record's position, memory does not know and the answer is "maybe".
// ARCHITECTURE "Streams, tokens and live updates".
import type { Services } from "../services.ts";
import type { Notifier, StreamName, StreamNotice } from "../rooms/notifier.ts";
import type { CacheRegistry, LruCache } from "../cache/lru.ts";
import { STREAMS, type SyncToken } from "./token.ts";

type Positions = Partial<Record<StreamName, number>>;

export class SyncChangeIndex {
  /** Per stream, the latest notice naming neither users nor rooms (it concerns everyone). */
  private readonly everyone: Positions = {};
  private readonly users: LruCache<string, Positions>;
  private readonly rooms: LruCache<string, Positions>;
  /** Per stream, the highest position an evicted record held: absent records may be that recent. */
  private readonly evicted: Positions = {};
  private floor: Promise<SyncToken> | undefined;

  constructor(caches: CacheRegistry) {
    const evicted = (_k: string, p: Positions) => {
      for (const [stream, pos] of Object.entries(p) as [StreamName, number][]) if (pos > (this.evicted[stream] ?? 0)) this.evicted[stream] = pos;
    };
    this.users = caches.get("sync_changes_by_user", 100_000, { onEvict: evicted });
    this.rooms = caches.get("sync_changes_by_room", 50_000, { onEvict: evicted });
  }

  /** Starts recording the notifier's notices (once, when the Services are wired: services.ts). */
  listen(notifier: Notifier): void {
    notifier.onStream((n) => this.record(n));
  }

  private bump(cache: LruCache<string, Positions>, key: string, n: StreamNotice): void {
    const p = cache.get(key);
    if (!p) cache.set(key, { [n.stream]: n.position });
    else if (n.position > (p[n.stream] ?? 0)) p[n.stream] = n.position;
  }

  /** Records a notice (the notifier's listener). */
  record(n: StreamNotice): void {
    if (!n.userIds && !n.roomIds) {
      if (n.position > (this.everyone[n.stream] ?? 0)) this.everyone[n.stream] = n.position;
      return;
    }
    for (const u of n.userIds ?? []) this.bump(this.users, u, n);
    for (const r of n.roomIds ?? []) this.bump(this.rooms, r, n);
  }

  /**
   * Whether anything may concern `userId` (a member of `rooms`) past `since`, up to the streams' current
   * positions `now`: false only when memory knows that no notice named them, their rooms or everyone.
   * A position above `now` (an in-memory stream restarted) is a change: its provider resets it.
   */
  async mayHaveChanged(s: Services, userId: string, rooms: Iterable<string>, since: SyncToken, now: SyncToken): Promise<boolean> {
    const floor = await (this.floor ??= s.sync.currentToken(s));
    const moved: StreamName[] = [];
    for (const stream of STREAMS) {
      const from = since[stream];
      if (from > now[stream]) return true;
      if (from === now[stream]) continue;
      if (from < floor[stream] || from < (this.evicted[stream] ?? 0) || (this.everyone[stream] ?? 0) > from) return true;
      if ((this.users.get(userId)?.[stream] ?? 0) > from) return true;
      moved.push(stream);
    }
    if (moved.length === 0) return false;
    for (const roomId of rooms) {
      const p = this.rooms.get(roomId);
      if (p) for (const stream of moved) if ((p[stream] ?? 0) > since[stream]) return true;
    }
    return false;
  }
}
