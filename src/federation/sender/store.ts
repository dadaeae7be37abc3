// Repository of the federation sender's tables (raw SQL): the per-destination queues of PDUs to send
// (federation_outbound_pdus, written by the sender's durable consumer in its own transaction), of EDUs
// that must arrive (federation_outbound_edus: device lists, signing keys, to-device messages, written in
// the transaction that produced them) and each destination's backoff state (federation_destinations).
// All survive a restart.
import type { Sql, SqlExecutor } from "../../storage/sql.ts";

export interface QueuedPdu {
  destination: string;
  streamOrdering: number;
  roomId: string;
  eventId: string;
}

/** A durable EDU waiting for its destination (`id`: its place in the queue). */
export interface QueuedEdu {
  id: number;
  edu_type: string;
  content: Record<string, unknown>;
}

export interface DestinationRow {
  destination: string;
  /** When the last attempt failed (0: never, or up since). */
  retryLastTs: number;
  /** How long after retryLastTs the next attempt may go (0: the destination is up). */
  retryInterval: number;
  /** When the current outage began (null: up). */
  failureTs: number | null;
  lastSuccessTs: number | null;
}

interface Row {
  destination: string;
  retry_last_ts: number | string;
  retry_interval: number | string;
  failure_ts: number | string | null;
  last_success_ts: number | string | null;
}

const toRow = (r: Row): DestinationRow => ({
  destination: r.destination,
  retryLastTs: Number(r.retry_last_ts),
  retryInterval: Number(r.retry_interval),
  failureTs: r.failure_ts === null ? null : Number(r.failure_ts),
  lastSuccessTs: r.last_success_ts === null ? null : Number(r.last_success_ts),
});

const marks = (n: number) => Array.from({ length: n }, () => "?").join(",");

export class SenderStore {
  constructor(private readonly sql: Sql) {}

  /** Adds PDUs to their destinations' queues (in the consumer's transaction); a row already queued is kept. */
  async enqueue(tx: SqlExecutor, rows: readonly QueuedPdu[]): Promise<void> {
    for (let i = 0; i < rows.length; i += 200) {
      const chunk = rows.slice(i, i + 200);
      await tx.run(
        `INSERT INTO federation_outbound_pdus (destination, stream_ordering, room_id, event_id) VALUES ${chunk.map(() => "(?, ?, ?, ?)").join(", ")}
         ON CONFLICT (destination, stream_ordering) DO NOTHING`,
        chunk.flatMap((r) => [r.destination, r.streamOrdering, r.roomId, r.eventId]),
      );
    }
  }

  /** The oldest `limit` PDUs queued for `destination`, in stream order. */
  async next(destination: string, limit: number): Promise<QueuedPdu[]> {
    const rows = await this.sql.all<{ stream_ordering: number | string; room_id: string; event_id: string }>(
      `SELECT stream_ordering, room_id, event_id FROM federation_outbound_pdus WHERE destination = ? ORDER BY stream_ordering LIMIT ?`,
      [destination, limit],
    );
    return rows.map((r) => ({ destination, streamOrdering: Number(r.stream_ordering), roomId: r.room_id, eventId: r.event_id }));
  }

  /** Drops sent (or refused) PDUs from a destination's queue. */
  async remove(destination: string, streamOrderings: readonly number[]): Promise<void> {
    if (streamOrderings.length === 0) return;
    await this.sql.run(`DELETE FROM federation_outbound_pdus WHERE destination = ? AND stream_ordering IN (${marks(streamOrderings.length)})`, [destination, ...streamOrderings]);
  }

  /**
   * Keeps only the newest `keep` queued PDUs of each room for `destinations` (every destination when
   * undefined): what a long outage may leave queued — and, given `stickyAt`, every one still sticky then.
   * Returns how many were dropped.
   */
  async trim(keep: number, destinations?: readonly string[], stickyAt?: number): Promise<number> {
    if (destinations && destinations.length === 0) return 0;
    const where = destinations ? `WHERE destination IN (${marks(destinations.length)})` : "";
    // MSC4354 (stickyAt: now, with msc4354_enabled): sticky events still sticky are kept whatever their age.
    const sticky = stickyAt === undefined ? "" : ` AND event_id NOT IN (SELECT event_id FROM sticky_events WHERE expires_at > ?)`;
    return this.sql.run(
      `DELETE FROM federation_outbound_pdus WHERE (destination, stream_ordering) IN (
         SELECT destination, stream_ordering FROM (
           SELECT destination, stream_ordering, ROW_NUMBER() OVER (PARTITION BY destination, room_id ORDER BY stream_ordering DESC) AS n
           FROM federation_outbound_pdus ${where}
         ) ranked WHERE n > ?)${sticky}`,
      [...(destinations ?? []), keep, ...(stickyAt === undefined ? [] : [stickyAt])],
    );
  }

