// POST /search: the request's room_events criteria checked, one page found (find-events.ts), and the
// response built as the spec shapes it — ranked results with optional event context (and the senders'
// profiles at that point), the state of each room in the results, groups by room or sender with their
// own next_batch, the count and the highlights. Spec: Client-Server API "Server Side Search".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { ClientEvent } from "../events/format.ts";
import type { StoredEvent } from "../store/events.ts";
import { isPlainObject } from "../events/types.ts";
import { parseRoomEventFilter, type FilterOptions } from "../filters/room-event-filter.ts";
import { paginate, streamToken } from "../rooms/read.ts";
import { readAccess, type ReadAccess } from "../rooms/read-access.ts";
import { roomVersionLookup, serializeEvents } from "../rooms/serialize.ts";
import { stateKeyOf } from "../store/state-groups.ts";
import { SEARCH_KEYS, type SearchKey } from "./index-hooks.ts";
import { decodeBatchToken, encodeBatchToken, findEvents, type BatchToken, type EventSearch, type EventSearchHit } from "./find-events.ts";
import { requireNotGuest } from "../accounts/guest-access.ts";
import { shownMxc } from "../media/ids.ts";

type GroupKey = "room_id" | "sender";

export interface RoomEventsCriteria extends EventSearch {
  context?: { beforeLimit: number; afterLimit: number; includeProfile: boolean };
  includeState: boolean;
  groupBy: GroupKey[];
}

const badJson = (message: string) => new MatrixError("M_BAD_JSON", message, 400);

function intField(raw: Record<string, unknown>, name: string, def: number): number {
  const v = raw[name];
  if (v === undefined || v === null) return def;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0) throw badJson(`event_context.${name} must be a non-negative integer`);
  return Math.min(v, 100);
}

/** Checks the body of POST /search; undefined when it asks for no room_events. */
export function parseSearchRequest(body: Record<string, unknown>, opts: FilterOptions = {}): RoomEventsCriteria | undefined {
  const categories = body.search_categories;
  if (categories === undefined) throw new MatrixError("M_MISSING_PARAM", "Missing search_categories", 400);
  if (!isPlainObject(categories)) throw badJson("search_categories must be an object");
  const raw = categories.room_events;
  if (raw === undefined || raw === null) return undefined;
  if (!isPlainObject(raw)) throw badJson("room_events must be an object");

  if (raw.search_term === undefined) throw new MatrixError("M_MISSING_PARAM", "Missing search_term", 400);
  if (typeof raw.search_term !== "string") throw badJson("search_term must be a string");
  let keys: SearchKey[] | undefined;
  if (raw.keys !== undefined) {
    if (!Array.isArray(raw.keys) || raw.keys.some((k) => typeof k !== "string")) throw badJson("keys must be a list of strings");
    for (const k of raw.keys) if (!(k in SEARCH_KEYS)) throw new MatrixError("M_INVALID_PARAM", `Unknown search key ${k}`, 400);
    keys = raw.keys as SearchKey[];
  }
  const orderBy = raw.order_by ?? "rank";
  if (orderBy !== "rank" && orderBy !== "recent") throw new MatrixError("M_INVALID_PARAM", "order_by must be rank or recent", 400);
  let context: RoomEventsCriteria["context"];
  if (raw.event_context !== undefined && raw.event_context !== null) {
    if (!isPlainObject(raw.event_context)) throw badJson("event_context must be an object");
    const ip = raw.event_context.include_profile;
    if (ip !== undefined && typeof ip !== "boolean") throw badJson("event_context.include_profile must be a boolean");
    context = { beforeLimit: intField(raw.event_context, "before_limit", 5), afterLimit: intField(raw.event_context, "after_limit", 5), includeProfile: ip === true };
  }
  if (raw.include_state !== undefined && typeof raw.include_state !== "boolean") throw badJson("include_state must be a boolean");
  const groupBy: GroupKey[] = [];
  if (raw.groupings !== undefined && raw.groupings !== null) {
    if (!isPlainObject(raw.groupings)) throw badJson("groupings must be an object");
    const list = raw.groupings.group_by ?? [];
    if (!Array.isArray(list)) throw badJson("groupings.group_by must be a list");
    for (const g of list) {
      if (!isPlainObject(g) || typeof g.key !== "string") throw badJson("each groupings.group_by item needs a key");
      if (g.key !== "room_id" && g.key !== "sender") throw new MatrixError("M_INVALID_PARAM", `Unknown group key ${g.key}`, 400);
      if (!groupBy.includes(g.key)) groupBy.push(g.key);
    }
  }
  return {
    term: raw.search_term,
    keys,
    filter: parseRoomEventFilter(raw.filter, "filter", opts),
    orderBy,
    context,
    includeState: raw.include_state === true,
    groupBy,
  };
}

