// Replication between Weft processes on one PostgreSQL (only with `redis.enabled`; a single process
// builds none of it: no connection, nothing added to the hot path). What each process publishes on the
// server's Redis channel (messages.ts) and how the others apply it:
//   - commit notices (CommitFeed.publish of the writer): applied in stream order through
//     CommitFeed.receive (event-apply.ts), which feeds the room and event caches, the sync stream cache,
//     the Notifier (/sync long polls, sliding sync, GraphQL subscriptions, live timelines) and the
//     durable consumers' wake-up;
//   - its own persisted-up-to position of each stream it writes (store/ids.ts multi-writer tracking),
//     also recorded in stream_positions (positions.ts); a reader's position is the minimum over the
//     stream's writers, moved only once the events up to it were applied here;
//   - the Notifier's notices of the other streams (account data, receipts, presence, to-device, device
//     lists, push rules, sticky events): the stream's position here moves, then the notice wakes readers;
//   - InvalidationBus messages.
// The caches another process's write makes stale, and what drops them here:
//   get_user_by_access_token, appservice_user (logout, device deletion, deactivation, password change,
//     refresh rotation, admin changes): InvalidationBus user_tokens / token, relayed; the writer's answer
//     waits until the message reached Redis (invalidateUserTokens);
//   ignored_users, erased_users, remote/local profile: InvalidationBus ignored_users / profile, relayed;
//   room_snapshots, event, state after state changes: a remote commit notice drops the room's snapshot at
//     once (before its events are read), CommitFeed.receive reloads, `restated` events are re-read;
//   sync stream cache (sync_room_recent, memberships): fed by the applied commits in stream order;
//   push_rules: the push_rules notice drops the users' rulesets;
//   push_room_state and unread counts: a remote commit drops the room's; a receipts notice the room's counts;
//   e2e_key_summaries: E2eStore.onKeysChanged → InvalidationBus key_summaries, relayed;
//   presence_rows: the presence notice forgets its users' rows;
//   partial-state flags: a remote commit with member events or restated events reloads them.
// State groups, server ACLs (by event id) and filters never change once written: nothing to drop.
// PostgreSQL is the truth: on every (re)connection to Redis, and every SAFETY_NET_MS as a safety net, a
// process reads stream_positions (and the receipts/presence maxima), applies the events it has not seen
// and wakes the readers of streams that moved; after an outage it also empties the caches above, whose
// invalidations may have been dropped. Spec: none (ARCHITECTURE.md "Growing past one process").
import type { Services } from "../services.ts";
import type { Commit } from "../consumers/commit-feed.ts";
import type { StreamNotice } from "../rooms/notifier.ts";
import { reloadPartialStateFlags } from "../federation/partial-state/flag.ts";
import type { ReplicationMessage } from "./messages.ts";
import { RedisTransport } from "./redis-transport.ts";
import { EventApplier } from "./event-apply.ts";
import { StreamPositionStore } from "./positions.ts";
import { REPLICATED_STREAMS, streamEntry, type ReplicatedStream, type StreamEntry } from "./streams.ts";

/** How often a process re-reads positions from PostgreSQL whatever Redis says. */
export const SAFETY_NET_MS = 5000;
/** How soon after its position moved a writer records it in stream_positions. */
const RECORD_DELAY_MS = 50;

/** Caches emptied after a Redis outage (their invalidations may have been lost meanwhile). */
const INVALIDATED_CACHES = ["get_user_by_access_token", "appservice_user", "ignored_users", "erased_users", "room_snapshots", "push_rules", "push_room_state", "e2e_key_summaries", "presence_rows", "remote_profile"];

export class Replication {
  private readonly transport: RedisTransport;
  private readonly store: StreamPositionStore;
  private readonly self: string;
  private events!: EventApplier;
  /** Serializes what reads storage (applying events, catching up), in arrival order. */
  private chain: Promise<void> = Promise.resolve();
  /** Events positions other writers announced, not yet applied. */
  private readonly eventPositions = new Map<string, number>();
  /** This process's own positions moved since last published / recorded. */
  private readonly toPublish = new Map<ReplicatedStream, number>();
  private readonly toRecord = new Map<ReplicatedStream, number>();
  private publishScheduled = false;
  private recordTimer: NodeJS.Timeout | undefined;
  private safetyNet: NodeJS.Timeout | undefined;
  private readonly offs: (() => void)[] = [];
  private stopped = false;

  private constructor(private readonly s: Services) {
    this.self = s.instanceName;
    this.store = new StreamPositionStore(s.storage.sql);
    this.transport = new RedisTransport(s.config.redis, s.config.server_name, this.self, s.log, {
      message: (m) => this.onMessage(m),
      connected: (afterOutage) => this.onConnected(afterOutage),
    });
  }

  /** Starts replication when `redis.enabled` (undefined otherwise: one process, nothing to do). */
  static async start(s: Services): Promise<Replication | undefined> {
    if (!s.config.redis.enabled) return undefined;
    const r = new Replication(s);
    await r.wire();
    await r.transport.start();
    return r;
  }

