// Reading rooms: one event, the state (all or one entry), /messages pagination by stream token,
// /context around an event, members (at a point, by membership), joined members and joined rooms.
// Every read applies read access and history visibility. Spec: Client-Server API "Getting events for a
// room", "Retrieving the state of a room", "Room membership".
import { MatrixError } from "../errors.ts";
import { tokenPosition } from "../numbers.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { StoredEvent } from "../store/events.ts";
import type { ClientEvent } from "../events/format.ts";
import { stateKeyOf } from "../store/state-groups.ts";
import { matchesFilter, type RoomEventFilter } from "../filters/room-event-filter.ts";
import { filterVisible } from "./visibility.ts";
import { readAccess, type KnownMembership, type ReadAccess } from "./read-access.ts";
import { roomVersionLookup, serializeEvents } from "./serialize.ts";
import { backfillRoom } from "../federation/backfill.ts";
import { awaitFullState, isPartialState } from "../federation/partial-state/flag.ts";
import { shownMxc } from "../media/ids.ts";

/** Below every stream position, backfilled ones included. */
export const LOWEST = Number.MIN_SAFE_INTEGER;

/**
 * Pagination tokens of room events: `s<stream position>`; a position lies between events. Backfilled
 * history has negative positions (store/events.ts `backfillPositions`), so tokens may be `s-<n>`.
 */
export function parseStreamToken(token: string, name: string): number {
  const m = /^s(-?\d+)$/.exec(token) ?? /^s(\d+)_/.exec(token);
  const digits = m?.[1];
  const pos = digits === undefined ? undefined : digits.startsWith("-") ? negate(tokenPosition(digits.slice(1))) : tokenPosition(digits);
  if (pos === undefined) throw new MatrixError("M_INVALID_PARAM", `Invalid ${name} token`, 400);
  return pos;
}

export const streamToken = (pos: number) => `s${pos}`;
const negate = (n: number | undefined) => (n === undefined ? undefined : -n);

async function serialize(s: Services, r: Requester, events: StoredEvent[]): Promise<ClientEvent[]> {
  return serializeEvents(s, r, roomVersionLookup(s), events);
}

/** Events of the timeline (/event, /messages, /context): with the reader's unsigned.membership at each. */
async function serializeTimeline(s: Services, r: Requester, events: StoredEvent[]): Promise<ClientEvent[]> {
  return serializeEvents(s, r, roomVersionLookup(s), events, { membership: true });
}

async function stateEventsOf(s: Services, group: number | undefined, access: ReadAccess): Promise<StoredEvent[]> {
  const state = group === undefined ? access.room.state : await s.rooms.stateGroups.get(group);
  const events = await s.rooms.events.getMany(state.values());
  return [...state.values()].map((id) => events.get(id)).filter((e): e is StoredEvent => e !== undefined);
}

export async function getRoomEvent(s: Services, r: Requester, roomId: string, eventId: string): Promise<ClientEvent> {
  return (await serializeTimeline(s, r, [await visibleRoomEvent(s, r, roomId, eventId)]))[0]!;
}

/** An event of the room the user may see (history visibility, ignored users), else 404 M_NOT_FOUND. */
export async function visibleRoomEvent(s: Services, r: Requester, roomId: string, eventId: string): Promise<StoredEvent> {
  const notFound = () => new MatrixError("M_NOT_FOUND", "Event not found", 404);
  const access = await readAccess(s, r, roomId).catch(() => {
    throw notFound();
  });
  const e = await s.rooms.events.get(eventId);
  if (!e || e.roomId !== roomId || (access.upTo !== undefined && e.streamOrdering > access.upTo)) throw notFound();
  const [visible] = await filterVisible(s, r.userId, [e], access.membership);
  if (!visible) throw notFound();
  return visible;
}

/**
 * The read access of a read that needs the room's full state: in a room joined with partial state, it
 * waits until the state is complete (then reads again: the state moved).
 */
async function fullStateAccess(s: Services, r: Requester, roomId: string, known?: KnownMembership): Promise<ReadAccess> {
  const access = await readAccess(s, r, roomId, known);
  if (!(await isPartialState(s, roomId))) return access;
  await awaitFullState(s, roomId);
  return readAccess(s, r, roomId);
}

/** `known`: the requester's membership when the caller holds it (a face reading many rooms batches them). */
export async function getRoomState(s: Services, r: Requester, roomId: string, known?: KnownMembership): Promise<ClientEvent[]> {
  const access = await fullStateAccess(s, r, roomId, known);
  return serialize(s, r, await stateEventsOf(s, access.stateGroup, access));
}