  /** Queues one EDU for each of `destinations` (in the producer's transaction). */
  async enqueueEdu(tx: SqlExecutor, destinations: readonly string[], edu: { edu_type: string; content: unknown }, now: number): Promise<void> {
    const content = JSON.stringify(edu.content);
    for (let i = 0; i < destinations.length; i += 200) {
      const chunk = destinations.slice(i, i + 200);
      await tx.run(
        `INSERT INTO federation_outbound_edus (destination, edu_type, content, created_ts) VALUES ${chunk.map(() => "(?, ?, ?, ?)").join(", ")}`,
        chunk.flatMap((d) => [d, edu.edu_type, content, now]),
      );
    }
  }

  /** The oldest `limit` durable EDUs queued for `destination`, in the order they were queued. */
  async nextEdus(destination: string, limit: number): Promise<QueuedEdu[]> {
    if (limit <= 0) return [];
    const rows = await this.sql.all<{ id: number | string; edu_type: string; content: string }>(
      `SELECT id, edu_type, content FROM federation_outbound_edus WHERE destination = ? ORDER BY id LIMIT ?`,
      [destination, limit],
    );
    return rows.map((r) => ({ id: Number(r.id), edu_type: r.edu_type, content: JSON.parse(r.content) as Record<string, unknown> }));
  }

  /** Drops delivered (or refused) durable EDUs. */
  async removeEdus(destination: string, ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.sql.run(`DELETE FROM federation_outbound_edus WHERE destination = ? AND id IN (${marks(ids.length)})`, [destination, ...ids]);
  }

  /** How many durable EDUs are queued per destination (for `destinations`). */
  async eduQueueSizes(destinations: readonly string[]): Promise<Map<string, number>> {
    if (destinations.length === 0) return new Map();
    const rows = await this.sql.all<{ destination: string; n: number | string }>(
      `SELECT destination, COUNT(*) AS n FROM federation_outbound_edus WHERE destination IN (${marks(destinations.length)}) GROUP BY destination`,
      [...destinations],
    );
    return new Map(rows.map((r) => [r.destination, Number(r.n)]));
  }

  /** Destinations with something queued (PDUs or durable EDUs). */
  async destinationsWithQueue(): Promise<string[]> {
    const rows = await this.sql.all<{ destination: string }>(
      `SELECT destination FROM federation_outbound_pdus UNION SELECT destination FROM federation_outbound_edus`,
    );
    return rows.map((r) => r.destination);
  }

  /** How many PDUs are queued per destination (for `destinations`, or all). */
  async queueSizes(destinations?: readonly string[]): Promise<Map<string, number>> {
    const where = destinations ? `WHERE destination IN (${marks(destinations.length)})` : "";
    if (destinations && destinations.length === 0) return new Map();
    const rows = await this.sql.all<{ destination: string; n: number | string }>(
      `SELECT destination, COUNT(*) AS n FROM federation_outbound_pdus ${where} GROUP BY destination`,
      [...(destinations ?? [])],
    );
    return new Map(rows.map((r) => [r.destination, Number(r.n)]));
  }

  /** Destinations backing off now. */
  async downDestinations(): Promise<DestinationRow[]> {
    return (await this.sql.all<Row>(`SELECT * FROM federation_destinations WHERE retry_interval > 0`)).map(toRow);
  }

  async getDestination(destination: string): Promise<DestinationRow | undefined> {
    const r = await this.sql.get<Row>(`SELECT * FROM federation_destinations WHERE destination = ?`, [destination]);
    return r ? toRow(r) : undefined;
  }

  /** A page of destinations by name (after `from`), and the total count. */
  async listDestinations(opts: { from?: string; limit: number; search?: string }): Promise<DestinationRow[]> {
    const params: (string | number)[] = [];
    const where: string[] = [];
    if (opts.from !== undefined) {
      where.push("destination > ?");
      params.push(opts.from);
    }
    if (opts.search) {
      where.push("LOWER(destination) LIKE ?");
      params.push(`%${opts.search.toLowerCase().replace(/[\\%_]/g, "")}%`);
    }
    const rows = await this.sql.all<Row>(
      `SELECT * FROM federation_destinations ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY destination LIMIT ?`,
      [...params, opts.limit],
    );
    return rows.map(toRow);
  }

  async countDestinations(): Promise<number> {
    const r = await this.sql.get<{ n: number | string }>(`SELECT COUNT(*) AS n FROM federation_destinations`);
    return Number(r?.n ?? 0);
  }

  async saveDestination(d: DestinationRow): Promise<void> {
    const vals = [d.retryLastTs, d.retryInterval, d.failureTs, d.lastSuccessTs];
    const changed = await this.sql.run(
      `UPDATE federation_destinations SET retry_last_ts = ?, retry_interval = ?, failure_ts = ?, last_success_ts = ? WHERE destination = ?`,
      [...vals, d.destination],
    );
    if (changed === 0)
      await this.sql.run(
        `INSERT INTO federation_destinations (retry_last_ts, retry_interval, failure_ts, last_success_ts, destination) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (destination) DO UPDATE SET retry_last_ts = excluded.retry_last_ts, retry_interval = excluded.retry_interval, failure_ts = excluded.failure_ts, last_success_ts = excluded.last_success_ts`,
        [...vals, d.destination],
      );
  }
}
