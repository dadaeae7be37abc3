// Repository of events (events, event_edges, event_auth, forward_extremities, redactions, event_txn_ids)
// over raw SQL: this is the hot path of sending and reading. Event JSON is stored exactly as signed.
import { write, type Sql, type SqlExecutor } from "../../storage/sql.ts";
import type { Pdu } from "../events/types.ts";
import { LruCache } from "../cache/lru.ts";
import { idAllocator, type IdAllocator } from "./ids.ts";

export interface StoredEvent {
  eventId: string;
  /** The sending device and transaction id (local events sent with one). */
  txn?: { deviceKey: string; txnId: string };
  /**
   * On a redaction this process just committed that took effect: the event it redacts (what the commit
   * recorded in `redactions`), for the indexers running inside the commit. Not read back from storage:
   * serving asks rooms/redactions.ts.
   */
  redacts?: string;
  roomId: string;
  streamOrdering: number;
  /** The group of the state after the event; null for an outlier (its state is unknown). */
  stateGroup: number | null;
  replacesState: string | null;
  rejectedReason: string | null;
  outlier: boolean;
  softFailed: boolean;
  pdu: Pdu;
  /** The exact signed JSON text. */
  json: string;
}

interface EventRow {
  event_id: string;
  room_id: string;
  stream_ordering: number;
  state_group: number;
  replaces_state: string | null;
  rejected_reason: string | null;
  outlier: number | boolean;
  soft_failed: number | boolean;
  json: string;
  txn_device_key: string | null;
  txn_id: string | null;
}

const COLUMNS = "event_id, room_id, stream_ordering, state_group, replaces_state, rejected_reason, outlier, soft_failed, json, txn_device_key, txn_id";

/** The state_group column of an outlier (state group ids start at 1). */
const NO_STATE_GROUP = 0;

/**
 * Whether an event is part of the room's timeline: not an outlier, not rejected, not soft-failed. Only
 * such events are served to clients, notified, indexed and counted as the room's history.
 */
export function inTimeline(e: Pick<StoredEvent, "outlier" | "rejectedReason" | "softFailed">): boolean {
  return !e.outlier && e.rejectedReason === null && !e.softFailed;
}

/** `inTimeline` as a WHERE fragment over the events table (no parameters; both dialects). */
export const IN_TIMELINE_SQL = "outlier = FALSE AND soft_failed = FALSE AND rejected_reason IS NULL";

const containsUrl = (p: Pdu) => typeof (p.content as Record<string, unknown>)?.url === "string";

function toStored(r: EventRow): StoredEvent {
  return {
    eventId: r.event_id,
    roomId: r.room_id,
    streamOrdering: Number(r.stream_ordering),
    stateGroup: Number(r.state_group) === NO_STATE_GROUP ? null : Number(r.state_group),
    replacesState: r.replaces_state,
    rejectedReason: r.rejected_reason,
    outlier: Boolean(r.outlier),
    softFailed: Boolean(r.soft_failed),
    json: r.json,
    pdu: JSON.parse(r.json) as Pdu,
    // Always present (undefined when none): events read and events committed share one hidden class.
    txn: r.txn_id !== null && r.txn_device_key !== null ? { deviceKey: r.txn_device_key, txnId: r.txn_id } : undefined,
  };
}

export interface NewEvent {
  eventId: string;
  roomId: string;
  pdu: Pdu;
  json: string;
  /** null for an outlier. */
  stateGroup: number | null;
  replacesState: string | null;
  /**
   * The prev_events outside the DAG when the event was planned (pipeline/plan.ts PlannedEvent): its DAG
   * edges to record (not for an outlier, which is not part of the room's DAG yet).
   */
  prevsOutsideDag: readonly string[];
  outlier: boolean;
  rejectedReason: string | null;
  softFailed: boolean;
  /** The event this redaction takes effect on (decided by the planner; see pipeline/plan.ts). */
  redacts?: string;
  txn?: { deviceKey: string; txnId: string };
}

