// Allocators for stream positions and state group ids, and the "persisted up to" position of a stream.
// PostgreSQL uses sequences; SQLite has a single writer process, so an in-process counter seeded from the
// table's maximum suffices. Positions must be allocated inside a transaction (`sql.transaction`).
//
// Why a stream needs more than MAX(position): on PostgreSQL two transactions (e.g. sends in two rooms)
// take positions 11 and 12 from the sequence and may commit in the other order. A reader that sees 12
// committed and reads "everything up to 12" skips 11, which commits a moment later below its token, and
// never sees it. So every stream with allocated positions hands readers (sync tokens, the notifier,
// /messages heads) its *persisted-up-to* position instead: the highest P such that every position <= P
// has committed or been abandoned (rolled back). StreamIdTracker keeps it: `next(tx)` records the
// allocation as in flight until `tx` settles (sql.ts `onSettled`, run after COMMIT or ROLLBACK), and
// `current()` is min(in flight) - 1, or the highest settled position when nothing is in flight. Notices
// of positions above it are held back until it passes them (`whenPersisted`, used by the notifier's gates).
// This is Synapse's StreamIdGenerator / MultiWriterIdGenerator `get_current_token`.
//
// Several processes (redis.enabled, src/domain/cluster/): each process only knows its own in-flight
// positions. `joinCluster` names the stream's other writers; `observe(instance, pos)` records what a
// writer announced as its own persisted-up-to position (replication messages, the stream_positions
// table). `current()` is then the minimum of this process's own position and every other writer's, as
// Synapse's MultiWriterIdGenerator: a writer with nothing in flight counts as "up to the highest
// position seen from anyone" (`ownPosition`), so an idle writer never holds the others back — safe
// because all writers draw from one sequence, and values this process had reserved below a position
// seen elsewhere are dropped (they would come after it). Without `joinCluster` (one process) none of
// this runs and the tracking above is exact.
import type { Sql, SqlExecutor } from "../../storage/sql.ts";

/** Something that can hold back work until a stream position is persisted (the notifier's gates). */
export interface PositionGate {
  /** Runs `fn` once every position <= `position` has settled: at once when it already has. */
  whenPersisted(position: number, fn: () => void): void;
}

export interface StreamIdTrackerOptions {
  /** The PostgreSQL sequence positions come from. */
  sequence: string;
  /** SQL returning `m`, the highest position already used (committed) at start-up. */
  seedSql: string;
}

/** How many values a PostgreSQL stream asks of its sequence at once (see `reserved`). */
const SEQUENCE_BLOCK = 64;

/** A stream's position allocator and its persisted-up-to position (see the module comment). */
export class StreamIdTracker implements PositionGate {
  private seed: Promise<number> | undefined;
  private seeded = false;
  private seedValue = 0;
  /** Highest position allocated (SQLite's counter; on PostgreSQL the highest returned by the sequence). */
  private allocated = 0;
  /** Highest position settled (committed or abandoned), or the seed. */
  private settledMax = 0;
  /** Positions allocated and not yet settled; an entry is a lower bound while its nextval is under way. */
  private readonly inFlight = new Set<{ pos: number }>();
  /**
   * PostgreSQL: values taken from the sequence and not handed out yet, ascending, all above `allocated`.
   * The sequence is asked for a block at a time, so most allocations need no query (no round trip before
   * a send's writes). Positions are handed out in ascending order whatever order the blocks arrive in
   * (values at or below `allocated` are dropped: gaps, as a rolled-back nextval leaves), so a position
   * handed out later never lies below one that has settled. Unused values are gaps after a restart.
   */
  private reserved: number[] = [];
  private persisted = 0;
  private readonly held: { pos: number; fn: () => void }[] = [];
  /** Several processes: the stream's other writers (their positions bound `current()`), what each announced. */
  private others: readonly string[] = [];
  private readonly remote = new Map<string, number>();
  /** The highest position any other process announced (0: none). */
  private remoteMax = 0;
  /** Called when this process's own position (`ownPosition`) moves (replication publishes it). */
  private onOwnAdvance: ((pos: number) => void) | undefined;
  private ownLast = 0;

  constructor(private readonly sql: Sql, private readonly opts: StreamIdTrackerOptions) {}

  private seedOnce(): Promise<number> {
    return (this.seed ??= this.sql.get<{ m: number | null }>(this.opts.seedSql).then((r) => {
      const m = Number(r?.m ?? 0);
      if (!this.seeded) {
        this.seeded = true;
        this.seedValue = m;
        this.allocated = Math.max(this.allocated, m);
        this.settledMax = Math.max(this.settledMax, m);
        this.persisted = Math.max(this.persisted, m);
      }
      return m;
    }));
  }

