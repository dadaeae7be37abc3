// /sync as a stream of deltas for live readers (the GraphQL syncUpdates subscription): the same provider
// loop as GET /sync (collectOnce), run from the reader's last token each time the notifier says one of
// the user's streams moved past it; each delta carries its next_batch, so a reader that reconnects with
// the last one it received misses nothing. Without a starting token the first delta is an initial sync.
// To-device messages are acknowledged (deleted) only up to a position the client presented: the token it
// started from, or one it acknowledges with `acknowledgeLiveToDevice` — never merely because a later delta
// was read, so a delta lost in transit (a half-open socket) is delivered again from the older token.
// Spec: Client-Server API "Syncing". ARCHITECTURE "Streams, tokens and live updates".
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { NewEventNotice, StreamNotice } from "../rooms/notifier.ts";
import type { SyncFilter } from "../filters/sync-filter.ts";
import { collectOnce, type SyncResponse } from "./sync.ts";
import { formatSyncToken, parseSyncToken, type SyncToken } from "./token.ts";
import { ackToDevice } from "../e2ee/to-device.ts";
import { requireDevice } from "../e2ee/json.ts";

export class LiveSync {
  private last: SyncToken | undefined;
  private rooms: ReadonlySet<string> = new Set();
  /** Joined rooms not shown yet because their state is partial: shown (anew) once it is complete. */
  private partialRooms: ReadonlySet<string> = new Set();
  /** Until the first read the joined rooms are unknown: every notice counts. */
  private primed = false;
  /** The first read runs from the client's token, which acknowledges to-device messages as /sync's since does. */
  private fromClient = true;

  constructor(private readonly s: Services, private readonly r: Requester, private readonly filter: SyncFilter, since: string | undefined) {
    this.last = since !== undefined ? parseSyncToken(since) : undefined;
  }

  /** Does this notice possibly concern the reader, past what it already received? */
  concerns(n: { kind: "event"; n: NewEventNotice } | { kind: "stream"; n: StreamNotice }): boolean {
    if (!this.primed) return true;
    if (n.kind === "event") {
      if (this.partialRooms.has(n.n.roomId)) return true;
      if (this.last && n.n.streamOrdering <= this.last.events) return false;
      return this.rooms.has(n.n.roomId) || (n.n.type === "m.room.member" && n.n.stateKey === this.r.userId);
    }
    const notice = n.n;
    // A partial room's state completing (partial-state/flag.ts) is announced at an events position already read.
    if (notice.stateCompleted && notice.roomIds?.some((id) => this.partialRooms.has(id))) return true;
    if (this.last && notice.position <= this.last[notice.stream]) return false;
    if (!notice.userIds && !notice.roomIds) return true;
    return (notice.userIds?.includes(this.r.userId) ?? false) || (notice.roomIds?.some((id) => this.rooms.has(id)) ?? false);
  }

  /** The delta since the last token (the initial sync the first time without one), or undefined when empty. */
  async next(): Promise<SyncResponse | undefined> {
    const initial = this.last === undefined;
    const acknowledgeToDevice = this.fromClient;
    this.fromClient = false;
    const { ctx, added } = await collectOnce(this.s, this.r, { timeoutMs: 0, fullState: false, filter: this.filter, acknowledgeToDevice }, this.last);
    this.rooms = ctx.joinedRooms;
    this.partialRooms = ctx.partialJoinedRooms;
    this.primed = true;
    this.last = ctx.to;
    return added || initial ? { next_batch: formatSyncToken(ctx.to), ...ctx.result } : undefined;
  }
}

/**
 * Acknowledges the requester's device's to-device messages up to the to-device position of `token` (a
 * live delta's next_batch, or any sync token): they are deleted, as a /sync from that token would.
 */
export async function acknowledgeLiveToDevice(s: Services, r: Requester, token: string): Promise<void> {
  const position = parseSyncToken(token, "upTo").to_device;
  if (position > 0) await ackToDevice(s, r.userId, requireDevice(r), position);
}
