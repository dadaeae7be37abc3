// The room list of simplified sliding sync (MSC4186 "Lists and subscriptions"): the user's rooms as of
// the answer's position — joined, invited (but from users they ignore), knocked, banned, kicked, and
// rooms they left themselves since the connection's last position (Synapse's rule; forgotten rooms never)
// — each list's filters applied (is_dm from m.direct, spaces from the spaces' m.space.child entries,
// is_encrypted, is_invite, room_types / not_room_types from the create event or an invite's stripped
// state, room_name_like, tags / not_tags), sorted by last activity (the position of the room's newest
// event; for a room the user is not joined to, of their membership), and windowed by each list's ranges.
// Room subscriptions add the rooms named (if the user has a membership there). A room in several lists
// and subscriptions gets their combined room config. The positions come from memory where the sync
// stream cache knows them, else from one batched read; filters read the rooms' state in one query.
import type { Services } from "../../services.ts";
import type { Requester } from "../../accounts/requester.ts";
import type { StoredEvent } from "../../store/events.ts";
import { SyncReads, type UserMembership } from "../../store/sync-reads.ts";
import { SlidingReads } from "../../store/sliding-reads.ts";
import { membershipsAt, withoutIgnoredInviters } from "../providers/events.ts";
import { combineConfigs, type ListConfig, type ListFilters, type RoomConfig, type SlidingRequest } from "./request.ts";

export interface ListResult {
  count: number;
  ops: { op: "SYNC"; range: [number, number]; room_ids: string[] }[];
}

export interface RoomList {
  lists: Map<string, ListResult>;
  /** Rooms of the windows and subscriptions, with their combined config. */
  relevant: Map<string, RoomConfig>;
  /** The user's membership in each room of the list (and of the subscriptions), as of the answer's position. */
  memberships: Map<string, UserMembership>;
  /** Rooms of each list's windows (the scope of the per-room extensions). */
  windows: Map<string, string[]>;
  /** Rooms of the subscriptions that are served. */
  subscribed: string[];
  /** Last activity position per room (the list's order). */
  activity: Map<string, number>;
  dms: ReadonlySet<string>;
}

const CREATE = "m.room.create";
const ENCRYPTION = "m.room.encryption";
const NAME = "m.room.name";

/** The rooms of `m.direct` (user id → room ids). */
async function directRooms(s: Services, userId: string): Promise<Set<string>> {
  const content = await s.accountData.get(userId, "", "m.direct");
  const out = new Set<string>();
  for (const v of Object.values(content ?? {})) if (Array.isArray(v)) for (const id of v) if (typeof id === "string") out.add(id);
  return out;
}

/** What the filters read of the rooms, loaded only for the filters some list uses. */
interface RoomFacts {
  type: Map<string, string | null | undefined>;
  encrypted: Set<string>;
  name: Map<string, string>;
  tags: Map<string, Set<string>>;
  spaceChildren: Map<string, Set<string>>;
}

function strippedOf(e: StoredEvent | undefined): Record<string, unknown>[] {
  const list = e?.pdu.unsigned?.["invite_room_state"] ?? e?.pdu.unsigned?.["knock_room_state"];
  return Array.isArray(list) ? (list as Record<string, unknown>[]) : [];
}

