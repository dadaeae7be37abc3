// Leases on background work shared by several instances (table worker_leases; the idea is Synapse's
// worker locks, synapse/storage/databases/main/lock.py): one row per piece of work naming its holder
// instance, a token new at each acquisition, and when it expires — every time read from the database's
// clock, never from a process's, so instances with skewed clocks agree on who holds what.
//  - acquire: one statement, insert-or-take-over-if-expired; it either writes this holder's new token or
//    changes nothing. A lease released on a clean shutdown is free at once; a killed holder's only once
//    it expired.
//  - renew: pushes expiry forward, only while the row still carries this holder's token; it finds another
//    token (taken over after expiry) or fails (database unreachable) → the holder's `lost` callback runs
//    and its work stops at once. Renewals run every `renewMs`, well inside `leaseMs`.
//  - release: deletes the row if it still carries the token (clean shutdown).
//  - fence: inside the transaction that advances a position (a durable consumer's, a pusher's, an
//    application service's transaction queue), an UPDATE of the lease row that must find this holder's
//    token, or the transaction rolls back. On PostgreSQL the UPDATE also locks the row until COMMIT, so a
//    takeover (an UPDATE of the same row) is ordered entirely before or after the advance: a new holder
//    reads positions only after its takeover committed, and every advance it can miss was made under the
//    old token before it. A holder that lost its lease thus never moves a position, whatever it still has
//    in flight. What it cannot fence is a request already on the wire to a peer (see README "Scaling
//    out": receivers deduplicate federation and application-service transactions by txn id). Not fenced,
//    and needing no fence: the federation sender's removal of queued rows a destination acknowledged
//    (whoever removes them, they were delivered), and tasks with no position of their own (expiries,
//    sweeps, delayed events, which take their rows in a transaction of their own): those stop when the
//    lease is lost and their next holder starts them afresh.
// On SQLite there is one process: the table works the same (tests use it), and in production a piece of
// work with a single candidate instance is held without any lease row at all (`heldAlone`).
import { randomUUID } from "node:crypto";
import { MatrixError } from "../errors.ts";
import type { Dialect, Sql, SqlExecutor } from "../../storage/sql.ts";

/**
 * The database's clock in ms, as SQL: one value throughout a statement (PostgreSQL's statement start,
 * fresh for each statement of a transaction; SQLite's 'now' is fixed per statement too).
 */
function dbNow(dialect: Dialect): string {
  return dialect === "postgres" ? "(FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000))::bigint" : "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";
}

export interface LeaseRow {
  name: string;
  holderInstance: string;
  token: string;
  expiresAt: number;
  renewedAt: number;
}

/** The worker_leases table. */
export class LeaseStore {
  constructor(private readonly sql: Sql) {}

  private get now(): string {
    return dbNow(this.sql.dialect);
  }

  /** Takes `name` for `instance` under `token` if nobody holds it or its lease expired; whether it did. */
  async acquire(name: string, instance: string, token: string, leaseMs: number): Promise<boolean> {
    const now = this.now;
    const n = await this.sql.run(
      `INSERT INTO worker_leases (name, holder_instance, token, expires_at, renewed_at) VALUES (?, ?, ?, ${now} + ?, ${now})
       ON CONFLICT (name) DO UPDATE SET holder_instance = excluded.holder_instance, token = excluded.token, expires_at = excluded.expires_at, renewed_at = excluded.renewed_at
       WHERE worker_leases.expires_at <= ${now}`,
      [name, instance, token, leaseMs],
    );
    return n > 0;
  }

  /** Extends the lease of the holder of `token` by `leaseMs` from now; false when another holds it. */
  async renew(name: string, token: string, leaseMs: number): Promise<boolean> {
    const now = this.now;
    return (await this.sql.run(`UPDATE worker_leases SET expires_at = ${now} + ?, renewed_at = ${now} WHERE name = ? AND token = ?`, [leaseMs, name, token])) > 0;
  }

  /** Gives the lease up (clean shutdown): free for the next candidate at once. */
  async release(name: string, token: string): Promise<void> {
    await this.sql.run(`DELETE FROM worker_leases WHERE name = ? AND token = ?`, [name, token]);
  }

  /**
   * Inside `tx`: fails (rolling the transaction back) unless `token` still holds `name`; on PostgreSQL it
   * holds the lease row's lock until the transaction ends (see the header).
   */
  async fence(tx: SqlExecutor, name: string, token: string): Promise<void> {
    const n = await tx.run(`UPDATE worker_leases SET token = token WHERE name = ? AND token = ?`, [name, token]);
    if (n === 0) throw new MatrixError("M_UNKNOWN", `the lease on ${name} was lost: this work no longer runs here`, 503);
  }