  /**
   * Allocates the next position inside transaction `tx` (which must offer `onSettled`: a transaction of
   * `sql.transaction`, or a Prisma one run through `runWithSettleHooks`). The position stays in flight,
   * holding the persisted position below it, until the transaction commits or rolls back.
   */
  async next(tx: SqlExecutor): Promise<number> {
    if (!tx.onSettled) throw new Error("stream positions must be allocated inside a transaction that reports when it settles");
    await this.seedOnce();
    // Registered before the sequence is asked: whatever it returns is above every position known now.
    const slot = { pos: this.allocated + 1 };
    this.inFlight.add(slot);
    let settled = false;
    tx.onSettled(() => {
      settled = true;
      this.settle(slot);
    });
    try {
      if (this.sql.dialect === "postgres") slot.pos = (await this.fromSequence(tx, 1))[0]!;
      else slot.pos = this.allocated + 1;
    } catch (err) {
      if (!settled) this.settle(slot);
      throw err;
    }
    if (slot.pos > this.allocated) this.allocated = slot.pos;
    return slot.pos;
  }

  /**
   * `n` positions at once, ascending (one query on PostgreSQL: a commit of many events asks once); each
   * is in flight until `tx` settles, as with `next`.
   */
  async nextMany(tx: SqlExecutor, n: number): Promise<number[]> {
    if (n === 1) return [await this.next(tx)];
    if (n === 0) return [];
    if (!tx.onSettled) throw new Error("stream positions must be allocated inside a transaction that reports when it settles");
    await this.seedOnce();
    const slots = Array.from({ length: n }, (_, i) => ({ pos: this.allocated + 1 + i }));
    for (const slot of slots) this.inFlight.add(slot);
    let settled = false;
    tx.onSettled(() => {
      settled = true;
      for (const slot of slots) this.settle(slot);
    });
    try {
      if (this.sql.dialect === "postgres") (await this.fromSequence(tx, n)).forEach((id, i) => (slots[i]!.pos = id));
    } catch (err) {
      if (!settled) for (const slot of slots) this.settle(slot);
      throw err;
    }
    const top = slots[n - 1]!.pos;
    if (top > this.allocated) this.allocated = top;
    return slots.map((s) => s.pos);
  }

  /**
   * `n` ascending positions above every one handed out so far, from the reserved block (no query) or
   * from a new block asked of the sequence in `tx`. Synchronous after the last await: no other
   * allocation can come between choosing the positions and `allocated` moving past them.
   */
  private async fromSequence(tx: SqlExecutor, n: number): Promise<number[]> {
    for (;;) {
      if (this.reserved.length >= n) {
        const out = this.reserved.splice(0, n);
        if (out[n - 1]! > this.allocated) this.allocated = out[n - 1]!;
        return out;
      }
      const rows = await tx.all<{ id: number }>(`SELECT nextval('${this.opts.sequence}') AS id FROM generate_series(1, ?::int)`, [Math.max(n, SEQUENCE_BLOCK)]);
      const fresh = rows.map((r) => Number(r.id)).filter((id) => id > this.allocated);
      this.reserved = [...new Set([...this.reserved.filter((id) => id > this.allocated), ...fresh])].sort((a, b) => a - b);
    }
  }

  private settle(slot: { pos: number }): void {
    if (!this.inFlight.delete(slot)) return;
    if (slot.pos > this.settledMax) this.settledMax = slot.pos;
    this.advance();
  }

  /** This process's own bound: below its lowest in-flight position, else the highest settled or seen. */
  ownPosition(): number {
    let low = Infinity;
    for (const s of this.inFlight) if (s.pos < low) low = s.pos;
    const top = Math.max(this.settledMax, this.remoteMax);
    return low === Infinity ? top : Math.min(low - 1, top);
  }

  private advance(): void {
    const own = this.ownPosition();
    let now = own;
    for (const w of this.others) now = Math.min(now, this.remote.get(w) ?? this.seedValue);
    if (this.onOwnAdvance && own > this.ownLast) {
      this.ownLast = own;
      this.onOwnAdvance(own);
    }
    if (now <= this.persisted) return;
    this.persisted = now;
    if (this.held.length === 0) return;
    const ready = this.held.filter((h) => h.pos <= now);
    if (ready.length === 0) return;
    for (let i = this.held.length - 1; i >= 0; i--) if (this.held[i]!.pos <= now) this.held.splice(i, 1);
    ready.sort((a, b) => a.pos - b.pos);
    for (const h of ready) h.fn();
  }