export async function getRoomStateEvent(s: Services, r: Requester, roomId: string, type: string, stateKey: string, known?: KnownMembership): Promise<ClientEvent> {
  const access = await readAccess(s, r, roomId, known);
  const state = access.stateGroup === undefined ? access.room.state : await s.rooms.stateGroups.get(access.stateGroup);
  const id = state.get(stateKeyOf(type, stateKey));
  const e = id ? await s.rooms.events.get(id) : undefined;
  if (!e) throw new MatrixError("M_NOT_FOUND", "Event not found", 404);
  return (await serialize(s, r, [e]))[0]!;
}

export interface MessagesRequest {
  from?: string;
  to?: string;
  dir: "b" | "f";
  limit?: number;
  filter: RoomEventFilter;
}

export interface MessagesResponse {
  chunk: ClientEvent[];
  start: string;
  end?: string;
  state?: ClientEvent[];
}

/** Member events of the chunk's senders, for lazy-loading filters (from the state at the first event). */
async function lazyMembers(s: Services, r: Requester, events: StoredEvent[]): Promise<ClientEvent[]> {
  if (events.length === 0) return [];
  const group = events[0]!.stateGroup;
  const state = group === null ? new Map<string, string>() : await s.rooms.stateGroups.get(group);
  const ids = [...new Set(events.map((e) => e.pdu.sender))].map((u) => state.get(stateKeyOf("m.room.member", u))).filter((x): x is string => !!x);
  const members = await s.rooms.events.getMany(ids);
  return serialize(s, r, ids.map((id) => members.get(id)!).filter(Boolean));
}

interface Page {
  events: StoredEvent[];
  start: string;
  /** Where the next page starts; undefined when history is exhausted. */
  end: string | undefined;
  /** The position reached (also when exhausted). */
  reached: number;
}

/** Walks the room's events from a token in one direction until `limit` visible, matching events (also used by /search's event_context). */
export async function paginate(s: Services, r: Requester, access: ReadAccess, roomId: string, req: MessagesRequest): Promise<Page> {
  const limit = pageLimit(req);
  const head = access.upTo ?? (await s.rooms.events.maxStreamOrdering());
  let pos = req.from !== undefined ? parseStreamToken(req.from, "from") : req.dir === "b" ? head : LOWEST;
  const bound = req.to !== undefined ? parseStreamToken(req.to, "to") : undefined;
  const start = streamToken(pos);
  const out: StoredEvent[] = [];
  let exhausted = false;
  for (let round = 0; round < 20 && out.length < limit && !exhausted; round++) {
    const want = Math.max(limit - out.length, 1) * 2;
    const page =
      req.dir === "b"
        ? await s.rooms.events.page(roomId, { after: bound ?? LOWEST, upTo: Math.min(pos, head), dir: "b", limit: want })
        : await s.rooms.events.page(roomId, { after: pos, upTo: Math.min(bound ?? head, head), dir: "f", limit: want });
    if (page.length < want) exhausted = true;
    const visible = new Set((access.everything ? page : await filterVisible(s, r.userId, page, access.membership)).map((e) => e.eventId));
    for (const [i, e] of page.entries()) {
      pos = req.dir === "b" ? e.streamOrdering - 1 : e.streamOrdering;
      if (visible.has(e.eventId) && matchesFilter(req.filter, e.pdu, roomId)) out.push(e);
      if (out.length >= limit) {
        if (i < page.length - 1) exhausted = false;
        break;
      }
    }
  }
  return { events: out, start, end: exhausted ? undefined : streamToken(pos), reached: pos };
}

const pageLimit = (req: MessagesRequest) => Math.min(Math.max(req.limit ?? req.filter.limit ?? 10, 0), 1000);

/** Backfill rounds one /messages request may wait for. */
const BACKFILL_ROUNDS = 2;

/** /messages; `given` replaces the requester's read access (the admin API reads every event). */
export async function getMessages(s: Services, r: Requester, roomId: string, req: MessagesRequest, given?: ReadAccess): Promise<MessagesResponse> {
  return (await readMessages(s, r, roomId, req, given)).response;
}

