// One destination's sending loop: at most one transaction in flight; each takes the oldest queued PDUs
// (up to 50, in stream order) and EDUs (up to 100: the durable ones queued in storage first, then the
// in-memory buffer's); on success the next one follows at once until
// nothing is left. A failed transaction is tried again a few times shortly after (in memory); while the
// destination still does not answer it backs off (backoff.ts, persisted), keeps its
// PDUs queued and the latest of its EDUs, logs once when it goes down and once when it comes back, and
// — catching up after an outage — first trims each room's queue to its newest CATCH_UP_KEEP_PER_ROOM
// PDUs (the destination fetches anything older it needs with get_missing_events / backfill), keeping
// those still sticky (MSC4354: "Large volumes of events to send MUST NOT cause the sticky event to be
// dropped from the send queue").
import { createHash } from "node:crypto";
import type { Services } from "../../domain/services.ts";
import { afterFailure, afterSuccess, isDown, quickRetryDelay, retryAt, upState } from "./backoff.ts";
import { EduBuffer } from "./edu-buffer.ts";
import type { DestinationRow, SenderStore } from "./store.ts";
import { MAX_EDUS_PER_TRANSACTION, MAX_PDUS_PER_TRANSACTION, pdusOf, sendTransaction } from "./transaction.ts";

/**
 * How many queued PDUs of one room a destination that was down is sent when it comes back: the newest
 * this many, all in order (Synapse's catch-up sends only the newest event of each room; Weft sends more,
 * so a short outage loses nothing, and bounds what a long one leaves queued).
 */
export const CATCH_UP_KEEP_PER_ROOM = 200;

/** The time at which still-sticky PDUs survive a trim (MSC4354, with msc4354_enabled), else undefined. */
export function stickyKeptAt(s: Services): number | undefined {
  return s.config.experimental_features.msc4354_enabled ? s.clock.now() : undefined;
}

export interface QueueContext {
  s: Services;
  store: SenderStore;
  signal: AbortSignal;
  /** A fresh txn id, for a transaction of in-memory EDUs only. */
  nextTxnId(): string;
  readonly stopped: boolean;
}

/**
 * The txn id of a transaction carrying queued PDUs or durable EDUs: a digest of what it carries (their
 * queue positions, which are never reused, and the in-memory EDUs beside them). The same transaction
 * tried again — shortly, after the destination's backoff, after a restart, or by the instance that took
 * the federation sender's lease over from a killed one — goes under the same id, so the receiver, which
 * dedupes by origin and txn id, handles it once (Server-Server API "Transactions"). Content that changed
 * meanwhile (a trim, EDUs added) makes another id: its PDUs are deduplicated by event id anyway.
 */
export function durableTxnId(destination: string, pduPositions: readonly number[], eduIds: readonly number[], edus: readonly unknown[]): string {
  const digest = createHash("sha256").update(JSON.stringify([destination, pduPositions, eduIds, edus])).digest("base64url");
  return `q${digest.slice(0, 27)}`;
}

export class DestinationQueue {
  readonly edus: EduBuffer;
  private state: DestinationRow | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  /** Transactions failed in a row while the destination is still counted up (quick retries made). */
  private failedInARow = 0;
  /** Transactions sent since this process started (tests and metrics). */
  sent = 0;

  constructor(private readonly c: QueueContext, readonly destination: string) {
    this.edus = new EduBuffer(() => c.s.clock.now());
  }

  private txnIdFor(rows: readonly { streamOrdering: number }[], durable: readonly { id: number }[], memory: readonly unknown[]): string {
    if (rows.length === 0 && durable.length === 0) return this.c.nextTxnId();
    return durableTxnId(this.destination, rows.map((r) => r.streamOrdering), durable.map((e) => e.id), memory);
  }

  /** The backoff state (undefined until first read from storage). */
  get current(): DestinationRow | undefined {
    return this.state;
  }

  get busy(): boolean {
    return this.running !== undefined;
  }

