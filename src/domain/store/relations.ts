// Repository of event relations (event_relations) over raw SQL: written inside the event commit (the
// relations persist hook), read by /relations, /threads and the bundled aggregations, always in batches.
import type { Param, Sql, SqlExecutor } from "../../storage/sql.ts";
import { chunks as inChunks, marks } from "./in-lists.ts";

export interface RelationRow {
  eventId: string;
  relatesToId: string;
  relType: string;
  aggregationKey: string | null;
  roomId: string;
  sender: string;
  type: string;
  streamOrdering: number;
  threadId: string | null;
}

interface Row {
  event_id: string;
  relates_to_id: string;
  rel_type: string;
  aggregation_key: string | null;
  room_id: string;
  sender: string;
  type: string;
  stream_ordering: number | string;
  thread_id: string | null;
}

const COLUMNS = "event_id, relates_to_id, rel_type, aggregation_key, room_id, sender, type, stream_ordering, thread_id";

function toRow(r: Row): RelationRow {
  return {
    eventId: r.event_id,
    relatesToId: r.relates_to_id,
    relType: r.rel_type,
    aggregationKey: r.aggregation_key,
    roomId: r.room_id,
    sender: r.sender,
    type: r.type,
    streamOrdering: Number(r.stream_ordering),
    threadId: r.thread_id,
  };
}

const chunks = <T>(items: readonly T[]) => inChunks(items, 500);

export interface RelationPageQuery {
  roomId: string;
  parentId: string;
  relType?: string;
  eventType?: string;
  /** Follow relations of relations, this many levels deep in all (1: direct relations only). */
  depth: number;
  dir: "b" | "f";
  /** Stream positions: the page holds rows with after < stream_ordering <= upTo. */
  after: number;
  upTo: number;
  limit: number;
}

export interface ThreadSummaryRow {
  rootId: string;
  count: number;
  latestEventId: string;
}

export class RelationStore {
  constructor(private readonly sql: Sql) {}