async function roomFacts(s: Services, userId: string, rooms: UserMembership[], lists: Iterable<ListConfig>): Promise<RoomFacts> {
  const facts: RoomFacts = { type: new Map(), encrypted: new Set(), name: new Map(), tags: new Map(), spaceChildren: new Map() };
  const used = new Set<keyof ListFilters>();
  const spaces = new Set<string>();
  for (const l of lists) for (const [k, v] of Object.entries(l.filters ?? {})) {
    used.add(k as keyof ListFilters);
    if (k === "spaces") for (const id of v as string[]) spaces.add(id);
  }
  const reads = new SlidingReads(s.storage.sql);
  const types = [...(used.has("roomTypes") || used.has("notRoomTypes") ? [CREATE] : []), ...(used.has("isEncrypted") ? [ENCRYPTION] : []), ...(used.has("roomNameLike") ? [NAME] : [])];
  if (types.length > 0) {
    const contents = await reads.currentContents(rooms.map((m) => m.roomId), types);
    // Rooms whose state this server does not hold (an invite over federation): their stripped state.
    const unknown = rooms.filter((m) => !contents.has(m.roomId));
    const outOfBand = unknown.length > 0 ? await s.rooms.events.getMany(unknown.map((m) => m.eventId)) : new Map<string, StoredEvent>();
    for (const m of rooms) {
      let c = contents.get(m.roomId);
      if (!c) {
        const stripped = strippedOf(outOfBand.get(m.eventId));
        if (stripped.length === 0) continue;
        c = new Map(stripped.filter((e) => e.state_key === "" && typeof e.type === "string").map((e) => [e.type as string, (e.content ?? {}) as Record<string, unknown>]));
      }
      const create = c.get(CREATE);
      if (create) facts.type.set(m.roomId, typeof create.type === "string" ? create.type : null);
      if (c.has(ENCRYPTION)) facts.encrypted.add(m.roomId);
      const name = c.get(NAME)?.name;
      if (typeof name === "string") facts.name.set(m.roomId, name);
    }
  }
  if (used.has("tags") || used.has("notTags")) {
    for (const row of await s.accountData.changed(userId, undefined, Number.MAX_SAFE_INTEGER)) {
      if (row.roomId === "" || row.type !== "m.tag") continue;
      const tags = row.content.tags;
      facts.tags.set(row.roomId, new Set(tags && typeof tags === "object" ? Object.keys(tags) : []));
    }
  }
  if (spaces.size > 0) {
    const joined = rooms.filter((m) => m.membership === "join" && spaces.has(m.roomId)).map((m) => m.roomId);
    for (const space of joined) facts.spaceChildren.set(space, await reads.spaceChildren([space]));
  }
  return facts;
}

function matches(f: ListFilters | undefined, m: UserMembership, dms: ReadonlySet<string>, facts: RoomFacts): boolean {
  if (!f) return true;
  if (f.isDm !== undefined && dms.has(m.roomId) !== f.isDm) return false;
  if (f.isInvite !== undefined && (m.membership === "invite") !== f.isInvite) return false;
  if (f.isEncrypted !== undefined && facts.encrypted.has(m.roomId) !== f.isEncrypted) return false;
  if (f.spaces !== undefined && !f.spaces.some((space) => facts.spaceChildren.get(space)?.has(m.roomId))) return false;
  const type = facts.type.get(m.roomId);
  // A room whose type is unknown (no state held) matches no room_types, and is kept by not_room_types.
  if (f.roomTypes !== undefined && (type === undefined || !f.roomTypes.includes(type))) return false;
  if (f.notRoomTypes !== undefined && type !== undefined && f.notRoomTypes.includes(type)) return false;
  if (f.roomNameLike !== undefined && !(facts.name.get(m.roomId) ?? "").toLowerCase().includes(f.roomNameLike.toLowerCase())) return false;
  const tags = facts.tags.get(m.roomId);
  if (f.notTags !== undefined && f.notTags.some((t) => tags?.has(t))) return false;
  if (f.tags !== undefined && !f.tags.some((t) => tags?.has(t))) return false;
  return true;
}

/**
 * The user's memberships as of `to`: all of them, and those the room list shows (see the module comment).
 */
