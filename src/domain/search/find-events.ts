// Finding room events by full text, as the requester may see them: the rooms they are joined to (whole)
// and the rooms they left or were banned from (up to that moment, unless forgotten), narrowed by a
// RoomEventFilter, with history visibility applied to every hit. Pages follow the index's order (rank or
// recency) with opaque batch tokens; a token may also pin the search to one room or sender (the groups'
// next_batch). Shared by POST /search and GraphQL searchMessages.
// Spec: Client-Server API "Server Side Search".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { StoredEvent } from "../store/events.ts";
import type { SearchCursor, SearchQuery } from "../store/search.ts";
import { matchesFilter, type RoomEventFilter } from "../filters/room-event-filter.ts";
import { filterVisible } from "../rooms/visibility.ts";
import { SEARCH_KEYS, type SearchKey } from "./index-hooks.ts";
import { SEARCH_INDEXER } from "./index-consumer.ts";
import { checkSearchTerm } from "../text.ts";

export type SearchOrder = "rank" | "recent";

export interface EventSearch {
  term: string;
  /** Which fields to search (default: all three). */
  keys?: SearchKey[];
  filter?: RoomEventFilter;
  orderBy?: SearchOrder;
}

/** Where a page starts, and what an earlier page's group pinned the search to. */
export interface BatchToken {
  orderBy: SearchOrder;
  after: SearchCursor;
  room?: string;
  sender?: string;
}

export interface EventSearchHit {
  event: StoredEvent;
  rank: number;
}

export interface EventSearchPage {
  hits: EventSearchHit[];
  /** Approximate number of matches (before history visibility is applied). */
  count: number;
  /** The words searched for (to highlight in results). */
  highlights: string[];
  /** The next page's token: set after a full page (which may be the last), undefined when there is no more. */
  next: BatchToken | undefined;
  /** The token this page started from. */
  from: BatchToken | undefined;
  /** The requester's membership of each room searched. */
  memberships: Map<string, string>;
}

const MAX_WORDS = 32;
export const DEFAULT_SEARCH_LIMIT = 10;
export const MAX_SEARCH_LIMIT = 100;

/** The words of a search term: runs of letters and digits, lower-cased, each searched as a prefix. */
export function searchWords(term: string): string[] {
  const words = term.normalize("NFKC").toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words)].slice(0, MAX_WORDS);
}

export function encodeBatchToken(t: BatchToken): string {
  const raw: Record<string, unknown> = { o: t.orderBy, p: t.after.streamOrdering };
  if (t.orderBy === "rank") raw.r = t.after.rank;
  if (t.room !== undefined) raw.room = t.room;
  if (t.sender !== undefined) raw.sender = t.sender;
  return Buffer.from(JSON.stringify(raw), "utf8").toString("base64url");
}

export function decodeBatchToken(token: string): BatchToken {
  const bad = () => new MatrixError("M_INVALID_PARAM", "Invalid next_batch token", 400);
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as Record<string, unknown>;
  } catch {
    throw bad();
  }
  if (typeof raw !== "object" || raw === null) throw bad();
  const { o, p, r, room, sender } = raw;
  if ((o !== "rank" && o !== "recent") || typeof p !== "number" || !Number.isSafeInteger(p)) throw bad();
  if (o === "rank" && (typeof r !== "number" || !Number.isFinite(r))) throw bad();
  if ((room !== undefined && typeof room !== "string") || (sender !== undefined && typeof sender !== "string")) throw bad();
  return { orderBy: o, after: { rank: o === "rank" ? (r as number) : 0, streamOrdering: p }, room, sender };
}

/** One page of the events matching `req` that `r` may see. */
export async function findEvents(s: Services, r: Requester, req: EventSearch, batch?: BatchToken): Promise<EventSearchPage> {
  checkSearchTerm(req.term, "search_term");
  const orderBy = req.orderBy ?? "rank";
  if (batch && batch.orderBy !== orderBy) throw new MatrixError("M_INVALID_PARAM", "next_batch belongs to a search with another order_by", 400);
  const filter = req.filter ?? {};
  const words = searchWords(req.term);
  const keys = req.keys && req.keys.length > 0 ? req.keys : (Object.keys(SEARCH_KEYS) as SearchKey[]);
  const limit = Math.min(filter.limit || DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT);

  const scopes = (await s.search.scopesOf(r.userId)).filter(
    (x) => (!filter.rooms || filter.rooms.includes(x.roomId)) && !filter.not_rooms?.includes(x.roomId) && (batch?.room === undefined || batch.room === x.roomId),
  );
  const memberships = new Map(scopes.map((x) => [x.roomId, x.membership]));
  let senders = filter.senders;
  if (batch?.sender !== undefined) senders = (senders ?? [batch.sender]).filter((x) => x === batch.sender);
  const query: SearchQuery = {
    words,
    rooms: scopes.map(({ roomId, upTo }) => ({ roomId, upTo })),
    types: keys.map((k) => SEARCH_KEYS[k]),
    senders,
    notSenders: filter.not_senders,
    orderBy,
    limit,
  };
  const empty = { hits: [], count: 0, highlights: words, next: undefined, from: batch, memberships };
  if (words.length === 0 || scopes.length === 0) return empty;
  // The index is written after each commit (index-consumer.ts): everything committed before this search
  // is in it before it is read, so a message just sent is found.
  await s.consumers.reach(SEARCH_INDEXER, await s.rooms.events.streamIds.current());

  const hits: EventSearchHit[] = [];
  let cursor = batch?.after;
  let more = false;
  const batchSize = Math.max(limit * 2, 20);
  for (let round = 0; ; round++) {
    if (round === 10) {
      more = true; // give the page back as it is; the token goes on from here
      break;
    }
    const raw = await s.search.search({ ...query, after: cursor, limit: batchSize });
    const events = await s.rooms.events.getMany(raw.map((h) => h.eventId));
    const visible = await visibleIds(s, r.userId, [...events.values()], memberships);
    for (let i = 0; i < raw.length && hits.length < limit; i++) {
      const h = raw[i]!;
      cursor = { rank: h.rank, streamOrdering: h.streamOrdering };
      const e = events.get(h.eventId);
      if (e && visible.has(e.eventId) && matchesFilter(filter, e.pdu, e.roomId)) hits.push({ event: e, rank: h.rank });
    }
    // A full page always gets a token, even when nothing follows (as Synapse: a client paging on gets an
    // empty page without one; Complement's TestSearch expects it).
    if (hits.length >= limit) {
      more = true;
      break;
    }
    if (raw.length < batchSize) break;
  }
  const next = more && cursor ? { orderBy, after: cursor, room: batch?.room, sender: batch?.sender } : undefined;
  return { hits, count: await s.search.count(query), highlights: words, next, from: batch, memberships };
}

async function visibleIds(s: Services, userId: string, events: StoredEvent[], memberships: Map<string, string>): Promise<Set<string>> {
  const byRoom = new Map<string, StoredEvent[]>();
  for (const e of events) byRoom.set(e.roomId, [...(byRoom.get(e.roomId) ?? []), e]);
  const out = new Set<string>();
  for (const [roomId, list] of byRoom) for (const e of await filterVisible(s, userId, list, memberships.get(roomId))) out.add(e.eventId);
  return out;
}