  /** Something was queued (or the destination may be back): send what is there, unless backing off. */
  wake(): void {
    if (this.c.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.run()
      .catch((err: unknown) => this.c.s.log.error({ err, destination: this.destination }, "the federation sender loop failed"))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** The destination contacted us: it is up. Resets the backoff and sends what waits. */
  async markUp(): Promise<void> {
    const state = await this.load();
    if (!isDown(state)) {
      // Between quick retries: try again now.
      if (this.failedInARow > 0 && this.timer) {
        this.cancelTimer();
        this.wake();
      }
      return;
    }
    this.cancelTimer();
    await this.recordSuccess(state, "it contacted us");
    this.wake();
  }

  /** Waits for the transaction in flight, if any (shutdown). */
  async idle(): Promise<void> {
    this.cancelTimer();
    await this.running;
  }

  private cancelTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Sets the state read at start-up. */
  prime(row: DestinationRow): void {
    this.state ??= row;
  }

  private async load(): Promise<DestinationRow> {
    this.state ??= (await this.c.store.getDestination(this.destination)) ?? upState(this.destination);
    return this.state;
  }

  private schedule(delayMs: number): void {
    this.cancelTimer();
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.wake();
    }, Math.max(0, delayMs));
    this.timer.unref();
  }

  private async recordSuccess(state: DestinationRow, why: string): Promise<void> {
    const now = this.c.s.clock.now();
    if (isDown(state)) {
      this.c.s.log.info({ destination: this.destination, downForMs: now - (state.failureTs ?? now), why }, "federation destination is back up: sending what waited");
      this.state = afterSuccess(state, now);
      await this.c.store.saveDestination(this.state);
    } else {
      this.state = afterSuccess(state, now);
    }
  }

  private async run(): Promise<void> {
    const { s, store } = this.c;
    let state = await this.load();
    let trimmed = false;
    for (;;) {
      if (this.c.stopped) return;
      if (isDown(state)) {
        const wait = retryAt(state) - s.clock.now();
        if (wait > 0) return this.schedule(wait);
        if (!trimmed) {
          trimmed = true;
          const dropped = await store.trim(CATCH_UP_KEEP_PER_ROOM, [this.destination], stickyKeptAt(s));
          if (dropped > 0) s.log.info({ destination: this.destination, dropped, keptPerRoom: CATCH_UP_KEEP_PER_ROOM }, "catching up: older queued PDUs dropped");
        }
      }
      const rows = await store.next(this.destination, MAX_PDUS_PER_TRANSACTION);
      // Durable EDUs first (in the order queued), then what the in-memory buffer holds, 100 in all.
      const durable = await store.nextEdus(this.destination, MAX_EDUS_PER_TRANSACTION);
      const taken = this.edus.take(MAX_EDUS_PER_TRANSACTION - durable.length);
      const edus = [...durable.map(({ edu_type, content }) => ({ edu_type, content })), ...taken.edus];
      if (rows.length === 0 && edus.length === 0) return;
      const pdus = await pdusOf(s, rows);
      const outcome = pdus.length === 0 && edus.length === 0
        ? ({ kind: "delivered" } as const) // only events that no longer exist: nothing to send
        : await sendTransaction(s, this.destination, this.txnIdFor(rows, durable, taken.edus), pdus, edus, this.c.signal);
      if (outcome.kind === "failed") {
        this.edus.restore(taken);
        if (this.c.stopped) return; // aborted by shutdown: not the destination's fault
        const now = s.clock.now();
        const wasDown = isDown(state);
        if (!wasDown) {
          const delay = quickRetryDelay(++this.failedInARow, s.config.federation);
          if (delay !== undefined) {
            s.log.debug({ destination: this.destination, reason: outcome.reason, retryInMs: delay, attempt: this.failedInARow }, "a transaction failed: trying it again shortly");
            return this.schedule(delay);
          }
        }
        this.failedInARow = 0;
        state = this.state = afterFailure(state, now, s.config.federation);
        await store.saveDestination(state);
        const log = { destination: this.destination, reason: outcome.reason, retryInMs: state.retryInterval, queuedPdus: rows.length, queuedEdus: durable.length };
        if (!wasDown) s.log.warn(log, "federation destination is down: its queue waits");
        else s.log.debug(log, "federation destination still down");
        return this.schedule(state.retryInterval);
      }
      this.sent++;
      this.failedInARow = 0;
      if (outcome.kind === "refused") s.log.warn({ destination: this.destination, reason: outcome.reason, pdus: rows.length, edus: edus.length }, "the destination refused a transaction: dropped");
      await store.remove(this.destination, rows.map((r) => r.streamOrdering));
      await store.removeEdus(this.destination, durable.map((e) => e.id));
      await this.recordSuccess(state, "a transaction went through");
      state = this.state!;
    }
  }
}
