// GET /events (spec: Client-Server API "Legacy endpoints", and "Room previews" for `room_id`): room events
// after `from` read forward, at most `limit`, `end` where the read stopped; then typing, receipts, account
// data and presence from the /sync providers. A world_readable room not joined is peeked into.
import type { Services } from "../services.ts";
import { MatrixError } from "../errors.ts";
import type { Requester } from "../accounts/requester.ts";
import type { StoredEvent } from "../store/events.ts";
import { SyncReads, type UserMembership } from "../store/sync-reads.ts";
import { parseSyncFilter } from "../filters/sync-filter.ts";
import { filterVisible } from "../rooms/visibility.ts";
import { withoutIgnored } from "../account-data/ignored-users.ts";
import { serializeEvents } from "../rooms/serialize.ts";
import { currentStateEvent, loadRoom } from "../rooms/room-cache.ts";
import { roomNotVisible } from "../rooms/read-access.ts";
import { presenceEvent } from "../presence/presence.ts";
import { collectStreams, MAX_SYNC_TIMEOUT_MS } from "./sync.ts";
import { formatSyncToken, parseSyncToken, type SyncToken } from "./token.ts";
import { Waiter, type Cancel } from "./wait.ts";
import { legacyEvent, legacyPresence } from "./legacy-format.ts";
import type { JsonObject, SyncResult } from "./types.ts";

/** Room events per call when the client gives no `limit`. */
const DEFAULT_LIMIT = 100;
/** The streams read besides room events (as Synapse's /events: no to-device, device lists or push rules). */
const OTHER_STREAMS = ["account_data", "receipts", "typing", "presence"] as const;

/** Which rooms a call reads: the joined ones, or the one named (joined, or peeked into). */
interface Scope {
  rooms: ReadonlySet<string>;
  /** The user's membership per room (the rooms read and those of their own membership changes). */
  memberships: readonly UserMembership[];
  /** Set when peeking: the room's joined members, whose presence is shown. */
  peekMembers?: readonly string[];
}

async function scopeOf(s: Services, r: Requester, roomId: string | undefined): Promise<Scope> {
  const memberships = await s.sync.streamCache.membershipsOf(r.userId, () => new SyncReads(s.storage.sql).membershipsOf(r.userId));
  const joined = new Set(memberships.filter((m) => m.membership === "join").map((m) => m.roomId));
  if (roomId === undefined) return { rooms: joined, memberships };
  const mine = memberships.filter((m) => m.roomId === roomId);
  if (joined.has(roomId)) return { rooms: new Set([roomId]), memberships: mine };
  // Not joined: a world_readable room is peeked into (as Synapse); any other is refused.
  const room = await loadRoom(s, roomId);
  if (!room) throw roomNotVisible();
  const hv = await currentStateEvent(s, room, "m.room.history_visibility");
  if (hv?.content.history_visibility !== "world_readable") throw new MatrixError("M_FORBIDDEN", "You are not in this room and it is not world_readable", 403);
  const members = (await s.rooms.store.membersOf(roomId)).filter((m) => m.membership === "join").map((m) => m.userId);
  return { rooms: new Set([roomId]), memberships: mine, peekMembers: members };
}

/**
 * The room events after `after` (up to `upTo`) the user may see, oldest first, at most `limit` read:
 * `upTo` comes back lowered to the last one read when there may be more (`more`).
 */
async function roomEventsAfter(s: Services, r: Requester, scope: Scope, after: number, upTo: number, limit: number): Promise<{ events: JsonObject[]; upTo: number; more: boolean }> {
  const read = await s.rooms.events.forwardInRooms([...scope.rooms], { after, upTo, limit });
  let cut = read.length >= limit ? read[read.length - 1]!.streamOrdering : upTo;
  // The user's own membership changes in the rooms not read (an invite, a join and leave): in those whose
  // membership changed since `after`, their member events.
  const changed = scope.memberships.filter((m) => !scope.rooms.has(m.roomId) && m.streamOrdering > after).map((m) => m.roomId);
  const own = changed.length > 0 ? await s.rooms.events.memberEventsOf(r.userId, changed, { after, upTo: cut }) : [];
  let events = [...read, ...own].sort((a, b) => a.streamOrdering - b.streamOrdering);
  if (events.length > limit) {
    events = events.slice(0, limit);
    cut = events[events.length - 1]!.streamOrdering;
  }
  const more = cut < upTo;
  const visible = await visibleTo(s, r, scope, events);
  const versions = new Map(scope.memberships.map((m) => [m.roomId, m.roomVersion]));
  const versionOf = async (roomId: string) => versions.get(roomId) ?? (await s.rooms.store.getRoom(roomId))?.roomVersion ?? "1";
  const rendered = await serializeEvents(s, r, versionOf, visible, { omitRoomId: false, membership: true });
  return { events: rendered.map((e) => legacyEvent(e as unknown as JsonObject)), upTo: cut, more };
}