export class EventStore {
  readonly streamIds: IdAllocator;
  /** The lowest backfill position handed out (SQLite's counter; see `backfillPositions`). */
  private backfillLow: number | undefined;
  constructor(
    private readonly sql: Sql,
    private readonly cache: LruCache<string, StoredEvent>,
    /** Most targets remembered in `childTargets` before it starts over (caches.global_factor scales it). */
    private readonly maxChildTargets = 50_000,
  ) {
    this.streamIds = idAllocator(sql, "events", "stream_ordering", "events_stream_seq");
  }

  /**
   * Event ids that some event inserted by this process redacts or relates to (m.relates_to.event_id),
   * recorded before the child commits. An event inserted by this process (position above the stream's
   * start, and above `childFloor`) that is not in here has no redaction and no relation: serialization
   * skips those lookups for it (the usual case for fresh events, read by every syncing member).
   * Federation (children arriving before their parents) will have to record remote children here too.
   */
  private readonly childTargets = new Set<string>();
  private childFloor = 0;
  private lastInserted = 0;

  private noteChildOf(target: string): void {
    if (this.childTargets.size >= this.maxChildTargets) {
      this.childTargets.clear();
      this.childFloor = this.lastInserted;
    }
    this.childTargets.add(target);
  }

  /** False only when `eventId` provably has no redaction or relation pointing at it (see childTargets). */
  mayHaveChildren(eventId: string): boolean {
    if (this.childTargets.has(eventId)) return true;
    const e = this.cache.get(eventId);
    const start = this.streamIds.seedPosition();
    return e === undefined || start === undefined || e.outlier || e.streamOrdering <= Math.max(start, this.childFloor);
  }

