// The federation sender (services.federationSender): one queue per destination server (destination-
// queue.ts), each with one transaction in flight. PDUs reach the queues through the durable consumer of
// the events stream (consumer.ts), persisted; EDUs that must arrive (device lists, signing keys, to-device
// messages) are queued in storage by their producers in their own transactions (queueDurableEdu); the
// rest (typing, receipts, presence) are handed over in memory (src/domain/federation/edus). Woken by the consumer, by EDUs, by retry timers, and by
// any signed request from a server it had marked down (it is evidently up). Started and stopped with the
// server (a background task): on start, every destination with PDUs still queued is woken, so a restart
// loses nothing. Its per-destination state is readable (`describe`) for the admin API and metrics.
// ARCHITECTURE "src/federation": per-destination send queues with retry and backoff.
import type { Services } from "../../domain/services.ts";
import type { BackgroundTask } from "../../domain/extensions.ts";
import { tryParseServerName } from "../../domain/ids.ts";
import { isDown, retryAt, upState } from "./backoff.ts";
import { DestinationQueue, CATCH_UP_KEEP_PER_ROOM, stickyKeptAt } from "./destination-queue.ts";
import type { Edu, PresenceItem, ReceiptItem } from "./edu-buffer.ts";
import { SenderStore, type DestinationRow } from "./store.ts";
import type { StoredEvent } from "../../domain/store/events.ts";
import type { SqlExecutor } from "../../storage/sql.ts";
import { aclOfState, serverAllowedByAcl } from "../../domain/federation/server-acl.ts";
import { joinedServersOfState, withPartialStateServers } from "../../domain/federation/room-servers.ts";

/** How often destinations that are down have their queues trimmed (bounded storage in long outages). */
const TRIM_INTERVAL_MS = 10 * 60_000;

export interface DestinationState extends DestinationRow {
  down: boolean;
  /** When the next attempt may go (0: whenever there is something to send). */
  nextAttemptTs: number;
  queuedPdus: number;
  pendingEdus: number;
}

export interface QueueState extends DestinationState {
  /** Transactions sent since this process started. */
  transactionsSent: number;
}

export class FederationSender {
  readonly store: SenderStore;
  private readonly queues = new Map<string, DestinationQueue>();
  private abort = new AbortController();
  private stopping = false;
  /**
   * Between start and stop: only then does this process send. Elsewhere (an instance that is not the
   * federation sender, or a candidate waiting for its lease) queued rows stay for the one that is.
   */
  private started = false;
  private trimTimer: NodeJS.Timeout | undefined;
  private readonly txnBase = Date.now();
  private txnSeq = 0;

  constructor(private readonly s: Services) {
    this.store = new SenderStore(s.storage.sql);
  }

  get stopped(): boolean {
    return this.stopping;
  }

  /** Wakes every destination with PDUs still queued (after a restart), and starts the periodic trim. */
  async start(): Promise<void> {
    // Started again after a stop (its lease lost, then taken again): fresh queues, nothing aborted.
    if (this.stopping) {
      this.stopping = false;
      this.abort = new AbortController();
    }
    this.started = true;
    this.trimTimer = setInterval(() => void this.trimDown(), TRIM_INTERVAL_MS);
    this.trimTimer.unref();
    // Destinations backing off are known in memory from the start (remoteIsUp reads no rows).
    for (const row of await this.store.downDestinations()) this.queue(row.destination)?.prime(row);
    this.wake(await this.store.destinationsWithQueue());
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.started = false;
    if (this.trimTimer) clearInterval(this.trimTimer);
    this.abort.abort();
    await Promise.all([...this.queues.values()].map((q) => q.idle()));
    this.queues.clear();
  }

  /** Whether anything is ever sent to `destination` (sending on, not us, a server name). */
  private sends(destination: string): boolean {
    return this.s.config.send_federation && destination !== this.s.config.server_name && tryParseServerName(destination) !== undefined;
  }

  private queue(destination: string): DestinationQueue | undefined {
    if (!this.sends(destination)) return undefined;
    let q = this.queues.get(destination);
    if (!q) {
      const self = this;
      q = new DestinationQueue(
        {
          s: this.s,
          store: this.store,
          signal: this.abort.signal,
          nextTxnId: () => `${self.txnBase}_${++self.txnSeq}`,
          get stopped() {
            return self.stopping;
          },
        },
        destination,
      );
      this.queues.set(destination, q);
    }
    return q;
  }

  /** PDUs were queued for these destinations (or they may be back): send. */
  wake(destinations: Iterable<string>): void {
    if (this.stopping || !this.started) return;
    for (const d of destinations) this.queue(d)?.wake();
  }

  /**
   * Sends a member event a remote server completed through us (send_join / send_leave) to the other
   * servers in the room, on that server's behalf, as the resident server does (spec "Joining Rooms": "the
   * membership event sent to other servers by the resident server"; Synapse's send_on_behalf_of): the
   * event's own server is left out, as are we. Queued durably like our own events.
   */
  async sendOnBehalfOf(origin: string, event: StoredEvent): Promise<void> {
    if (!this.s.config.send_federation || this.stopping || event.stateGroup === null) return;
    const state = (await this.s.rooms.stateGroups.getMany([event.stateGroup])).get(event.stateGroup);
    if (!state) return;
    const acl = await aclOfState(this.s, state);
    const destinations = (await withPartialStateServers(this.s, event.roomId, await joinedServersOfState(this.s, event.roomId, state))).filter(
      (d) => d !== origin && d !== this.s.config.server_name && (!acl || serverAllowedByAcl(acl, d)),
    );
    if (destinations.length === 0) return;
    const rows = destinations.map((destination) => ({ destination, streamOrdering: event.streamOrdering, roomId: event.roomId, eventId: event.eventId }));
    await this.s.storage.sql.transaction((tx) => this.store.enqueue(tx, rows));
    this.wake(destinations);
  }