/** The events the user may see: after a join they hold, all (but the ignored users'); else by history visibility. */
async function visibleTo(s: Services, r: Requester, scope: Scope, events: StoredEvent[]): Promise<StoredEvent[]> {
  const m = new Map(scope.memberships.map((x) => [x.roomId, x]));
  // Outside the rooms read, only the user's own member events were: they always see those.
  const ownChange = (e: StoredEvent) => !scope.rooms.has(e.roomId);
  const byRoom = new Map<string, StoredEvent[]>();
  for (const e of events) if (!ownChange(e)) byRoom.set(e.roomId, [...(byRoom.get(e.roomId) ?? []), e]);
  const ok = new Set<string>();
  for (const e of await withoutIgnored(s, r.userId, events.filter(ownChange))) ok.add(e.eventId);
  for (const [roomId, list] of byRoom) {
    const mine = m.get(roomId);
    const joinedSince = mine?.membership === "join" ? mine.streamOrdering : Number.POSITIVE_INFINITY;
    for (const e of await withoutIgnored(s, r.userId, list.filter((e) => e.streamOrdering >= joinedSince))) ok.add(e.eventId);
    for (const e of await filterVisible(s, r.userId, list.filter((e) => e.streamOrdering < joinedSince), mine?.membership)) ok.add(e.eventId);
  }
  return events.filter((e) => ok.has(e.eventId));
}

/** What the other streams' providers added, as legacy events: ephemeral and account data with room_id, then global account data and presence. */
function flatten(res: SyncResult): JsonObject[] {
  const out: JsonObject[] = [];
  for (const [roomId, room] of Object.entries(res.rooms.join)) {
    out.push(...room.ephemeral.events.map((e) => ({ ...e, room_id: roomId })));
    out.push(...room.account_data.events.map((e) => ({ ...e, room_id: roomId })));
  }
  out.push(...res.account_data.events);
  out.push(...res.presence.events.map(legacyPresence));
  return out;
}

/** When peeking: the presence changes in (after, upTo] of the room's members the providers did not give. */
async function peekedPresence(s: Services, scope: Scope, after: number, upTo: number, given: readonly JsonObject[]): Promise<JsonObject[]> {
  if (!scope.peekMembers || !s.config.use_presence || after >= upTo) return [];
  const members = new Set(scope.peekMembers);
  const shown = new Set(given.filter((e) => e.type === "m.presence").map((e) => e.sender));
  const now = s.clock.now();
  return (await s.presence.changed(after, upTo)).filter((p) => members.has(p.userId) && !shown.has(p.userId)).map((p) => legacyPresence(presenceEvent(p, now)));
}

/**
 * GET /events: waits up to `timeout` for something after `from` (now when absent). A call marks the user
 * online (not a guest), as /sync and Synapse's /events do; `room_id` names a joined room or a
 * world_readable one (by a guest too; any other is 403), whose members' presence is then shown.
 */
export async function legacyEvents(s: Services, r: Requester, opts: { from?: string; timeoutMs?: number; limit?: number; roomId?: string; cancel?: Cancel }): Promise<JsonObject> {
  // As Synapse: a guest reads one room's events at a time.
  if (r.isGuest && opts.roomId === undefined) throw new MatrixError("M_UNKNOWN", "Guest users must specify room_id param", 400);
  const from = opts.from !== undefined ? parseSyncToken(opts.from, "from") : undefined;
  const scope = await scopeOf(s, r, opts.roomId);
  for (const set of s.extensions.presenceSetters) await set(s, r, "online");
  // As Synapse: no limit (or 0) reads the default.
  const limit = opts.limit || DEFAULT_LIMIT;
  const filter = parseSyncFilter({});
  const waiter = new Waiter(s.rooms.notifier, r.userId);
  waiter.rooms = scope.rooms;
  waiter.presenceOf = new Set(scope.peekMembers ?? []);
  try {
    const start = from ?? (await s.sync.currentToken(s));
    const deadline = Date.now() + Math.min(Math.max(opts.timeoutMs ?? 0, 0), MAX_SYNC_TIMEOUT_MS);
    const cancels = [s.sync.shuttingDown, ...(opts.cancel ? [opts.cancel] : [])];
    let cursor: SyncToken = start;
    for (;;) {
      const to = await s.sync.currentToken(s, cursor);
      const page = await roomEventsAfter(s, r, scope, cursor.events, to.events, limit);
      const ctx = await collectStreams(s, r, filter, cursor, to, scope.rooms, OTHER_STREAMS);
      const others = flatten(ctx.result);
      const chunk = [...page.events, ...others, ...(await peekedPresence(s, scope, cursor.presence, to.presence, others))];
      const end: SyncToken = { ...to, events: page.upTo };
      if (chunk.length > 0 || Date.now() >= deadline || cancels.some((x) => x.aborted)) return { start: formatSyncToken(start), end: formatSyncToken(end), chunk };
      cursor = end;
      // A full read of events this user may not see: read on at once.
      if (page.more) continue;
      waiter.consumed(end);
      if (!(await waiter.until(end, deadline - Date.now(), cancels))) return { start: formatSyncToken(start), end: formatSyncToken(end), chunk: [] };
    }
  } finally {
    waiter.dispose();
  }
}