async function listedMemberships(s: Services, r: Requester, to: number, since: number | undefined): Promise<{ all: UserMembership[]; shown: UserMembership[] }> {
  const reads = new SyncReads(s.storage.sql);
  const all = await membershipsAt(s, reads, r.userId, await s.sync.streamCache.membershipsOf(r.userId, () => reads.membershipsOf(r.userId)), to);
  const leftSince = (m: UserMembership) => since !== undefined && m.streamOrdering > since;
  // Leaves from before the position are shown only when someone else made them (a kick, an invite withdrawn).
  const oldLeaves = all.filter((m) => m.membership === "leave" && !m.forgotten && !leftSince(m));
  const leaveEvents = oldLeaves.length > 0 ? await s.rooms.events.getMany(oldLeaves.map((m) => m.eventId)) : new Map<string, StoredEvent>();
  const kept = all.filter((m) => {
    if (m.forgotten) return false;
    if (m.membership !== "leave" || leftSince(m)) return true;
    const sender = leaveEvents.get(m.eventId)?.pdu.sender;
    return sender !== undefined && sender !== r.userId;
  });
  const invites = kept.filter((m) => m.membership === "invite");
  const keptInvites = new Set((await withoutIgnoredInviters(s, r.userId, invites)).map((m) => m.roomId));
  return { all, shown: kept.filter((m) => m.membership !== "invite" || keptInvites.has(m.roomId)) };
}

export async function computeRoomList(s: Services, r: Requester, req: SlidingRequest, to: number, since: number | undefined): Promise<RoomList> {
  const out: RoomList = { lists: new Map(), relevant: new Map(), memberships: new Map(), windows: new Map(), subscribed: [], activity: new Map(), dms: new Set() };
  if (req.lists.size === 0 && req.roomSubscriptions.size === 0) return out;
  const { all, shown: listed } = await listedMemberships(s, r, to, since);
  for (const m of listed) out.memberships.set(m.roomId, m);
  const relevant = (roomId: string, config: RoomConfig) => {
    const had = out.relevant.get(roomId);
    out.relevant.set(roomId, had ? combineConfigs(had, config) : config);
  };

  if (req.lists.size > 0) {
    const dms = await directRooms(s, r.userId);
    out.dms = dms;
    // Activity: the newest event's position for joined rooms (memory first), the membership's otherwise.
    const joined: string[] = [];
    for (const m of listed) {
      if (m.membership !== "join") out.activity.set(m.roomId, m.streamOrdering);
      else {
        const pos = s.sync.streamCache.lastPositionOf(m.roomId, to);
        if (pos !== undefined) out.activity.set(m.roomId, pos);
        else joined.push(m.roomId);
      }
    }
    if (joined.length > 0) for (const [roomId, pos] of await new SlidingReads(s.storage.sql).lastPositions(joined, to)) out.activity.set(roomId, pos);
    const sorted = [...listed].sort((a, b) => (out.activity.get(b.roomId) ?? b.streamOrdering) - (out.activity.get(a.roomId) ?? a.streamOrdering) || (a.roomId < b.roomId ? -1 : 1));
    const facts = await roomFacts(s, r.userId, listed, req.lists.values());
    for (const [key, list] of req.lists) {
      const filtered = sorted.filter((m) => matches(list.filters, m, dms, facts));
      const ops: ListResult["ops"] = [];
      const window = new Set<string>();
      for (const [start, end] of list.ranges) {
        const ids = filtered.slice(start, end + 1).map((m) => m.roomId);
        for (const id of ids) {
          window.add(id);
          relevant(id, list);
        }
        ops.push({ op: "SYNC", range: [start, end], room_ids: ids });
      }
      out.lists.set(key, { count: filtered.length, ops });
      out.windows.set(key, [...window]);
    }
  }

  if (req.roomSubscriptions.size > 0) {
    // A subscribed room the list leaves out (a room left long ago): served if the user has a membership there.
    for (const m of all) if (req.roomSubscriptions.has(m.roomId) && !out.memberships.has(m.roomId) && (m.membership === "leave" || m.membership === "ban")) out.memberships.set(m.roomId, m);
    for (const [roomId, config] of req.roomSubscriptions) {
      if (!out.memberships.has(roomId)) continue; // unknown rooms and rooms the user has no part in are ignored
      out.subscribed.push(roomId);
      relevant(roomId, config);
    }
  }
  return out;
}
