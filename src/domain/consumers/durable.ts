// Durable consumers of the events stream (the federation sender, push, application services ...): each
// handles every committed event once, in stream order, from its own persisted position. A batch's
// effects and the consumer's new position are written in one transaction, so a consumer that throws,
// crashes or restarts resumes right after the last batch it completed: nothing missed, nothing repeated.
// A consumer is woken by commit notices and takes their events from a bounded in-memory backlog; when it
// is behind that (after a restart, or when it falls behind the backlog) it catches up from storage. It
// runs beside the send path and never holds it up. Declared in src/main.ts (`consumers`).
// ARCHITECTURE "Consumers of the event stream" (Synapse keeps such positions per sender / pusher).
import type { Services } from "../services.ts";
import type { StoredEvent } from "../store/events.ts";
import type { Param, SqlExecutor } from "../../storage/sql.ts";
import type { Commit } from "./commit-feed.ts";
import type { Fence } from "../cluster/leases.ts";

export interface DurableConsumer {
  /** Stable name: the key of its stored position. Renaming a consumer starts it afresh. */
  name: string;
  /**
   * Where a consumer without a stored position starts: after everything committed so far ("now", the
   * default), or at the start of the stream ("beginning"). The start is stored at once.
   */
  startAt?: "now" | "beginning";
  /** Most events handed over in one batch (default 100). */
  batchSize?: number;
  /** Most events kept in memory for it (default 1000); beyond that it reads them back from storage. */
  backlog?: number;
  /**
   * How long after a wake-up it waits before handling (default 0: at once), so that the events of several
   * commits share one batch and one transaction (the search indexer: one FTS/GIN write per batch instead
   * of one per message). After a batch that was not full it waits again before the next one, rather
   * than taking at once the one or two commits that landed meanwhile. `ConsumerRunner.reach` skips the wait.
   */
  delayMs?: number;
  /**
   * Handles committed events in stream order: every kind, outliers, rejected and soft-failed ones
   * included (`inTimeline` tells the timeline's). Its effects go through `tx`; the new position is written
   * in the same transaction once it returns. If it throws, both roll back and the same events are offered
   * again after a delay that grows with each failure.
   */
  handle(tx: SqlExecutor, events: readonly StoredEvent[], s: Services): Promise<void>;
  /**
   * What handling decides depends only on the events and the state they carry (their state groups), and
   * it never reads what its own writes return: then `handle` runs outside a transaction (reads go to
   * storage, writes are recorded and written after it returns, in one transaction with the position),
   * and a batch that wrote nothing commits nothing — its position is kept in memory and stored with the
   * next batch that writes, within `IDLE_PERSIST_MS`, or at stop. After a crash in between, those
   * effect-free events are offered again and, by the first rule, again write nothing. (The federation
   * sender on a room no other server is in: one write transaction less per event sent.)
   */
  replayable?: boolean;
}

const STREAM = "events";
const RETRY_FIRST_MS = 50;
const RETRY_MAX_MS = 30_000;
/** How long a replayable consumer's position may stay ahead of the stored one (see `replayable`). */
const IDLE_PERSIST_MS = 1_000;

/**
 * The executor a replayable consumer handles a batch with, outside any transaction: reads go straight to
 * storage (the events and their state do not change), writes and settle callbacks are recorded, to be
 * replayed in one transaction with the new position — or, when there are none, not to open one at all.
 */
class WriteRecorder implements SqlExecutor {
  readonly writes: [string, Param[] | undefined][] = [];
  readonly settled: ((committed: boolean) => void)[] = [];
  constructor(private readonly sql: SqlExecutor) {}
  get dialect() {
    return this.sql.dialect;
  }
  /** Recorded, not run: a replayable handler never reads what its writes return (the count is 0). */
  async run(sql: string, params?: Param[]) {
    this.writes.push([sql, params]);
    return 0;
  }
  all<T>(sql: string, params?: Param[]) {
    return this.sql.all<T>(sql, params);
  }
  get<T>(sql: string, params?: Param[]) {
    return this.sql.get<T>(sql, params);
  }
  onSettled(fn: (committed: boolean) => void) {
    this.settled.push(fn);
  }
}