/** GET /messages's answer, and whether more events may follow in its direction (GraphQL's page info). */
export async function readMessages(s: Services, r: Requester, roomId: string, req: MessagesRequest, given?: ReadAccess): Promise<{ response: MessagesResponse; more: boolean }> {
  // History visibility is judged on the room's state: a partial-state room's history waits for the full one.
  const access = given ?? (await fullStateAccess(s, r, roomId));
  let page = await paginate(s, r, access, roomId, req);
  // Paginating back past the start of what this server has: older history is asked of a server in the
  // room (federation backfill), then read on from where the walk stopped.
  if (req.dir === "b" && req.to === undefined && access.upTo === undefined) {
    let exhausted = page.end === undefined;
    for (let round = 0; round < BACKFILL_ROUNDS && exhausted && page.events.length < pageLimit(req); round++) {
      if ((await backfillRoom(s, roomId)) === 0) break;
      const more = await paginate(s, r, access, roomId, { ...req, from: streamToken(page.reached), limit: pageLimit(req) - page.events.length });
      exhausted = more.end === undefined;
      // History was fetched: more may follow even where this page stops.
      page = { events: [...page.events, ...more.events], start: page.start, end: more.end ?? streamToken(more.reached), reached: more.reached };
    }
  }
  const res: MessagesResponse = { chunk: await serializeTimeline(s, r, page.events), start: page.start };
  // `end` is omitted only when no further events can come (as Synapse: an empty chunk); a chunk that
  // reached the start of history still says where it ended, and the next request answers without one.
  if (page.end !== undefined || page.events.length > 0) res.end = streamToken(page.reached);
  if (req.filter.lazy_load_members) res.state = await lazyMembers(s, r, page.events);
  return { response: res, more: page.end !== undefined };
}

export async function getContext(
  s: Services,
  r: Requester,
  roomId: string,
  eventId: string,
  limit: number,
  filter: RoomEventFilter,
): Promise<Record<string, unknown>> {
  const access = await fullStateAccess(s, r, roomId);
  const e = await s.rooms.events.get(eventId);
  const notFound = () => new MatrixError("M_NOT_FOUND", "Event not found", 404);
  if (!e || e.roomId !== roomId || (access.upTo !== undefined && e.streamOrdering > access.upTo)) throw notFound();
  if ((await filterVisible(s, r.userId, [e], access.membership)).length === 0) throw notFound();
  const half = Math.floor(limit / 2);
  const before = await paginate(s, r, access, roomId, { from: streamToken(e.streamOrdering - 1), dir: "b", limit: half, filter });
  const after = await paginate(s, r, access, roomId, { from: streamToken(e.streamOrdering), dir: "f", limit: limit - half, filter });
  const state = filter.lazy_load_members
    ? await lazyMembers(s, r, [e, ...before.events, ...after.events])
    : await serialize(s, r, await stateEventsOf(s, e.stateGroup ?? undefined, access));
  return {
    event: (await serializeTimeline(s, r, [e]))[0],
    events_before: await serializeTimeline(s, r, before.events),
    events_after: await serializeTimeline(s, r, after.events),
    state,
    start: streamToken(before.reached),
    end: streamToken(after.reached),
  };
}

export async function getMembers(
  s: Services,
  r: Requester,
  roomId: string,
  opts: { at?: string; membership?: string; notMembership?: string },
  known?: KnownMembership,
): Promise<ClientEvent[]> {
  const access = await fullStateAccess(s, r, roomId, known);
  let group = access.stateGroup;
  if (opts.at !== undefined) {
    const at = Math.min(parseStreamToken(opts.at, "at"), access.upTo ?? Infinity);
    const [last] = await s.rooms.events.page(roomId, { after: 0, upTo: at, dir: "b", limit: 1 });
    if (last) group = last.stateGroup ?? undefined;
  }
  const state = group === undefined ? access.room.state : await s.rooms.stateGroups.get(group);
  const ids = [...state].filter(([k]) => k.startsWith("m.room.member\u0000")).map(([, id]) => id);
  const events = [...(await s.rooms.events.getMany(ids)).values()].filter((e) => {
    const m = e.pdu.content.membership;
    if (opts.membership !== undefined && m !== opts.membership) return false;
    if (opts.notMembership !== undefined && m === opts.notMembership) return false;
    return true;
  });
  return serialize(s, r, events);
}

/**
 * GET /joined_members: each joined member's display name and avatar, both always there and null when
 * unset, as Synapse answers (clients and Complement's TestRoomState read the keys; the spec's fields are optional).
 */
export async function getJoinedMembers(s: Services, r: Requester, roomId: string): Promise<{ joined: Record<string, { display_name: string | null; avatar_url: string | null }> }> {
  const m = await s.rooms.store.membership(roomId, r.userId);
  if (m?.membership !== "join") throw new MatrixError("M_FORBIDDEN", "You are not in this room", 403);
  await awaitFullState(s, roomId);
  const joined: Record<string, { display_name: string | null; avatar_url: string | null }> = {};
  for (const member of await s.rooms.store.membersOf(roomId)) {
    if (member.membership !== "join") continue;
    joined[member.userId] = { display_name: member.displayname || null, avatar_url: shownMxc(member.avatarUrl) ?? null };
  }
  return { joined };
}

export async function getJoinedRooms(s: Services, r: Requester): Promise<{ joined_rooms: string[] }> {
  return { joined_rooms: await s.rooms.store.roomsOfUser(r.userId, "join") };
}