  /** The other writers of a stream (their positions bound this process's). */
  private othersOf(e: StreamEntry): string[] {
    return this.s.topology.writersOf(e.writers).filter((w) => w !== this.self);
  }

  private async wire(): Promise<void> {
    const s = this.s;
    const recorded = await this.store.all();
    for (const e of REPLICATED_STREAMS) {
      if (!e.tracker) continue;
      const writes = s.topology.isWriter(e.writers);
      const mine = new Map(recorded.filter((r) => r.stream === e.name).map((r) => [r.instance, r.position]));
      await e.tracker(s).joinCluster(this.othersOf(e), (pos) => writes && this.ownMoved(e.name, pos), mine);
    }
    this.events = new EventApplier(s, s.rooms.events.streamIds.peek() ?? 0);
    this.offs.push(
      s.commits.subscribe((_s, c) => {
        if (c.notice.writer === this.self) {
          this.events.committedHere(c.events.map((e) => e.streamOrdering));
          void this.send({ t: "commit", from: this.self, notice: c.notice });
        } else this.remoteCommit(c);
      }),
    );
    s.rooms.notifier.relayTo((n) => {
      if (n.stream !== "events" && n.stream !== "typing") void this.send({ t: "notify", from: this.self, notice: n });
    });
    s.invalidations.relayTo((m) => this.send({ t: "invalidate", from: this.self, m }));
    s.e2ee.onKeysChanged = (userId, deviceIds) => s.invalidations.publish({ kind: "key_summaries", userId, deviceIds });
    this.offs.push(s.invalidations.subscribe((m) => m.kind === "key_summaries" && s.e2ee.forgetKeySummaries(m.userId, m.deviceIds)));
    this.safetyNet = setInterval(() => this.serially(() => this.catchUp()), SAFETY_NET_MS);
    this.safetyNet.unref();
  }

  /** Runs `fn` after everything queued before it; an error is logged, the chain goes on. */
  private serially(fn: () => Promise<void>): void {
    this.chain = this.chain.then(fn).catch((err) => {
      if (!this.stopped) this.s.log.error({ err }, "replication: applying another process's changes failed (retried by the next catch-up)");
    });
  }

  private onMessage(m: ReplicationMessage): void {
    if (this.stopped) return;
    switch (m.t) {
      case "commit":
        if (this.events.heard(m.notice)) this.serially(() => this.applyEvents());
        return;
      case "positions":
        for (const [name, pos] of Object.entries(m.positions) as [ReplicatedStream, number][]) this.positionHeard(name, m.from, pos);
        return;
      case "notify":
        this.noticeHeard(m.from, m.notice);
        return;
      case "invalidate":
        this.s.invalidations.applyRemote(m.m);
        return;
    }
  }

  private positionHeard(name: ReplicatedStream, from: string, pos: number): void {
    if (typeof pos !== "number" || !Number.isFinite(pos)) return;
    if (name === "events") {
      if (pos > (this.eventPositions.get(from) ?? -Infinity)) this.eventPositions.set(from, pos);
      this.serially(() => this.applyEvents());
      return;
    }
    streamEntry(name)?.tracker?.(this.s).observe(from, pos);
  }

  /** Another process's stream moved: the position here first, its caches dropped, then readers woken. */
  private noticeHeard(from: string, n: StreamNotice): void {
    const s = this.s;
    const e = streamEntry(n.stream);
    if (!e || typeof n.position !== "number") return;
    e.tracker?.(s).observe(from, n.position);
    if (n.stream === "receipts") {
      s.receipts.writtenElsewhere(n.position);
      for (const roomId of n.roomIds ?? []) s.push.counts.dropRoom(roomId);
    } else if (n.stream === "presence") s.presence.writtenElsewhere(n.position, n.userIds ?? []);
    else if (n.stream === "push_rules") for (const u of n.userIds ?? []) s.push.rules.drop(u);
    s.rooms.notifier.notifyRemote(n);
  }

  /** What a commit of another process makes stale here beyond the core indexes (which receive feeds). */
  private remoteCommit(c: Commit): void {
    const s = this.s;
    s.push.rooms.delete(c.notice.roomId);
    s.push.counts.dropRoom(c.notice.roomId);
    // Local joins (partial or not) and completions change partial_state_rooms: re-read it, if kept here.
    if (!s.processState.partialStateFlags) return;
    const suffix = `:${s.config.server_name}`;
    if (c.notice.restated?.length || c.events.some((e) => e.pdu.type === "m.room.member" && e.pdu.state_key?.endsWith(suffix)))
      void reloadPartialStateFlags(s).catch((err) => s.log.warn({ err }, "replication: re-reading partial-state flags failed"));
  }

  /** Applies other writers' events up to the lowest of their positions, then moves the position here. */
  private async applyEvents(): Promise<void> {
    const tracker = this.s.rooms.events.streamIds;
    const others = this.othersOf(streamEntry("events")!);
    if (others.length === 0) return;
    // The positions as they are now (more may arrive while the events are read: they wait for the next round).
    const heard = new Map(this.eventPositions);
    let target = Infinity;
    for (const w of others) target = Math.min(target, heard.get(w) ?? tracker.positionOf(w) ?? tracker.seedPosition() ?? 0);
    // (Also when nothing new: notices without new events — a restatement — wait for a position reached.)
    await this.events.applyUpTo(Math.max(target, this.events.applied), others[0]!);
    // Every writer of `heard` is at or above `target`, now applied: the minimum the tracker takes is what was applied.
    for (const [w, pos] of heard) tracker.observe(w, pos);
  }