interface ResultContext {
  start: string;
  end: string;
  events_before: ClientEvent[];
  events_after: ClientEvent[];
  profile_info?: Record<string, { displayname?: string; avatar_url?: string }>;
}

/** Read access per room, asked once per room of the page. */
function accessCache(s: Services, r: Requester): (roomId: string) => Promise<ReadAccess> {
  const memo = new Map<string, Promise<ReadAccess>>();
  return (roomId) => {
    let a = memo.get(roomId);
    if (!a) memo.set(roomId, (a = readAccess(s, r, roomId)));
    return a;
  };
}

/** The senders' display names and avatars from the member state at `at` (their "historic" profile). */
async function profilesAt(s: Services, at: StoredEvent, senders: Set<string>): Promise<ResultContext["profile_info"]> {
  const state = at.stateGroup === null ? new Map<string, string>() : await s.rooms.stateGroups.get(at.stateGroup);
  const ids = [...senders].map((u) => state.get(stateKeyOf("m.room.member", u))).filter((x): x is string => x !== undefined);
  const members = await s.rooms.events.getMany(ids);
  const out: NonNullable<ResultContext["profile_info"]> = {};
  for (const m of members.values()) {
    const c = m.pdu.content as Record<string, unknown>;
    const avatar = shownMxc(c.avatar_url);
    out[m.pdu.state_key!] = {
      ...(typeof c.displayname === "string" ? { displayname: c.displayname } : {}),
      ...(avatar ? { avatar_url: avatar } : {}),
    };
  }
  return out;
}

async function contextOf(
  s: Services,
  r: Requester,
  access: ReadAccess,
  hit: EventSearchHit,
  criteria: RoomEventsCriteria,
  serialize: (events: StoredEvent[]) => Promise<ClientEvent[]>,
): Promise<ResultContext> {
  const opts = criteria.context!;
  const e = hit.event;
  const filter = { ...criteria.filter, limit: undefined };
  const before = await paginate(s, r, access, e.roomId, { from: streamToken(e.streamOrdering - 1), dir: "b", limit: opts.beforeLimit, filter });
  const after = await paginate(s, r, access, e.roomId, { from: streamToken(e.streamOrdering), dir: "f", limit: opts.afterLimit, filter });
  const ctx: ResultContext = {
    start: streamToken(before.reached),
    end: streamToken(after.reached),
    events_before: await serialize(before.events),
    events_after: await serialize(after.events),
  };
  if (opts.includeProfile) {
    const all = [...before.events, e, ...after.events];
    ctx.profile_info = await profilesAt(s, after.events[after.events.length - 1] ?? e, new Set(all.map((x) => x.pdu.sender)));
  }
  return ctx;
}