  async get(name: string): Promise<LeaseRow | undefined> {
    const r = await this.sql.get<{ name: string; holder_instance: string; token: string; expires_at: number | string; renewed_at: number | string }>(
      `SELECT name, holder_instance, token, expires_at, renewed_at FROM worker_leases WHERE name = ?`,
      [name],
    );
    return r && { name: r.name, holderInstance: r.holder_instance, token: r.token, expiresAt: Number(r.expires_at), renewedAt: Number(r.renewed_at) };
  }
}

/** What work under a lease is given: the check to run in each transaction that advances a position. */
export type Fence = (tx: SqlExecutor) => Promise<void>;

/** Work held without a lease (its only candidate is this instance): nothing to check. */
export const heldAlone: Fence = async () => {};

export interface LeaseTiming {
  /** How long a lease lasts without renewal: a killed holder's work waits this long for another candidate. */
  leaseMs: number;
  /** How often the holder renews and the others try to take over (well inside `leaseMs`). */
  renewMs: number;
}

export interface LeaseCallbacks {
  /** The lease was taken: start the work (positions advanced under `fence`). */
  acquired(fence: Fence, token: string): void | Promise<void>;
  /** The lease is gone (renewal found another holder, or failed): stop the work at once. */
  lost(reason: string): void | Promise<void>;
}

interface Log {
  info(o: object, msg: string): void;
  warn(o: object, msg: string): void;
}

/**
 * One lease held or sought by this instance: tries to acquire it now and then every `renewMs`; once it
 * holds it, renews it every `renewMs`; on loss stops the work and goes back to trying. `stop` stops the
 * work and releases the lease.
 */
export class LeaseKeeper {
  private token: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** The turn in flight (an acquisition or a renewal, with the work's start or stop). */
  private turn: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: LeaseStore,
    readonly name: string,
    readonly instance: string,
    private readonly timing: LeaseTiming,
    private readonly callbacks: LeaseCallbacks,
    private readonly log: Log,
  ) {}

  /** Whether this instance holds the lease now (as far as its last acquisition or renewal knows). */
  get held(): boolean {
    return this.token !== undefined;
  }

  start(): Promise<void> {
    this.turn = this.tick();
    return this.turn;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.turn = this.tick();
    }, this.timing.renewMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      if (this.token === undefined) await this.tryAcquire();
      else await this.renew();
    } finally {
      this.schedule();
    }
  }

  private async tryAcquire(): Promise<void> {
    const token = randomUUID();
    let got: boolean;
    try {
      got = await this.store.acquire(this.name, this.instance, token, this.timing.leaseMs);
    } catch (err) {
      this.log.warn({ err, lease: this.name }, "could not try to acquire a lease; trying again later");
      return;
    }
    if (!got || this.stopped) {
      if (got) await this.store.release(this.name, token).catch(() => {});
      return;
    }
    this.token = token;
    this.log.info({ lease: this.name, instance: this.instance }, "lease acquired: this instance runs the work");
    const fence: Fence = (tx) => this.store.fence(tx, this.name, token);
    try {
      await this.callbacks.acquired(fence, token);
    } catch (err) {
      this.log.warn({ err, lease: this.name }, "the work of a lease failed to start; giving the lease up");
      await this.giveUp(`start failed: ${(err as Error).message}`);
    }
  }

  private async renew(): Promise<void> {
    const token = this.token!;
    let ok: boolean;
    let reason = "another instance holds it";
    try {
      ok = await this.store.renew(this.name, token, this.timing.leaseMs);
    } catch (err) {
      ok = false;
      reason = `renewal failed: ${(err as Error).message}`;
    }
    if (ok || this.token !== token) return;
    this.log.warn({ lease: this.name, instance: this.instance, reason }, "lease lost: the work stops here");
    await this.lose(reason);
  }

  private async lose(reason: string): Promise<void> {
    this.token = undefined;
    try {
      await this.callbacks.lost(reason);
    } catch (err) {
      this.log.warn({ err, lease: this.name }, "stopping the work of a lost lease failed");
    }
  }

  private async giveUp(reason: string): Promise<void> {
    const token = this.token;
    await this.lose(reason);
    if (token) await this.store.release(this.name, token).catch(() => {});
  }

  /** Clean shutdown: no more turns, the work stopped, the lease released for the next candidate. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.turn.catch(() => {});
    if (this.token !== undefined) await this.giveUp("shutdown");
  }
}