  /**
   * Several processes: `others` are the stream's writers besides this process (their announced positions
   * bound `current()`); `onOwnAdvance` hears this process's own position move. Reads the seed first.
   */
  async joinCluster(others: readonly string[], onOwnAdvance: (pos: number) => void, recorded: ReadonlyMap<string, number> = new Map()): Promise<void> {
    await this.seedOnce();
    this.others = others;
    this.onOwnAdvance = onOwnAdvance;
    this.ownLast = this.ownPosition();
    // The table's maximum (the seed) may lie above a position another writer still has in flight: until
    // it says more, each writer counts as up to what it recorded (stream_positions). Called before any
    // reader, so the position may go back here, once.
    for (const w of others) {
      const at = recorded.get(w);
      if (at !== undefined && at < this.seedValue) {
        this.remote.set(w, at);
        this.persisted = Math.min(this.persisted, at);
      }
    }
  }

  /**
   * Writer `instance` announced its own persisted-up-to position `pos` (positions only grow). Every
   * position this process allocates from now on is above it: reserved values at or below it are dropped.
   */
  observe(instance: string, pos: number): void {
    if (!this.seeded) return; // joinCluster reads the seed before anything is observed
    if (pos <= (this.remote.get(instance) ?? -Infinity)) return;
    this.remote.set(instance, pos);
    if (pos > this.remoteMax) {
      this.remoteMax = pos;
      if (pos > this.allocated) this.allocated = pos;
      if (this.reserved.length > 0 && this.reserved[0]! <= pos) this.reserved = this.reserved.filter((id) => id > pos);
    }
    this.advance();
  }

  /** What writer `instance` last announced (undefined: nothing yet). */
  positionOf(instance: string): number | undefined {
    return this.remote.get(instance);
  }

  /** The persisted-up-to position: every position at or below it has committed or been abandoned. */
  async current(): Promise<number> {
    if (!this.seeded) await this.seedOnce();
    return this.persisted;
  }

  /** The position the table started from (its maximum when first read); undefined before that read. */
  seedPosition(): number | undefined {
    return this.seeded ? this.seedValue : undefined;
  }

  /**
   * The highest position handed out so far (or the seed): every position allocated from now on is above
   * it, so its transaction settles later. Undefined before the first read of the table.
   */
  allocatedMax(): number | undefined {
    return this.seeded ? this.allocated : undefined;
  }

  /** `current()`, without a promise once the table was read (the common case: sync reads it per request). */
  now(): number | Promise<number> {
    return this.peek() ?? this.current();
  }

  /** `current()` without waiting; undefined before the first read of the table. */
  peek(): number | undefined {
    return this.seeded ? this.persisted : undefined;
  }

  whenPersisted(position: number, fn: () => void): void {
    // Nothing can be in flight before the seed was read (allocations read it first).
    if (!this.seeded || position <= this.persisted) fn();
    else this.held.push({ pos: position, fn });
  }
}

/** Every allocator of positions and ids is a tracker (state group ids simply never ask for `current()`). */
export type IdAllocator = StreamIdTracker;

/**
 * The allocator of `table.column` from `sequence` (PostgreSQL) or an in-process counter (SQLite), seeded
 * from the column's maximum, or from `seedSql` (returning `m`) when rows get deleted.
 */
export function idAllocator(sql: Sql, table: string, column: string, sequence: string, seedSql?: string): IdAllocator {
  return new StreamIdTracker(sql, { sequence, seedSql: seedSql ?? `SELECT MAX(${column}) AS m FROM ${table}` });
}

/**
 * A stream position kept as the highest position written (presence, receipts: their stores answer it
 * after each write), read once from the table at first use. `current()` answers a number once known.
 */
export class WrittenMax {
  private known: number | undefined;
  private reading: Promise<number> | undefined;
  constructor(private readonly readMax: () => Promise<number>) {}

  current(): number | Promise<number> {
    return this.known ?? (this.reading ??= this.readMax().then((pos) => (this.known ??= pos)));
  }

  /** A write at `pos` committed. Positions are allocated above every stored one, so it is at least the table's maximum. */
  advance(pos: number): void {
    if (this.known === undefined || pos > this.known) this.known = pos;
  }
}
