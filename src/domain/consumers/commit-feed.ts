// The commit notice: the one message that tells every in-memory index that events were committed — the
// room cache and the event cache, sync's stream cache, the notifier (hence long polls, GraphQL
// subscriptions and live timelines) and the wake-up of durable consumers. The writing process publishes
// it when the commit's transaction settles; with several processes (redis.enabled) the others receive it
// over Redis (src/domain/cluster/replication.ts) and feed their own indexes with `receive`, which loads
// the events.
// ARCHITECTURE "Consumers of the event stream"; "Streams, tokens and live updates".
import type { Services } from "../services.ts";
import type { StoredEvent } from "../store/events.ts";
import { inTimeline } from "../store/events.ts";
import type { RoomSnapshot } from "../rooms/room-cache.ts";

/** What one commit of room events announces. Plain JSON: it can cross a process boundary. */
export interface CommitNotice {
  stream: "events";
  /** The process that wrote the commit (its instance name; "master" for a single process). */
  writer: string;
  /** The commit's highest position on the stream. */
  position: number;
  roomId: string;
  /** The committed events, in stream order (outliers, rejected and soft-failed ones included). */
  eventIds: readonly string[];
  /**
   * Local users whose membership an out-of-band member event changed (an outlier about a room whose
   * state this server does not hold: rooms/pipeline/out-of-band.ts): their memberships are re-read.
   */
  outOfBandMembers?: readonly string[];
  /**
   * Events already stored whose placement changed in place — state group, rejection, replaced state —
   * with no new position (a partial-state room completed: federation/partial-state/resync.ts); the
   * room's current state may have changed with them. Readers drop what they kept of the room and them.
   */
  restated?: readonly string[];
}

/** A notice with what in-memory indexes read from it. */
export interface Commit {
  notice: CommitNotice;
  /** The committed events, in stream order: handed over by the writer, loaded by id elsewhere. */
  events: readonly StoredEvent[];
  /** The writer's room snapshot after the commit (only in the writing process). */
  snapshot?: RoomSnapshot;
  /** The notice's `restated` events, as stored now. */
  restatedEvents?: readonly StoredEvent[];
}

/**
 * An in-memory index fed by commits: called synchronously, in commit order per room, right after the
 * transaction settled. It needs no durable position (it starts empty) and must not throw or block.
 */
export type CommitListener = (s: Services, c: Commit) => void;

export class CommitFeed {
  /** Listeners added at run time (what replicates the feed to other processes; tests), after the declared ones. */
  private readonly added = new Set<CommitListener>();

  constructor(private readonly s: Services, private readonly listeners: readonly CommitListener[]) {}

  /** Adds a listener, called after the declared ones; the function returned removes it. */
  subscribe(listen: CommitListener): () => void {
    this.added.add(listen);
    return () => this.added.delete(listen);
  }

  /** Runs every listener on a commit (the writer calls this at the settle of its transaction). */
  publish(c: Commit): void {
    for (const listen of this.added.size === 0 ? this.listeners : [...this.listeners, ...this.added]) {
      try {
        listen(this.s, c);
      } catch (err) {
        this.s.log.error({ err, roomId: c.notice.roomId, position: c.notice.position }, "a commit listener failed");
      }
    }
  }

  /** A notice from another writer: loads its events, then publishes it without a snapshot. */
  async receive(notice: CommitNotice): Promise<void> {
    const found = await this.s.rooms.events.getMany(notice.eventIds);
    const events = notice.eventIds.map((id) => found.get(id)).filter((e): e is StoredEvent => e !== undefined);
    if (!notice.restated || notice.restated.length === 0) return this.publish({ notice, events });
    for (const id of notice.restated) this.s.rooms.events.forget(id);
    const again = await this.s.rooms.events.getMany(notice.restated);
    this.publish({ notice, events, restatedEvents: notice.restated.map((id) => again.get(id)).filter((e): e is StoredEvent => e !== undefined) });
  }
}

/** The room cache and event cache follow commits: the writer's snapshot, or (another writer) a reload. */
export const updateRoomCaches: CommitListener = (s, c) => {
  if (c.snapshot) s.rooms.cache.set(c.notice.roomId, c.snapshot);
  else s.rooms.cache.delete(c.notice.roomId);
  for (const e of c.events) s.rooms.events.remember(e);
  for (const e of c.restatedEvents ?? []) s.rooms.events.remember(e);
};

/**
 * Waiting readers hear of the commit's timeline events (positions only; they read the events themselves),
 * and the targets of out-of-band memberships of theirs. Backfilled history (negative positions, below
 * every token) is not news.
 */
export const notifyReaders: CommitListener = (s, c) => {
  for (const e of c.events) {
    if (!inTimeline(e) || e.streamOrdering < 0) continue;
    s.rooms.notifier.newEvent({ roomId: e.roomId, eventId: e.eventId, streamOrdering: e.streamOrdering, type: e.pdu.type, stateKey: e.pdu.state_key, sender: e.pdu.sender });
  }
  const members = c.notice.outOfBandMembers;
  if (members && members.length > 0) s.rooms.notifier.notify({ stream: "events", position: c.notice.position, userIds: members });
};