  /** This process's own position of a stream it writes moved: published at the end of the turn, recorded soon. */
  private ownMoved(name: ReplicatedStream, pos: number): void {
    this.toPublish.set(name, pos);
    this.toRecord.set(name, pos);
    if (!this.publishScheduled) {
      this.publishScheduled = true;
      // After the turn's settle hooks: the commit notices of these positions go out first.
      setImmediate(() => {
        this.publishScheduled = false;
        const positions = Object.fromEntries(this.toPublish);
        this.toPublish.clear();
        void this.send({ t: "positions", from: this.self, positions });
      });
    }
    this.recordTimer ??= setTimeout(() => {
      this.recordTimer = undefined;
      void this.recordOwn();
    }, RECORD_DELAY_MS);
  }

  private async recordOwn(): Promise<void> {
    if (this.toRecord.size === 0) return;
    const rows = new Map(this.toRecord);
    this.toRecord.clear();
    try {
      await this.store.record(this.self, rows);
    } catch (err) {
      if (!this.stopped) this.s.log.warn({ err }, "replication: recording stream positions failed (retried by the next catch-up)");
      for (const [k, v] of rows) if ((this.toRecord.get(k) ?? -Infinity) < v) this.toRecord.set(k, v);
    }
  }

  /** This process's own position of every stream it writes. */
  private ownPositions(): Map<ReplicatedStream, number> {
    const out = new Map<ReplicatedStream, number>();
    for (const e of REPLICATED_STREAMS) if (e.tracker && this.s.topology.isWriter(e.writers)) out.set(e.name, e.tracker(this.s).ownPosition());
    return out;
  }

  private onConnected(afterOutage: boolean): void {
    if (afterOutage) for (const name of INVALIDATED_CACHES) this.s.caches.get(name, 1).clear();
    if (afterOutage && this.s.processState.partialStateFlags) void reloadPartialStateFlags(this.s).catch(() => {});
    const own = this.ownPositions();
    if (own.size > 0) void this.send({ t: "positions", from: this.self, positions: Object.fromEntries(own) });
    this.serially(() => this.catchUp());
  }

  /** Reads what PostgreSQL says every writer has persisted and applies what this process missed. */
  private async catchUp(): Promise<void> {
    if (this.stopped) return;
    const s = this.s;
    for (const row of await this.store.all()) {
      if (row.instance === this.self) continue;
      const e = streamEntry(row.stream);
      if (!e?.tracker) continue;
      if (e.name === "events") {
        if (row.position > (this.eventPositions.get(row.instance) ?? -Infinity)) this.eventPositions.set(row.instance, row.position);
        continue;
      }
      const tracker = e.tracker(s);
      const before = tracker.peek();
      tracker.observe(row.instance, row.position);
      const after = tracker.peek();
      if (after !== undefined && after !== before) s.rooms.notifier.notifyRemote({ stream: e.name, position: after });
    }
    await this.applyEvents();
    for (const e of REPLICATED_STREAMS) {
      if (!e.maxSql) continue;
      const max = Number((await s.storage.sql.get<{ m: number | string | null }>(e.maxSql))?.m ?? 0);
      const current = e.name === "receipts" ? await s.receipts.currentPosition() : await s.presence.currentPosition();
      if (max <= current) continue;
      if (e.name === "receipts") s.receipts.writtenElsewhere(max);
      else s.presence.writtenElsewhere(max, []);
      s.rooms.notifier.notifyRemote({ stream: e.name, position: max });
    }
    for (const [name, pos] of this.ownPositions()) if ((this.toRecord.get(name) ?? -Infinity) < pos) this.toRecord.set(name, pos);
    await this.recordOwn();
  }

  /** Sends to Redis under way (`delivered` waits for them). */
  private readonly sending = new Set<Promise<void>>();

  /** Publishes `m`, tracked until Redis took it (or it was dropped). */
  private send(m: ReplicationMessage): Promise<void> {
    const sent = this.transport.publish(m).finally(() => this.sending.delete(sent));
    this.sending.add(sent);
    return sent;
  }

  /** Resolves once every message published so far reached Redis (or was dropped with it). */
  async delivered(): Promise<void> {
    if (this.sending.size > 0) await Promise.all([...this.sending]);
  }

  /** Whether Redis is reachable now. */
  get connected(): boolean {
    return this.transport.up;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.safetyNet) clearInterval(this.safetyNet);
    if (this.recordTimer) clearTimeout(this.recordTimer);
    this.recordTimer = undefined;
    for (const off of this.offs) off();
    this.s.rooms.notifier.relayTo(undefined);
    this.s.invalidations.relayTo(undefined);
    this.s.e2ee.onKeysChanged = undefined;
    await this.chain;
    await this.recordOwn().catch(() => {});
    await this.transport.close();
  }
}