  async insert(tx: SqlExecutor, rows: RelationRow[]): Promise<void> {
    for (const r of rows) {
      await tx.run(
        `INSERT INTO event_relations (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [r.eventId, r.relatesToId, r.relType, r.aggregationKey, r.roomId, r.sender, r.type, r.streamOrdering, r.threadId],
      );
    }
  }

  /** Drops the relations of these (redacted) events. */
  async remove(tx: SqlExecutor, eventIds: string[]): Promise<void> {
    for (const chunk of chunks(eventIds)) await tx.run(`DELETE FROM event_relations WHERE event_id IN (${marks(chunk.length)})`, chunk);
  }

  /** The relation rows of these events (those that have one), read through `ex` (e.g. inside a commit). */
  async ofEvents(ex: SqlExecutor, eventIds: readonly string[]): Promise<Map<string, RelationRow>> {
    const out = new Map<string, RelationRow>();
    for (const chunk of chunks([...new Set(eventIds)])) {
      const rows = await ex.all<Row>(`SELECT ${COLUMNS} FROM event_relations WHERE event_id IN (${marks(chunk.length)})`, chunk);
      for (const r of rows) out.set(r.event_id, toRow(r));
    }
    return out;
  }

  /**
   * One page of the events relating to `parentId` (directly, or through up to `depth` levels), filtered
   * by relation and event type at every level reached, by stream position: newest first (b) or oldest first (f).
   */
  async page(q: RelationPageQuery): Promise<RelationRow[]> {
    const filters: string[] = ["r.room_id = ?", "r.stream_ordering > ?", "r.stream_ordering <= ?"];
    const params: Param[] = [q.roomId, q.after, q.upTo];
    if (q.relType !== undefined) {
      filters.push("r.rel_type = ?");
      params.push(q.relType);
    }
    if (q.eventType !== undefined) {
      filters.push("r.type = ?");
      params.push(q.eventType);
    }
    const order = q.dir === "b" ? "DESC" : "ASC";
    const cols = COLUMNS.split(", ").map((c) => `r.${c}`).join(", ");
    if (q.depth <= 1) {
      const rows = await this.sql.all<Row>(
        `SELECT ${cols} FROM event_relations r WHERE r.relates_to_id = ? AND ${filters.join(" AND ")} ORDER BY r.stream_ordering ${order} LIMIT ?`,
        [q.parentId, ...params, q.limit],
      );
      return rows.map(toRow);
    }
    // The traversal follows every relation; the filters apply to what is returned (as Synapse does).
    const rows = await this.sql.all<Row>(
      `WITH RECURSIVE related (event_id, depth) AS (
         SELECT event_id, 1 FROM event_relations WHERE relates_to_id = ? AND room_id = ?
         UNION ALL
         SELECT e.event_id, related.depth + 1 FROM event_relations e JOIN related ON e.relates_to_id = related.event_id
         WHERE related.depth < ? AND e.room_id = ?
       )
       SELECT DISTINCT ${cols} FROM event_relations r JOIN related ON related.event_id = r.event_id
       WHERE ${filters.join(" AND ")} ORDER BY r.stream_ordering ${order} LIMIT ?`,
      [q.parentId, q.roomId, q.depth, q.roomId, ...params, q.limit],
    );
    return rows.map(toRow);
  }

  /** Per thread root: the number of m.thread replies and the latest one. Two queries for the whole batch. */
  async threadSummaries(rootIds: readonly string[]): Promise<Map<string, ThreadSummaryRow>> {
    const out = new Map<string, ThreadSummaryRow>();
    for (const chunk of chunks([...new Set(rootIds)])) {
      const rows = await this.sql.all<{ relates_to_id: string; c: number | string; m: number | string }>(
        `SELECT relates_to_id, COUNT(*) AS c, MAX(stream_ordering) AS m FROM event_relations
         WHERE rel_type = ? AND relates_to_id IN (${marks(chunk.length)}) GROUP BY relates_to_id`,
        ["m.thread", ...chunk],
      );
      if (rows.length === 0) continue;
      const latest = await this.sql.all<{ event_id: string; relates_to_id: string }>(
        `SELECT event_id, relates_to_id FROM event_relations WHERE stream_ordering IN (${marks(rows.length)})`,
        rows.map((r) => Number(r.m)),
      );
      const latestOf = new Map(latest.map((l) => [l.relates_to_id, l.event_id]));
      for (const r of rows) {
        const latestEventId = latestOf.get(r.relates_to_id);
        if (latestEventId) out.set(r.relates_to_id, { rootId: r.relates_to_id, count: Number(r.c), latestEventId });
      }
    }
    return out;
  }

  /** The roots among `rootIds` of threads `userId` replied in. */
  async threadsRepliedIn(userId: string, rootIds: readonly string[]): Promise<Set<string>> {
    const out = new Set<string>();
    for (const chunk of chunks([...new Set(rootIds)])) {
      const rows = await this.sql.all<{ relates_to_id: string }>(
        `SELECT DISTINCT relates_to_id FROM event_relations WHERE rel_type = ? AND sender = ? AND relates_to_id IN (${marks(chunk.length)})`,
        ["m.thread", userId, ...chunk],
      );
      for (const r of rows) out.add(r.relates_to_id);
    }
    return out;
  }

  /** The relations of the given types to any of `parentIds`, oldest first. */
  async relationsOfTypes(parentIds: readonly string[], relTypes: readonly string[]): Promise<RelationRow[]> {
    const out: RelationRow[] = [];
    for (const chunk of chunks([...new Set(parentIds)])) {
      const rows = await this.sql.all<Row>(
        `SELECT ${COLUMNS} FROM event_relations WHERE rel_type IN (${marks(relTypes.length)}) AND relates_to_id IN (${marks(chunk.length)})
         ORDER BY stream_ordering ASC`,
        [...relTypes, ...chunk],
      );
      out.push(...rows.map(toRow));
    }
    return out;
  }

  /**
   * Thread roots of a room ordered by their latest reply, newest first, among replies at positions
   * <= `upTo`; `participant`: only threads that user started or replied in. `limit + 1` rows tell if there is more.
   */
  async threadsOfRoom(roomId: string, opts: { upTo: number; limit: number; participant?: string }): Promise<{ rootId: string; latest: number }[]> {
    const params: Param[] = ["m.thread", roomId, opts.upTo];
    let having = "";
    if (opts.participant !== undefined) {
      having = " AND (e.sender = ? OR SUM(CASE WHEN r.sender = ? THEN 1 ELSE 0 END) > 0)";
      params.push(opts.participant, opts.participant);
    }
    const rows = await this.sql.all<{ relates_to_id: string; latest: number | string }>(
      `SELECT r.relates_to_id, MAX(r.stream_ordering) AS latest FROM event_relations r
       JOIN events e ON e.event_id = r.relates_to_id AND e.room_id = r.room_id
       WHERE r.rel_type = ? AND r.room_id = ?
       GROUP BY r.relates_to_id, e.sender
       HAVING MAX(r.stream_ordering) <= ?${having}
       ORDER BY latest DESC LIMIT ?`,
      [...params, opts.limit + 1],
    );
    return rows.map((r) => ({ rootId: r.relates_to_id, latest: Number(r.latest) }));
  }
}
