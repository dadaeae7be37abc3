// Repository of the full-text index of room events (event_search), behind one interface with two
// implementations: SQLite FTS5 (a virtual table whose rowid is the event's stream position, bm25 ranking,
// porter stemming) and PostgreSQL full-text search (a tsvector per event with a GIN index, prefix
// to_tsquery, ts_rank_cd). Both tables are created by hand in the search migration. Filtering by room,
// sender and type joins the events table. Spec: Client-Server API "Server Side Search".
import { write, type Param, type Sql, type SqlExecutor } from "../../storage/sql.ts";
import { searchIndexText } from "../text.ts";

/** One text to index: the searchable field of an event (its key is implied by the event type). */
export interface SearchEntry {
  streamOrdering: number;
  value: string;
}

/** A room to search and, for a former member, the last stream position they may read. */
export interface SearchScope {
  roomId: string;
  upTo?: number;
}

/** Where a page starts: after this hit in the query's order (rank is ignored when ordering by recency). */
export interface SearchCursor {
  rank: number;
  streamOrdering: number;
}

export interface SearchQuery {
  /** The words of the search term (letters and digits, lower case), each matched as a prefix; all must match. */
  words: string[];
  rooms: SearchScope[];
  /** Event types whose field is searched (m.room.message, m.room.name, m.room.topic). */
  types: string[];
  senders?: string[];
  notSenders?: string[];
  orderBy: "rank" | "recent";
  after?: SearchCursor;
  limit: number;
}

export interface SearchHit {
  streamOrdering: number;
  eventId: string;
  roomId: string;
  sender: string;
  /** Higher is closer; 0 when ordering by recency is all that was asked (it is still computed). */
  rank: number;
}

export interface SearchStore {
  /** The rooms a user's search covers: joined ones whole, left or banned ones (not forgotten) up to the leave. */
  scopesOf(userId: string): Promise<(SearchScope & { membership: string })[]>;
  /** Adds the entries to the index (the search indexer's batch; backfilled history inside its commit). */
  index(tx: SqlExecutor, entries: SearchEntry[]): Promise<void>;
  /**
   * Removes the given events of a room from the index (on redaction). On PostgreSQL it first takes the
   * index's lock (`holdIndex`), so that it waits for an indexer batch under way and then sees its rows.
   */
  remove(tx: SqlExecutor, roomId: string, eventIds: string[]): Promise<void>;
  /**
   * Serializes `tx` with the indexer's batches and with redactions' removals until it ends (PostgreSQL: a
   * transaction-scoped advisory lock; SQLite's transactions are serialized already). The indexer takes it
   * before it looks for redactions of its batch: whichever of the two commits second sees the other.
   */
  holdIndex(tx: SqlExecutor): Promise<void>;
  /** One page of matching events, best (or newest) first. */
  search(q: SearchQuery): Promise<SearchHit[]>;
  /** How many events match in all (ignoring the cursor and the limit). */
  count(q: SearchQuery): Promise<number>;
}

const placeholders = (n: number) => Array.from({ length: n }, () => "?").join(",");

/** The WHERE conditions on `e` (events) shared by both dialects: rooms with their bounds, types, senders. */
function eventConditions(q: SearchQuery): { sql: string; params: Param[] } {
  const params: Param[] = [];
  const whole = q.rooms.filter((r) => r.upTo === undefined).map((r) => r.roomId);
  const bounded = q.rooms.filter((r) => r.upTo !== undefined);
  const roomParts: string[] = [];
  if (whole.length > 0) {
    roomParts.push(`e.room_id IN (${placeholders(whole.length)})`);
    params.push(...whole);
  }
  for (const r of bounded) {
    roomParts.push(`(e.room_id = ? AND e.stream_ordering <= ?)`);
    params.push(r.roomId, r.upTo!);
  }
  // Indexed after their commit, events may have left the timeline since (rejected by a state recheck).
  const parts = [roomParts.length > 0 ? `(${roomParts.join(" OR ")})` : "1 = 0", "e.outlier = FALSE AND e.soft_failed = FALSE AND e.rejected_reason IS NULL"];
  parts.push(`e.type IN (${placeholders(q.types.length)})`);
  params.push(...q.types);
  if (q.senders) {
    parts.push(q.senders.length > 0 ? `e.sender IN (${placeholders(q.senders.length)})` : "1 = 0");
    params.push(...q.senders);
  }
  if (q.notSenders && q.notSenders.length > 0) {
    parts.push(`e.sender NOT IN (${placeholders(q.notSenders.length)})`);
    params.push(...q.notSenders);
  }
  return { sql: parts.join(" AND "), params };
}