  /**
   * Writes the event row, its DAG edges and the redaction it applies (extremities: `moveExtremities`), at
   * the next stream position or at `position` (a backfilled event's, from `backfillPositions`).
   */
  async insert(tx: SqlExecutor, e: NewEvent, position?: number): Promise<number> {
    const p = e.pdu;
    this.noteChildren(e);
    const pos = position ?? (await this.streamIds.next(tx));
    if (pos > this.lastInserted) this.lastInserted = pos;
    await write(
      tx,
      `INSERT INTO events (stream_ordering, event_id, room_id, type, state_key, sender, depth, origin_server_ts, json, replaces_state, state_group, outlier, rejected_reason, soft_failed, contains_url, txn_device_key, txn_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [pos, e.eventId, e.roomId, p.type, p.state_key ?? null, p.sender, p.depth, p.origin_server_ts, e.json, e.replacesState, e.stateGroup ?? NO_STATE_GROUP, e.outlier, e.rejectedReason, e.softFailed, containsUrl(p), e.txn?.deviceKey ?? null, e.txn?.txnId ?? null],
    );
    await this.insertLinks(tx, e);
    return pos;
  }

  /**
   * De-outliering: an event stored as an outlier now has a known state (its prev_events arrived). Its row
   * takes the new position, state group and marks (the spec's checks ran again on it), and its DAG edges
   * and redaction are written as for a new event.
   */
  async promote(tx: SqlExecutor, e: NewEvent, position?: number): Promise<number> {
    this.noteChildren(e);
    const pos = position ?? (await this.streamIds.next(tx));
    if (pos > this.lastInserted) this.lastInserted = pos;
    const changed = await tx.run(
      `UPDATE events SET stream_ordering = ?, json = ?, replaces_state = ?, state_group = ?, outlier = ?, rejected_reason = ?, soft_failed = ?, contains_url = ?
       WHERE event_id = ? AND outlier = ?`,
      [pos, e.json, e.replacesState, e.stateGroup ?? NO_STATE_GROUP, e.outlier, e.rejectedReason, e.softFailed, containsUrl(e.pdu), e.eventId, true],
    );
    if (changed !== 1) throw new Error(`event ${e.eventId} is no longer an outlier`);
    await this.insertLinks(tx, e);
    return pos;
  }

  /**
   * An event placed while its room's state was partial, checked again against the full state: its state
   * group, rejection and replaced state event change in place (a rejected redaction no longer applies).
   * The cache is updated once `tx` commits.
   */
  async restate(tx: SqlExecutor, e: StoredEvent): Promise<void> {
    await tx.run(`UPDATE events SET state_group = ?, rejected_reason = ?, replaces_state = ? WHERE event_id = ?`, [e.stateGroup ?? NO_STATE_GROUP, e.rejectedReason, e.replacesState, e.eventId]);
    if (e.rejectedReason !== null) await tx.run(`DELETE FROM redactions WHERE event_id = ?`, [e.eventId]);
    tx.onSettled?.((committed) => {
      if (committed) this.cache.set(e.eventId, e);
    });
  }

  private noteChildren(e: NewEvent): void {
    if (e.redacts) this.noteChildOf(e.redacts);
    const rel = (e.pdu.content as { "m.relates_to"?: { event_id?: unknown } } | undefined)?.["m.relates_to"];
    if (rel && typeof rel === "object" && typeof rel.event_id === "string") this.noteChildOf(rel.event_id);
  }

  /** The DAG edges to events outside the DAG (not for outliers) and the redaction record of an event being written. */
  private async insertLinks(tx: SqlExecutor, e: NewEvent): Promise<void> {
    const roomId = e.roomId;
    const edges = e.prevsOutsideDag;
    if (!e.outlier && edges.length > 0)
      await write(tx, `INSERT INTO event_edges (event_id, prev_event_id, room_id) VALUES ${edges.map(() => "(?, ?, ?)").join(", ")}`, edges.flatMap((prev) => [e.eventId, prev, roomId]));
    if (e.redacts) await write(tx, `INSERT INTO redactions (event_id, redacts, room_id) VALUES (?, ?, ?)`, [e.eventId, e.redacts, roomId]);
  }

  /**
   * `n` stream positions for backfilled events, ascending, all below every position used so far (so
   * history fetched later sorts before what is already stored). They are negative, as Synapse's are:
   * /sync and the durable consumers, which read positions above their tokens, never see backfilled
   * events; /messages, which walks positions down, finds them in order. PostgreSQL draws them from a
   * sequence (events_backfill_seq); SQLite (one writer) from a counter seeded from the lowest position.
   */
  async backfillPositions(tx: SqlExecutor, n: number): Promise<number[]> {
    if (n === 0) return [];
    if (this.sql.dialect === "postgres") {
      const rows = await tx.all<{ id: number | string }>(`SELECT nextval('events_backfill_seq') AS id FROM generate_series(1, ?::int)`, [n]);
      return rows.map((r) => -Number(r.id)).sort((a, b) => a - b);
    }
    if (this.backfillLow === undefined) {
      const r = await tx.get<{ m: number | null }>(`SELECT MIN(stream_ordering) AS m FROM events`);
      this.backfillLow = Math.min(0, Number(r?.m ?? 0));
    }
    const low = this.backfillLow - n;
    this.backfillLow = low;
    return Array.from({ length: n }, (_, i) => low + i);
  }

  /**
   * Which of `ids` (events of the timeline) were stored with a gap before them: a prev_event outside the
   * DAG then (unknown, or an outlier) that has not since joined it before them in stream order — still
   * missing or an outlier, backfilled (a negative position), or arrived after them. Synapse's
   * timeline_gaps; /sync marks a timeline holding one limited and starts it there. Edges to prev_events
   * that were in the DAG (databases from before 2026-11-29 hold some) are no gap.
   */
  async gapsAmong(ids: readonly string[]): Promise<Set<string>> {
    const out = new Set<string>();
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      const rows = await this.sql.all<{ event_id: string }>(
        `SELECT DISTINCT ee.event_id FROM event_edges ee
           JOIN events c ON c.event_id = ee.event_id
           LEFT JOIN events p ON p.event_id = ee.prev_event_id
         WHERE ee.event_id IN (${chunk.map(() => "?").join(",")})
           AND (p.event_id IS NULL OR p.outlier = TRUE OR p.stream_ordering < 0 OR p.stream_ordering > c.stream_ordering)`,
        chunk,
      );
      for (const r of rows) out.add(r.event_id);
    }
    return out;
  }

  /**
   * Which of `ids` some stored (non-outlier) event names as a prev_event. Asked only about events entering
   * the DAG (new ones, promoted outliers): the edges recorded are exactly those to events outside the DAG
   * when their child was stored (NewEvent.prevsOutsideDag), which are the only ones such a question can find.
   */
  async withChildren(ids: readonly string[]): Promise<Set<string>> {
    const out = new Set<string>();
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      const rows = await this.sql.all<{ prev_event_id: string }>(`SELECT DISTINCT prev_event_id FROM event_edges WHERE prev_event_id IN (${chunk.map(() => "?").join(",")})`, chunk);
      for (const r of rows) out.add(r.prev_event_id);
    }
    return out;
  }

  /**
   * The room's first events on the stream that are part of its DAG (outliers left out; rejected and
   * soft-failed ones kept), oldest first: where /messages ends and backfill starts.
   */
  async earliestInDag(roomId: string, limit: number): Promise<StoredEvent[]> {
    const rows = await this.sql.all<EventRow>(`SELECT ${COLUMNS} FROM events WHERE room_id = ? AND outlier = FALSE ORDER BY stream_ordering ASC LIMIT ?`, [roomId, limit]);
    return rows.map(toStored);
  }

  /**
   * Reads into the event cache the room's newest DAG events (outliers left out) at or below `depth`, at
   * most `limit`: the events a walk back from there will look up.
   */
  async readAheadInDag(roomId: string, depth: number, limit: number): Promise<void> {
    const rows = await this.sql.all<EventRow>(
      `SELECT ${COLUMNS} FROM events WHERE room_id = ? AND outlier = FALSE AND depth <= ? ORDER BY depth DESC, stream_ordering DESC LIMIT ?`,
      [roomId, depth, limit],
    );
    for (const r of rows) if (!this.cache.get(r.event_id)) this.cache.set(r.event_id, toStored(r));
  }

  /** The lowest depth of the room's events in its DAG (outliers left out), or undefined for none. */
  async minDepth(roomId: string): Promise<number | undefined> {
    const r = await this.sql.get<{ m: number | string | null }>(`SELECT MIN(depth) AS m FROM events WHERE room_id = ? AND outlier = FALSE`, [roomId]);
    return r?.m === null || r?.m === undefined ? undefined : Number(r.m);
  }

  /** Moves a room's forward extremities: `removed` stop being ones, `added` (new events) become ones. */
  async moveExtremities(tx: SqlExecutor, roomId: string, removed: readonly string[], added: readonly string[]): Promise<void> {
    // `added` and `removed` are disjoint, and `removed` are tips from before this transaction (one commit
    // a room per transaction: pipeline/commit.ts), so the delete removes no row the transaction inserts. On
    // PostgreSQL both then share one statement with the event's own inserts (sql-postgres.ts PgTransaction).
    if (added.length > 0)
      await write(tx, `INSERT INTO forward_extremities (room_id, event_id) VALUES ${added.map(() => "(?, ?)").join(", ")}`, added.flatMap((id) => [roomId, id]));
    if (removed.length > 0)
      await write(tx, `DELETE FROM forward_extremities WHERE room_id = ? AND event_id IN (${removed.map(() => "?").join(",")})`, [roomId, ...removed], { disjointFromInserts: true });
  }

  remember(e: StoredEvent): void {
    this.cache.set(e.eventId, e);
  }

  /** Drops the cached copy of an event another process changed in place (CommitFeed.receive). */
  forget(eventId: string): void {
    this.cache.delete(eventId);
  }

  async get(eventId: string): Promise<StoredEvent | undefined> {
    const hit = this.cache.get(eventId);
    if (hit) return hit;
    const row = await this.sql.get<EventRow>(`SELECT ${COLUMNS} FROM events WHERE event_id = ?`, [eventId]);
    if (!row) return undefined;
    const e = toStored(row);
    this.cache.set(eventId, e);
    return e;
  }

  /** Several events by id in one query (missing ids are absent from the map). */
  async getMany(eventIds: Iterable<string>): Promise<Map<string, StoredEvent>> {
    const out = new Map<string, StoredEvent>();
    const missing: string[] = [];
    for (const id of new Set(eventIds)) {
      const hit = this.cache.get(id);
      if (hit) out.set(id, hit);
      else missing.push(id);
    }
    for (let i = 0; i < missing.length; i += 500) {
      const chunk = missing.slice(i, i + 500);
      const rows = await this.sql.all<EventRow>(`SELECT ${COLUMNS} FROM events WHERE event_id IN (${chunk.map(() => "?").join(",")})`, chunk);
      for (const r of rows) {
        const e = toStored(r);
        this.cache.set(e.eventId, e);
        out.set(e.eventId, e);
      }
    }
    return out;
  }

  /**
   * A page of a room's events by stream position: those with `after < position <= upTo`, newest first
   * (dir "b") or oldest first (dir "f").
   */
  async page(roomId: string, opts: { after: number; upTo: number; dir: "b" | "f"; limit: number }): Promise<StoredEvent[]> {
    const order = opts.dir === "b" ? "DESC" : "ASC";
    const rows = await this.sql.all<EventRow>(
      `SELECT ${COLUMNS} FROM events WHERE room_id = ? AND ${IN_TIMELINE_SQL} AND stream_ordering > ? AND stream_ordering <= ? ORDER BY stream_ordering ${order} LIMIT ?`,
      [roomId, opts.after, opts.upTo, opts.limit],
    );
    return rows.map((r) => {
      const e = toStored(r);
      this.cache.set(e.eventId, e);
      return e;
    });
  }

  /**
   * The page of a room's timeline events that comes before `below` in the DAG's order (depth, then
   * stream position), newest first: those with `after < position <= upTo` (an initial sync reading
   * further back through a timeline it selects in that order).
   */
  async pageInDag(roomId: string, opts: { after: number; upTo: number; below: { depth: number; stream: number }; limit: number }): Promise<StoredEvent[]> {
    const rows = await this.sql.all<EventRow>(
      `SELECT ${COLUMNS} FROM events WHERE room_id = ? AND ${IN_TIMELINE_SQL} AND stream_ordering > ? AND stream_ordering <= ?
       AND (depth < ? OR (depth = ? AND stream_ordering < ?)) ORDER BY depth DESC, stream_ordering DESC LIMIT ?`,
      [roomId, opts.after, opts.upTo, opts.below.depth, opts.below.depth, opts.below.stream, opts.limit],
    );
    return rows.map((r) => {
      const e = toStored(r);
      this.cache.set(e.eventId, e);
      return e;
    });
  }

  /**
   * The first `limit` timeline events of any of these rooms with `after < stream_ordering <= upTo`, in
   * stream order (the legacy /events stream reads the user's rooms forward with it). One query per 400 rooms.
   */
  async forwardInRooms(roomIds: readonly string[], opts: { after: number; upTo: number; limit: number }): Promise<StoredEvent[]> {
    const out: StoredEvent[] = [];
    if (opts.limit <= 0) return out;
    for (let i = 0; i < roomIds.length; i += 400) {
      const chunk = roomIds.slice(i, i + 400);
      const rows = await this.sql.all<EventRow>(
        `SELECT ${COLUMNS} FROM events WHERE room_id IN (${chunk.map(() => "?").join(",")}) AND ${IN_TIMELINE_SQL} AND stream_ordering > ? AND stream_ordering <= ?
         ORDER BY stream_ordering ASC LIMIT ?`,
        [...chunk, opts.after, opts.upTo, opts.limit],
      );
      for (const r of rows) {
        const e = toStored(r);
        this.cache.set(e.eventId, e);
        out.push(e);
      }
    }
    out.sort((a, b) => a.streamOrdering - b.streamOrdering);
    return out.slice(0, opts.limit);
  }

  /**
   * The member events of `userId` in these rooms with `after < stream_ordering <= upTo`, in stream order:
   * outliers too (an invite received over federation), never rejected or soft-failed ones.
   */
  async memberEventsOf(userId: string, roomIds: readonly string[], opts: { after: number; upTo: number }): Promise<StoredEvent[]> {
    const out: StoredEvent[] = [];
    for (let i = 0; i < roomIds.length; i += 400) {
      const chunk = roomIds.slice(i, i + 400);
      const rows = await this.sql.all<EventRow>(
        `SELECT ${COLUMNS} FROM events WHERE room_id IN (${chunk.map(() => "?").join(",")}) AND stream_ordering > ? AND stream_ordering <= ?
         AND type = ? AND state_key = ? AND soft_failed = FALSE AND rejected_reason IS NULL ORDER BY stream_ordering ASC`,
        [...chunk, opts.after, opts.upTo, "m.room.member", userId],
      );
      for (const r of rows) {
        const e = toStored(r);
        this.cache.set(e.eventId, e);
        out.push(e);
      }
    }
    return out.sort((a, b) => a.streamOrdering - b.streamOrdering);
  }

  /**
   * A room's events from a timestamp on (dir "f": origin_server_ts >= ts, earliest first) or back (dir
   * "b": <= ts, latest first), ties by depth (the DAG's order) then stream position, skipping the first
   * `offset`; outliers and rejected events left out (GET /timestamp_to_event; Synapse's order).
   */
  async byTimestamp(roomId: string, ts: number, dir: "b" | "f", limit: number, offset = 0): Promise<StoredEvent[]> {
    const cmp = dir === "f" ? ">=" : "<=";
    const order = dir === "f" ? "ASC" : "DESC";
    const rows = await this.sql.all<EventRow>(
      `SELECT ${COLUMNS} FROM events WHERE room_id = ? AND ${IN_TIMELINE_SQL} AND origin_server_ts ${cmp} ?
       ORDER BY origin_server_ts ${order}, depth ${order}, stream_ordering ${order} LIMIT ? OFFSET ?`,
      [roomId, ts, limit, offset],
    );
    return rows.map(toStored);
  }

  /** The room's DAG events (outliers left out) deeper than `depth` (later in the DAG), shallowest first, at most `limit`. */
  async laterInDag(roomId: string, depth: number, limit: number): Promise<StoredEvent[]> {
    const rows = await this.sql.all<EventRow>(
      `SELECT ${COLUMNS} FROM events WHERE room_id = ? AND outlier = FALSE AND depth > ? ORDER BY depth ASC, stream_ordering ASC LIMIT ?`,
      [roomId, depth, limit],
    );
    return rows.map(toStored);
  }

  /**
   * The events stream itself: every committed event (outliers, rejected and soft-failed ones included)
   * with `after < position <= upTo`, in stream order, at most `limit` (durable consumers catching up).
   */
  async streamAfter(after: number, upTo: number, limit: number): Promise<StoredEvent[]> {
    const rows = await this.sql.all<EventRow>(
      `SELECT ${COLUMNS} FROM events WHERE stream_ordering > ? AND stream_ordering <= ? ORDER BY stream_ordering LIMIT ?`,
      [after, upTo, limit],
    );
    return rows.map(toStored);
  }

  async extremities(roomId: string): Promise<string[]> {
    const rows = await this.sql.all<{ event_id: string }>(`SELECT event_id FROM forward_extremities WHERE room_id = ?`, [roomId]);
    return rows.map((r) => r.event_id);
  }

  /** The room-events stream's position: every event at or below it is committed (ids.ts). */
  async maxStreamOrdering(): Promise<number> {
    return this.streamIds.current();
  }

  /** The redaction events that apply to each of `eventIds`. */
  async redactionsOf(eventIds: string[], via: SqlExecutor = this.sql): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    eventIds = eventIds.filter((id) => this.mayHaveChildren(id));
    for (let i = 0; i < eventIds.length; i += 500) {
      const chunk = eventIds.slice(i, i + 500);
      if (chunk.length === 0) continue;
      const rows = await via.all<{ event_id: string; redacts: string }>(
        `SELECT event_id, redacts FROM redactions WHERE redacts IN (${chunk.map(() => "?").join(",")})`,
        chunk,
      );
      for (const r of rows) out.set(r.redacts, [...(out.get(r.redacts) ?? []), r.event_id]);
    }
    return out;
  }

  // Transaction ids (idempotent sends).

  // A transaction id is scoped to a device and an endpoint path (spec "Transaction identifiers"): the
  // same id in another room or for another event type is another request. `scope` names the path as a
  // fixed-length hash; the txn_id column holds `scope:txnId` (the client's own id is on the event row).

  async findTxn(userId: string, deviceKey: string, txnId: string, scope?: string): Promise<{ eventId: string; requestHash: string } | undefined> {
    const r = await this.sql.get<{ event_id: string; request_hash: string }>(
      `SELECT event_id, request_hash FROM event_txn_ids WHERE user_id = ? AND device_key = ? AND txn_id = ?`,
      [userId, deviceKey, scopedTxnId(txnId, scope)],
    );
    return r && { eventId: r.event_id, requestHash: r.request_hash };
  }

  /**
   * findTxn for several transactions in one query (through `via`: inside a transaction, where the group
   * commit asks in the round trip that allocates its positions); the answers line up with `txns`.
   */
  async findTxns(txns: { userId: string; deviceKey: string; txnId: string; scope?: string }[], via: SqlExecutor = this.sql): Promise<({ eventId: string; requestHash: string } | undefined)[]> {
    const found = new Map<string, { eventId: string; requestHash: string }>();
    const keyOf = (u: string, d: string, t: string) => `${u}\u0000${d}\u0000${t}`;
    for (let i = 0; i < txns.length; i += 100) {
      const chunk = txns.slice(i, i + 100);
      const rows = await via.all<{ user_id: string; device_key: string; txn_id: string; event_id: string; request_hash: string }>(
        `SELECT user_id, device_key, txn_id, event_id, request_hash FROM event_txn_ids WHERE ${chunk.map(() => "(user_id = ? AND device_key = ? AND txn_id = ?)").join(" OR ")}`,
        chunk.flatMap((t) => [t.userId, t.deviceKey, scopedTxnId(t.txnId, t.scope)]),
      );
      for (const r of rows) found.set(keyOf(r.user_id, r.device_key, r.txn_id), { eventId: r.event_id, requestHash: r.request_hash });
    }
    return txns.map((t) => found.get(keyOf(t.userId, t.deviceKey, scopedTxnId(t.txnId, t.scope))));
  }

  /** See `isTxnIdConflict`. */
  isTxnConflict(err: unknown): boolean {
    return isTxnIdConflict(err);
  }

  /** Records the client's transaction id `t` as having produced `e`. */
  async insertTxn(tx: SqlExecutor, t: { userId: string; deviceKey: string; txnId: string; scope?: string; requestHash: string }, e: { eventId: string; roomId: string; now: number }): Promise<void> {
    await write(
      tx,
      `INSERT INTO event_txn_ids (user_id, device_key, txn_id, request_hash, event_id, room_id, created_ts) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      [t.userId, t.deviceKey, scopedTxnId(t.txnId, t.scope), t.requestHash, e.eventId, e.roomId, e.now],
    );
  }
}

/** Whether a failed transaction failed on a transaction id already recorded (its primary key). */
export function isTxnIdConflict(err: unknown): boolean {
  const e = err as { code?: unknown; constraint?: unknown; message?: unknown } | null;
  if (!e) return false;
  // PostgreSQL: unique_violation on the table's primary key; SQLite: the constraint's columns in the message.
  if (e.code === "23505") return e.constraint === "event_txn_ids_pkey";
  return typeof e.message === "string" && e.message.includes("UNIQUE constraint failed: event_txn_ids.");
}

function scopedTxnId(txnId: string, scope: string | undefined): string {
  return scope === undefined ? txnId : `${scope}:${txnId}`;
}