/** POST /search for the room_events category: the `room_events` object of the response. */
export async function searchRoomEvents(s: Services, r: Requester, criteria: RoomEventsCriteria, nextBatch?: string): Promise<Record<string, unknown>> {
  requireNotGuest(r, "searchRoomEvents");
  const batch: BatchToken | undefined = nextBatch === undefined ? undefined : decodeBatchToken(nextBatch);
  const page = await findEvents(s, r, criteria, batch);
  const versions = roomVersionLookup(s);
  // Results and their context are timeline events (with the reader's unsigned.membership); state is not.
  const serialize = (events: StoredEvent[]) => serializeEvents(s, r, versions, events, { membership: true });
  const serializeState = (events: StoredEvent[]) => serializeEvents(s, r, versions, events);
  const access = accessCache(s, r);

  const serialized = await serialize(page.hits.map((h) => h.event));
  const results: Record<string, unknown>[] = [];
  for (const [i, hit] of page.hits.entries()) {
    const item: Record<string, unknown> = { rank: hit.rank, result: serialized[i] };
    if (criteria.context) item.context = await contextOf(s, r, await access(hit.event.roomId), hit, criteria, serialize);
    results.push(item);
  }

  const out: Record<string, unknown> = { count: page.count, highlights: page.highlights, results };
  if (page.next) out.next_batch = encodeBatchToken(page.next);

  if (criteria.includeState) {
    const state: Record<string, ClientEvent[]> = {};
    for (const roomId of new Set(page.hits.map((h) => h.event.roomId))) {
      const a = await access(roomId);
      const map = a.stateGroup === undefined ? a.room.state : await s.rooms.stateGroups.get(a.stateGroup);
      const events = await s.rooms.events.getMany(map.values());
      state[roomId] = await serializeState([...map.values()].map((id) => events.get(id)).filter((e): e is StoredEvent => e !== undefined));
    }
    out.state = state;
  }

  if (criteria.groupBy.length > 0) {
    const groups: Record<string, Record<string, { results: string[]; order: number; next_batch?: string }>> = {};
    for (const key of criteria.groupBy) {
      const byValue: Record<string, { results: string[]; order: number; next_batch?: string }> = {};
      for (const hit of page.hits) {
        const value = key === "room_id" ? hit.event.roomId : hit.event.pdu.sender;
        let g = byValue[value];
        if (!g) {
          g = byValue[value] = { results: [], order: Object.keys(byValue).length + 1 };
          // The group goes on from where this page stopped, pinned to its room or sender.
          if (page.next) g.next_batch = encodeBatchToken({ ...page.next, ...(key === "room_id" ? { room: value } : { sender: value }) });
        }
        g.results.push(hit.event.eventId);
      }
      groups[key] = byValue;
    }
    out.groups = groups;
  }
  return out;
}

export interface SerializedSearchPage {
  hits: { event: ClientEvent; rank: number; roomId: string; cursor: string }[];
  count: number;
  highlights: string[];
  /** The token of the next page; undefined when there is no more. */
  next: string | undefined;
}

/**
 * The same search for faces that page with cursors (GraphQL searchMessages): each hit in client format
 * with a cursor that resumes the search just after it.
 */
export async function searchMessages(
  s: Services,
  r: Requester,
  req: EventSearch & { after?: string },
): Promise<SerializedSearchPage> {
  requireNotGuest(r, "searchRoomEvents");
  if (req.filter?.limit === 0) return { hits: [], count: 0, highlights: [], next: undefined };
  const batch = req.after === undefined ? undefined : decodeBatchToken(req.after);
  const page = await findEvents(s, r, req, batch);
  const events = await serializeEvents(s, r, roomVersionLookup(s), page.hits.map((h) => h.event));
  const orderBy = req.orderBy ?? "rank";
  return {
    hits: page.hits.map((h, i) => ({
      event: events[i]!,
      rank: h.rank,
      roomId: h.event.roomId,
      cursor: encodeBatchToken({ orderBy, after: { rank: h.rank, streamOrdering: h.event.streamOrdering }, room: batch?.room, sender: batch?.sender }),
    })),
    count: page.count,
    highlights: page.highlights,
    next: page.next && encodeBatchToken(page.next),
  };
}