/** The cursor condition and ORDER BY over the columns `rank` and `stream_ordering` of the inner query. */
function pageClause(q: SearchQuery): { where: string; order: string; params: Param[] } {
  const order = q.orderBy === "rank" ? "rank DESC, stream_ordering DESC" : "stream_ordering DESC";
  if (!q.after) return { where: "", order, params: [] };
  if (q.orderBy === "recent") return { where: "WHERE stream_ordering < ?", order, params: [q.after.streamOrdering] };
  return {
    where: "WHERE (rank < ? OR (rank = ? AND stream_ordering < ?))",
    order,
    params: [q.after.rank, q.after.rank, q.after.streamOrdering],
  };
}

interface HitRow {
  stream_ordering: number | string;
  event_id: string;
  room_id: string;
  sender: string;
  rank: number | string | null;
}

const toHit = (r: HitRow): SearchHit => ({
  streamOrdering: Number(r.stream_ordering),
  eventId: r.event_id,
  roomId: r.room_id,
  sender: r.sender,
  rank: Number(r.rank ?? 0),
});

/** The part both implementations share: which rooms a user's search covers. */
abstract class BaseSearchStore {
  constructor(protected readonly sql: Sql) {}

  async scopesOf(userId: string): Promise<(SearchScope & { membership: string })[]> {
    const rows = await this.sql.all<{ room_id: string; membership: string; stream_ordering: number | string }>(
      `SELECT room_id, membership, stream_ordering FROM room_memberships
       WHERE user_id = ? AND forgotten = ? AND membership IN ('join', 'leave', 'ban')`,
      [userId, false],
    );
    return rows.map((r) =>
      r.membership === "join"
        ? { roomId: r.room_id, membership: r.membership }
        : { roomId: r.room_id, membership: r.membership, upTo: Number(r.stream_ordering) },
    );
  }
}

class SqliteSearchStore extends BaseSearchStore implements SearchStore {
  async holdIndex(): Promise<void> {}

  async index(tx: SqlExecutor, entries: SearchEntry[]): Promise<void> {
    if (entries.length > 0) await write(tx, `INSERT INTO event_search (rowid, value) VALUES ${entries.map(() => "(?, ?)").join(", ")}`, entries.flatMap((e) => [e.streamOrdering, searchIndexText(e.value)]));
  }

  async remove(tx: SqlExecutor, roomId: string, eventIds: string[]): Promise<void> {
    if (eventIds.length === 0) return;
    await tx.run(
      `DELETE FROM event_search WHERE rowid IN (SELECT stream_ordering FROM events WHERE room_id = ? AND event_id IN (${placeholders(eventIds.length)}))`,
      [roomId, ...eventIds],
    );
  }

  /** FTS5 query syntax: every word a quoted prefix term, implicitly AND-ed. */
  private match(words: string[]): string {
    return words.map((w) => `"${w.replace(/"/g, '""')}"*`).join(" ");
  }

  private inner(q: SearchQuery): { sql: string; params: Param[] } {
    const cond = eventConditions(q);
    return {
      sql: `SELECT e.stream_ordering AS stream_ordering, e.event_id AS event_id, e.room_id AS room_id, e.sender AS sender, -bm25(event_search) AS rank
            FROM event_search JOIN events e ON e.stream_ordering = event_search.rowid
            WHERE event_search MATCH ? AND ${cond.sql}`,
      params: [this.match(q.words), ...cond.params],
    };
  }