/** One consumer's loop: its position, its backlog, and the one batch it may be handling. */
class ConsumerLoop {
  /** Handled up to here (undefined until read from storage). */
  private position: number | undefined;
  /** Stored up to here (below `position` while a replayable consumer's effect-free batches are unsaved). */
  private stored: number | undefined;
  private persistTimer: NodeJS.Timeout | undefined;
  /** The pending delayed wake-up (see `delayMs`). */
  private delayTimer: NodeJS.Timeout | undefined;
  /** The pending wake-up at the end of the turn (see `kickAfterTurn`). */
  private turnEnd: NodeJS.Immediate | undefined;
  /** Callers of `reach` waiting for the position to get to theirs. */
  private waiters: { position: number; resolve: () => void }[] = [];
  /** Offered events not yet handled, by position. */
  private backlog: StoredEvent[] = [];
  /** Positions allocated from here on reach `offer` (Infinity until started). */
  private startedFrom = Infinity;
  /** The highest position dropped from the full backlog. */
  private droppedUpTo = -Infinity;
  private running: Promise<void> | undefined;
  private again = false;
  private failures = 0;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly batchSize: number;
  private readonly backlogSize: number;

  constructor(private readonly s: Services, readonly consumer: DurableConsumer, private readonly fence?: Fence) {
    this.batchSize = Math.max(1, consumer.batchSize ?? 100);
    this.backlogSize = Math.max(1, consumer.backlog ?? 1000);
  }

  async start(): Promise<void> {
    const ids = this.s.rooms.events.streamIds;
    const current = await ids.current();
    // Positions handed out from now on settle later, and their commits reach `offer`.
    this.startedFrom = ids.allocatedMax() ?? current;
    let pos = await this.s.consumerPositions.get(this.consumer.name, STREAM);
    if (pos === undefined) {
      pos = this.consumer.startAt === "beginning" ? 0 : current;
      const start = pos;
      await this.s.storage.sql.transaction((tx) => this.setPosition(tx, start));
    }
    this.position = pos;
    this.stored = pos;
    this.dropHandled();
    this.kickNow();
  }

  /** A commit settled: keep its events (bounded) and wake up once its position is persisted. */
  offer(c: Commit): void {
    if (this.stopped) return;
    for (const e of c.events) {
      if (this.position !== undefined && e.streamOrdering <= this.position) continue;
      let i = this.backlog.length;
      while (i > 0 && this.backlog[i - 1]!.streamOrdering > e.streamOrdering) i--;
      this.backlog.splice(i, 0, e);
    }
    if (this.backlog.length > this.backlogSize) {
      const dropped = this.backlog.splice(0, this.backlog.length - this.backlogSize);
      this.droppedUpTo = Math.max(this.droppedUpTo, dropped[dropped.length - 1]!.streamOrdering);
    }
    this.s.rooms.events.streamIds.whenPersisted(c.notice.position, () => this.kickAfterTurn());
  }

  /**
   * Kicks once the current turn of the event loop is over: the commit's own request answers first (its
   * answer is written in this turn), and the consumer's batch runs while the client reads it instead of
   * before. One pending wake-up per loop, however many commits settle in the turn.
   */
  private kickAfterTurn(): void {
    if (this.turnEnd || this.stopped) return;
    this.turnEnd = setImmediate(() => {
      this.turnEnd = undefined;
      this.kick();
    });
  }

  /** Wakes the loop: at once, or after the consumer's `delayMs` (one pending wake-up at a time). */
  kick(): void {
    const delay = this.consumer.delayMs ?? 0;
    if (delay <= 0) return this.kickNow();
    if (this.delayTimer || this.stopped) return;
    this.delayTimer = setTimeout(() => {
      this.delayTimer = undefined;
      this.kickNow();
    }, delay);
    this.delayTimer.unref();
  }