  private withEdus(destinations: Iterable<string>, add: (q: DestinationQueue) => void): void {
    if (this.stopping || !this.started) return;
    for (const d of destinations) {
      const q = this.queue(d);
      if (!q) continue;
      add(q);
      q.wake();
    }
  }

  sendTyping(destinations: Iterable<string>, roomId: string, userId: string, typing: boolean): void {
    this.withEdus(destinations, (q) => q.edus.addTyping(roomId, userId, typing));
  }

  sendReceipts(destinations: Iterable<string>, receipts: readonly ReceiptItem[]): void {
    this.withEdus(destinations, (q) => receipts.forEach((r) => q.edus.addReceipt(r)));
  }

  sendPresence(destinations: Iterable<string>, updates: readonly PresenceItem[]): void {
    this.withEdus(destinations, (q) => updates.forEach((p) => q.edus.addPresence(p)));
  }

  /** Any other EDU, as given, held in memory (lost on a restart). */
  sendEdu(destinations: Iterable<string>, edu: Edu): void {
    this.withEdus(destinations, (q) => q.edus.addOther(edu));
  }

  /**
   * Queues an EDU that must arrive (device list and signing key updates, to-device messages) in the
   * producer's transaction `tx`: kept in storage until each destination acknowledged it, across
   * restarts and outages. Returns the destinations to `wake` once `tx` committed.
   */
  async queueDurableEdu(tx: SqlExecutor, destinations: Iterable<string>, edu: Edu): Promise<string[]> {
    const targets = [...new Set(destinations)].filter((d) => this.sends(d));
    if (targets.length > 0) await this.store.enqueueEdu(tx, targets, edu, this.s.clock.now());
    return targets;
  }

  /** queueDurableEdu in a transaction of its own, then sends. */
  async sendDurableEdu(destinations: Iterable<string>, edu: Edu): Promise<void> {
    const targets = await this.s.storage.sql.transaction((tx) => this.queueDurableEdu(tx, destinations, edu));
    this.wake(targets);
  }

  /**
   * A signed request from `origin` arrived: if we had it marked down, it is up — reset its backoff and
   * send what waits (Synapse does the same). Cheap when it was not down.
   */
  remoteIsUp(origin: string): void {
    if (this.stopping || !this.started) return;
    const q = this.queues.get(origin);
    if (!q?.current || !isDown(q.current)) return;
    q.markUp().catch((err: unknown) => this.s.log.warn({ err, origin }, "could not reset a destination's backoff"));
  }

  /** Trims the queues of destinations that are down to their newest PDUs per room. */
  private async trimDown(): Promise<void> {
    const down = [...this.queues.values()].filter((q) => q.current && isDown(q.current)).map((q) => q.destination);
    try {
      const dropped = await this.store.trim(CATCH_UP_KEEP_PER_ROOM, down, stickyKeptAt(this.s));
      if (dropped > 0) this.s.log.info({ dropped, destinations: down.length }, "federation queues of unreachable destinations trimmed");
    } catch (err) {
      this.s.log.warn({ err }, "trimming federation queues failed");
    }
  }

  /** One destination's state: backoff (persisted), PDUs queued, EDUs pending, next attempt. */
  async describe(destination: string): Promise<DestinationState | undefined> {
    const row = (await this.store.getDestination(destination)) ?? this.queues.get(destination)?.current;
    const queued = (await this.store.queueSizes([destination])).get(destination) ?? 0;
    const durableEdus = (await this.store.eduQueueSizes([destination])).get(destination) ?? 0;
    if (!row && queued === 0 && durableEdus === 0 && !this.queues.has(destination)) return undefined;
    const st = this.stateOf(row ?? upState(destination), queued);
    return { ...st, pendingEdus: st.pendingEdus + durableEdus };
  }

  /** The state of several destinations as stored (admin listing). */
  async describeMany(rows: readonly DestinationRow[]): Promise<DestinationState[]> {
    const sizes = await this.store.queueSizes(rows.map((r) => r.destination));
    return rows.map((r) => this.stateOf(r, sizes.get(r.destination) ?? 0));
  }

  /** The state with the EDUs held in memory (describe and queueStates add the durable ones). */
  private stateOf(row: DestinationRow, queued: number): DestinationState {
    return { ...row, down: isDown(row), nextAttemptTs: retryAt(row), queuedPdus: queued, pendingEdus: this.queues.get(row.destination)?.edus.size ?? 0 };
  }

  /** Every destination this process has a queue for (all with PDUs queued, from start): metrics. */
  async queueStates(): Promise<QueueState[]> {
    const queues = [...this.queues.values()];
    const names = queues.map((q) => q.destination);
    const [sizes, durable] = await Promise.all([this.store.queueSizes(names), this.store.eduQueueSizes(names)]);
    return queues.map((q) => {
      const st = this.stateOf(q.current ?? upState(q.destination), sizes.get(q.destination) ?? 0);
      return { ...st, pendingEdus: st.pendingEdus + (durable.get(q.destination) ?? 0), transactionsSent: q.sent };
    });
  }

  /** Transactions sent to `destination` since start (tests and metrics). */
  transactionsSent(destination: string): number {
    return this.queues.get(destination)?.sent ?? 0;
  }
}

/** The sender runs with the server (declared in src/main.ts): started at boot, stopped before storage closes. */
export const federationSending: BackgroundTask = (s) => {
  s.federationSender.start().catch((err: unknown) => s.log.error({ err }, "the federation sender could not start"));
  return () => s.federationSender.stop();
};