  async search(q: SearchQuery): Promise<SearchHit[]> {
    if (q.words.length === 0 || q.rooms.length === 0) return [];
    const inner = this.inner(q);
    const page = pageClause(q);
    const rows = await this.sql.all<HitRow>(`SELECT * FROM (${inner.sql}) AS hits ${page.where} ORDER BY ${page.order} LIMIT ?`, [
      ...inner.params,
      ...page.params,
      q.limit,
    ]);
    return rows.map(toHit);
  }

  async count(q: SearchQuery): Promise<number> {
    if (q.words.length === 0 || q.rooms.length === 0) return 0;
    const inner = this.inner(q);
    const r = await this.sql.get<{ n: number | string }>(`SELECT COUNT(*) AS n FROM (${inner.sql}) AS hits`, inner.params);
    return Number(r?.n ?? 0);
  }
}

class PostgresSearchStore extends BaseSearchStore implements SearchStore {

  async index(tx: SqlExecutor, entries: SearchEntry[]): Promise<void> {
    if (entries.length > 0)
      await write(
        tx,
        `INSERT INTO event_search (stream_ordering, vector) VALUES ${entries.map(() => "(?, to_tsvector('english', ?))").join(", ")} ON CONFLICT DO NOTHING`,
        entries.flatMap((e) => [e.streamOrdering, searchIndexText(e.value)]),
      );
  }

  async holdIndex(tx: SqlExecutor): Promise<void> {
    await tx.get(`SELECT 1 AS x FROM (SELECT pg_advisory_xact_lock(hashtext('event_search'))) l`);
  }

  async remove(tx: SqlExecutor, roomId: string, eventIds: string[]): Promise<void> {
    if (eventIds.length === 0) return;
    await this.holdIndex(tx);
    await tx.run(
      `DELETE FROM event_search WHERE stream_ordering IN (SELECT stream_ordering FROM events WHERE room_id = ? AND event_id IN (${placeholders(eventIds.length)}))`,
      [roomId, ...eventIds],
    );
  }

  /** to_tsquery syntax: every word a prefix lexeme (`word:*`), AND-ed (words hold only letters and digits). */
  private tsquery(words: string[]): string {
    return words.map((w) => `${w}:*`).join(" & ");
  }

  private inner(q: SearchQuery): { sql: string; params: Param[] } {
    const cond = eventConditions(q);
    return {
      sql: `SELECT e.stream_ordering AS stream_ordering, e.event_id AS event_id, e.room_id AS room_id, e.sender AS sender,
                   CAST(ts_rank_cd(es.vector, tq.q) AS double precision) AS rank
            FROM event_search es
            JOIN events e ON e.stream_ordering = es.stream_ordering
            CROSS JOIN (SELECT to_tsquery('english', ?) AS q) AS tq
            WHERE es.vector @@ tq.q AND ${cond.sql}`,
      params: [this.tsquery(q.words), ...cond.params],
    };
  }

  async search(q: SearchQuery): Promise<SearchHit[]> {
    if (q.words.length === 0 || q.rooms.length === 0) return [];
    const inner = this.inner(q);
    const page = pageClause(q);
    const where = page.where.replace(/rank (<|=) \?/g, "rank $1 CAST(? AS double precision)");
    const rows = await this.sql.all<HitRow>(`SELECT * FROM (${inner.sql}) AS hits ${where} ORDER BY ${page.order} LIMIT ?`, [
      ...inner.params,
      ...page.params,
      q.limit,
    ]);
    return rows.map(toHit);
  }

  async count(q: SearchQuery): Promise<number> {
    if (q.words.length === 0 || q.rooms.length === 0) return 0;
    const inner = this.inner(q);
    const r = await this.sql.get<{ n: number | string }>(`SELECT COUNT(*) AS n FROM (${inner.sql}) AS hits`, inner.params);
    return Number(r?.n ?? 0);
  }
}

export function createSearchStore(sql: Sql): SearchStore {
  return sql.dialect === "sqlite" ? new SqliteSearchStore(sql) : new PostgresSearchStore(sql);
}