  private kickNow(): void {
    if (this.delayTimer) clearTimeout(this.delayTimer);
    this.delayTimer = undefined;
    if (this.stopped || this.position === undefined || this.retry) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.run().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.kickNow();
      }
    });
  }

  private dropHandled(): void {
    const pos = this.position ?? -Infinity;
    let n = 0;
    while (n < this.backlog.length && this.backlog[n]!.streamOrdering <= pos) n++;
    if (n > 0) this.backlog.splice(0, n);
  }

  /**
   * Every committed event above this position is in the backlog (or handled). Under a lease the backlog
   * holds only this process's commits, not those of the other instances (nor those of a previous holder
   * of the lease after this process started): such a consumer reads every batch from storage.
   */
  private get completeFrom(): number {
    if (this.fence) return Infinity;
    return Math.max(this.startedFrom, this.droppedUpTo);
  }

  /** The next events after the position (at most a batch), and the position that handling them reaches. */
  private async nextBatch(target: number): Promise<{ events: StoredEvent[]; end: number }> {
    const pos = this.position!;
    if (pos >= this.completeFrom) {
      const events: StoredEvent[] = [];
      for (const e of this.backlog) {
        if (e.streamOrdering > target) break;
        if (events.length === this.batchSize) return { events, end: events[events.length - 1]!.streamOrdering };
        events.push(e);
      }
      return { events, end: target };
    }
    const upTo = Math.min(target, this.completeFrom);
    const events = await this.s.rooms.events.streamAfter(pos, upTo, this.batchSize);
    return { events, end: events.length === this.batchSize ? events[events.length - 1]!.streamOrdering : upTo };
  }

  private async run(): Promise<void> {
    try {
      for (;;) {
        if (this.stopped) return;
        const target = await this.s.rooms.events.streamIds.current();
        this.wakeWaiters();
        if (this.position! >= target) return;
        const { events, end } = await this.nextBatch(target);
        if (events.length > 0 && this.consumer.replayable) await this.handleReplayable(events, end);
        else if (events.length > 0) {
          await this.s.storage.sql.transaction(async (tx) => {
            await this.fence?.(tx);
            await this.consumer.handle(tx, events, this.s);
            await this.s.consumerPositions.set(tx, this.consumer.name, STREAM, end);
          });
          this.stored = end;
        }
        this.position = end;
        this.failures = 0;
        this.dropHandled();
        this.wakeWaiters();
        // A consumer with a delay lets events gather again before its next batch (under a steady stream,
        // one batch per delay instead of one per commit that lands while a batch is handled), unless its
        // batch was full or a caller of `reach` waits for more.
        if (this.consumer.delayMs && events.length < this.batchSize && this.waiters.length === 0) {
          if (this.position! < (await this.s.rooms.events.streamIds.current())) this.kick();
          return;
        }
      }
    } catch (err) {
      this.failures++;
      const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (this.failures - 1));
      this.s.log.warn({ err, consumer: this.consumer.name, position: this.position, retryInMs: delay }, "a durable consumer failed; retrying");
      if (this.stopped) return;
      this.retry = setTimeout(() => {
        this.retry = undefined;
        this.kickNow();
      }, delay);
      this.retry.unref();
    }
  }

  /**
   * A replayable consumer's batch: handled outside a transaction; what it writes is then written in one
   * transaction with the position. A batch that wrote nothing commits nothing: its position is stored later.
   */
  private async handleReplayable(events: StoredEvent[], end: number): Promise<void> {
    const rec = new WriteRecorder(this.s.storage.sql);
    await this.consumer.handle(rec, events, this.s);
    if (rec.writes.length === 0 && rec.settled.length === 0) {
      this.schedulePersist();
      return;
    }
    await this.s.storage.sql.transaction(async (tx) => {
      for (const [sql, params] of rec.writes) await tx.run(sql, params);
      await this.setPosition(tx, end);
      for (const fn of rec.settled) tx.onSettled!(fn);
    });
    this.stored = end;
  }

  /** Stores the position, under the lease's fence when the consumer runs under one (cluster/leases.ts). */
  private async setPosition(tx: SqlExecutor, position: number): Promise<void> {
    await this.fence?.(tx);
    await this.s.consumerPositions.set(tx, this.consumer.name, STREAM, position);
  }

  private schedulePersist(): void {
    if (this.persistTimer || this.stopped) return;
    this.persistTimer = setTimeout(() => {
      this.persistTimer = undefined;
      void this.persistPosition().catch((err) => this.s.log.warn({ err, consumer: this.consumer.name }, "storing a durable consumer's position failed"));
    }, IDLE_PERSIST_MS);
    this.persistTimer.unref();
  }

  /** Stores the handled position when it is ahead of the stored one (replayable consumers). */
  private async persistPosition(): Promise<void> {
    const pos = this.position;
    if (pos === undefined || this.stored === undefined || pos <= this.stored) return;
    await this.s.storage.sql.transaction((tx) => this.setPosition(tx, pos));
    if (this.stored === undefined || pos > this.stored) this.stored = pos;
  }

  /**
   * Resolves once the consumer has handled every event up to `position` (at once if it has), waking it
   * now rather than after its delay; or after `timeoutMs` (a failing consumer does not hold the caller
   * forever), or when it stops.
   */
  reach(position: number, timeoutMs: number): Promise<void> {
    if (this.stopped || (this.position !== undefined && this.position >= position)) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter = {
        position,
        resolve: () => {
          clearTimeout(timer);
          this.waiters = this.waiters.filter((w) => w !== waiter);
          resolve();
        },
      };
      const timer = setTimeout(waiter.resolve, timeoutMs);
      timer.unref();
      this.waiters.push(waiter);
      this.kickNow();
    });
  }

  private wakeWaiters(): void {
    const pos = this.position;
    if (pos === undefined || this.waiters.length === 0) return;
    const ready = this.waiters.filter((w) => w.position <= pos);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => w.position > pos);
    for (const w of ready) w.resolve();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.delayTimer) clearTimeout(this.delayTimer);
    this.delayTimer = undefined;
    if (this.turnEnd) clearImmediate(this.turnEnd);
    this.turnEnd = undefined;
    for (const w of this.waiters.splice(0)) w.resolve();
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
    if (this.persistTimer) clearTimeout(this.persistTimer);
    this.persistTimer = undefined;
    await this.running;
    await this.persistPosition().catch((err) => this.s.log.warn({ err, consumer: this.consumer.name }, "storing a durable consumer's position failed"));
  }

  get handledUpTo(): number | undefined {
    return this.position;
  }
}

