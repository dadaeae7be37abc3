// /sync as a stream of deltas for live readers (the GraphQL syncUpdates subscription): the same provider
// loop as GET /sync (collectOnce), run from the reader's last token each time the notifier says one of
// the user's streams moved past it; each delta carries its next_batch, so a reader that reconnects with
// the last one it received misses nothing. Without a starting token the first delta is an initial sync.
// Spec: Client-Server API "Syncing". ARCHITECTURE "Streams, tokens and live updates".
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { NewEventNotice, StreamNotice } from "../rooms/notifier.ts";
import type { SyncFilter } from "../filters/sync-filter.ts";
import { collectOnce, type SyncResponse } from "./sync.ts";
import { formatSyncToken, parseSyncToken, type SyncToken } from "./token.ts";

export class LiveSync {
  private last: SyncToken | undefined;
  private rooms: ReadonlySet<string> = new Set();
  /** Until the first read the joined rooms are unknown: every notice counts. */
  private primed = false;

  constructor(private readonly s: Services, private readonly r: Requester, private readonly filter: SyncFilter, since: string | undefined) {
    this.last = since !== undefined ? parseSyncToken(since) : undefined;
  }

  /** Does this notice possibly concern the reader, past what it already received? */
  concerns(n: { kind: "event"; n: NewEventNotice } | { kind: "stream"; n: StreamNotice }): boolean {
    if (!this.primed) return true;
    if (n.kind === "event") {
      if (this.last && n.n.streamOrdering <= this.last.events) return false;
      return this.rooms.has(n.n.roomId) || (n.n.type === "m.room.member" && n.n.stateKey === this.r.userId);
    }
    const notice = n.n;
    if (this.last && notice.position <= this.last[notice.stream]) return false;
    if (!notice.userIds && !notice.roomIds) return true;
    return (notice.userIds?.includes(this.r.userId) ?? false) || (notice.roomIds?.some((id) => this.rooms.has(id)) ?? false);
  }

  /** The delta since the last token (the initial sync the first time without one), or undefined when empty. */
  async next(): Promise<SyncResponse | undefined> {
    const initial = this.last === undefined;
    const { ctx, added } = await collectOnce(this.s, this.r, { timeoutMs: 0, fullState: false, filter: this.filter }, this.last);
    this.rooms = ctx.joinedRooms;
    this.primed = true;
    this.last = ctx.to;
    return added || initial ? { next_batch: formatSyncToken(ctx.to), ...ctx.result } : undefined;
  }
}