/**
 * Runs the durable consumers: the declared ones started with the server, those of work under a lease
 * (cluster/leased-work.ts) while this instance holds it; all stopped before storage closes.
 */
export class ConsumerRunner {
  private loops: ConsumerLoop[];
  private readonly declared: ConsumerLoop[];

  constructor(private readonly s: Services, consumers: readonly DurableConsumer[]) {
    this.checkNames(consumers);
    this.declared = this.loops = consumers.map((c) => new ConsumerLoop(s, c));
  }

  private checkNames(consumers: readonly DurableConsumer[]): void {
    const names = new Set(this.loops?.map((l) => l.consumer.name) ?? []);
    for (const c of consumers) {
      if (names.has(c.name)) throw new Error(`two durable consumers are named ${c.name}`);
      names.add(c.name);
    }
  }

  async start(): Promise<void> {
    for (const loop of this.declared) await loop.start();
  }

  /**
   * Starts more consumers, each resuming from its stored position, with every position they store checked
   * by `fence` (work under a lease); the function returned stops them (lease lost, or shutdown).
   */
  async add(consumers: readonly DurableConsumer[], fence?: Fence): Promise<() => Promise<void>> {
    this.checkNames(consumers);
    const added = consumers.map((c) => new ConsumerLoop(this.s, c, fence));
    this.loops = [...this.loops, ...added];
    const stop = async () => {
      this.loops = this.loops.filter((l) => !added.includes(l));
      await Promise.all(added.map((l) => l.stop()));
    };
    try {
      for (const loop of added) await loop.start();
    } catch (err) {
      await stop();
      throw err;
    }
    return stop;
  }

  /** The commit listener that wakes every consumer (in-memory; never waits). */
  offer(c: Commit): void {
    for (const loop of this.loops) loop.offer(c);
  }

  /**
   * Resolves once the named consumer has handled everything up to `position` (see ConsumerLoop.reach);
   * at once when no such consumer runs.
   */
  reach(name: string, position: number, timeoutMs = 5_000): Promise<void> {
    return this.loops.find((l) => l.consumer.name === name)?.reach(position, timeoutMs) ?? Promise.resolve();
  }

  /** Where a consumer has got to in this process (undefined before it started). */
  positionOf(name: string): number | undefined {
    return this.loops.find((l) => l.consumer.name === name)?.handledUpTo;
  }

  async stop(): Promise<void> {
    await Promise.all(this.loops.map((l) => l.stop()));
  }
}
