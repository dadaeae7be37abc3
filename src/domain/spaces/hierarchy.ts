// GET /rooms/{roomId}/hierarchy: a depth-first walk of a space tree through its m.space.child state
// events (only a space's: another room's children are none; children without a non-empty `via` of strings
// are ignored; ordered by `order`, then origin_server_ts, then room id), showing each room the requester
// may see: joined or invited, public, knockable, restricted through a room they are joined to, or
// world_readable. Rooms this server does not hold are summarised by the servers in the child's `via`
// (remote-hierarchy.ts). The `from` token carries the query (room, requester, suggested_only, max_depth)
// and how many rooms came before: another query's token is M_INVALID_PARAM.
// Spec: Client-Server API "Spaces" (GET /hierarchy, v1), m.space.child.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { StoredEvent } from "../store/events.ts";
import { isPlainObject } from "../events/types.ts";
import { isValidRoomId } from "../ids.ts";
import { shownSummaryField } from "../rooms/summary-fields.ts";
import { loadRoom, type RoomSnapshot } from "../rooms/room-cache.ts";
import { stateKeyOf } from "../store/state-groups.ts";
import { RoomBatchReads } from "../store/rooms.ts";
import { SpaceReads } from "../store/spaces.ts";
import { fetchRemoteSummary, remoteRoomVisible } from "./remote-hierarchy.ts";
import { plainTopic } from "../rooms/topic.ts";

/** Synapse's figures: 50 rooms a page, at most 50 children followed per space. */
export const HIERARCHY_MAX_ROOMS = 50;
export const MAX_CHILDREN_PER_SPACE = 50;

export interface HierarchyRequest {
  suggestedOnly?: boolean;
  maxDepth?: number;
  limit?: number;
  from?: string;
}

export interface HierarchyRoom {
  room_id: string;
  name?: string;
  topic?: string;
  canonical_alias?: string;
  avatar_url?: string;
  num_joined_members: number;
  world_readable: boolean;
  guest_can_join: boolean;
  join_rule: string;
  room_type?: string;
  room_version: string;
  encryption?: string;
  allowed_room_ids?: string[];
  children_state: { type: string; state_key: string; content: Record<string, unknown>; sender: string; origin_server_ts: number }[];
}

interface Token {
  r: string;
  u: string;
  s: boolean;
  d: number | null;
  n: number;
}

const invalidToken = () => new MatrixError("M_INVALID_PARAM", "Unknown pagination token", 400);

function encodeToken(t: Token): string {
  return Buffer.from(JSON.stringify(t)).toString("base64url");
}

function decodeToken(raw: string): Token {
  try {
    const t = JSON.parse(Buffer.from(raw, "base64url").toString("utf8")) as Token;
    if (typeof t.r === "string" && typeof t.u === "string" && typeof t.s === "boolean" && (t.d === null || Number.isInteger(t.d)) && Number.isInteger(t.n) && t.n >= 0) return t;
  } catch {
    // fall through
  }
  throw invalidToken();
}

export const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

export function validVia(content: Record<string, unknown>): boolean {
  const via = content.via;
  return Array.isArray(via) && via.length > 0 && via.every((x) => typeof x === "string" && x !== "");
}

export function validOrder(v: unknown): string | undefined {
  return typeof v === "string" && v.length <= 50 && /^[\x20-\x7E]*$/.test(v) ? v : undefined;
}

/** What ordering and following a child needs of its m.space.child event. */
interface ChildEvent {
  state_key: string;
  content: Record<string, unknown>;
  origin_server_ts: number;
}

/** The spec's order of children: by `order` (those without last), then origin_server_ts, then room id. */
function compareChildren(a: ChildEvent, b: ChildEvent): number {
  const oa = validOrder(a.content.order);
  const ob = validOrder(b.content.order);
  if (oa !== ob) {
    if (oa === undefined) return 1;
    if (ob === undefined) return -1;
    return oa < ob ? -1 : 1;
  }
  if (a.origin_server_ts !== b.origin_server_ts) return a.origin_server_ts - b.origin_server_ts;
  return a.state_key < b.state_key ? -1 : a.state_key > b.state_key ? 1 : 0;
}

/** The children a remote summary names, as a local room's would be followed (valid via, suggested, in order). */
function remoteChildren(entry: HierarchyRoom, suggestedOnly: boolean): ChildEvent[] {
  return entry.children_state
    .filter((e) => e.state_key.startsWith("!") && validVia(e.content) && (!suggestedOnly || e.content.suggested === true))
    .sort(compareChildren);
}

/** Reads what the walk needs of one room: its state events (of a few types), children, who may see it. */
export class RoomFacts {
  private readonly memberships = new Map<string, string | undefined>();
  constructor(private readonly s: Services, private readonly userId: string) {}

  async membershipsOf(roomIds: string[]): Promise<void> {
    const missing = roomIds.filter((id) => !this.memberships.has(id));
    if (missing.length === 0) return;
    const rows = await new RoomBatchReads(this.s.storage.sql).roomsWithMembership(this.userId, missing);
    for (const id of missing) this.memberships.set(id, undefined);
    for (const r of rows) this.memberships.set(r.roomId, r.membership);
  }

  async membership(roomId: string): Promise<string | undefined> {
    await this.membershipsOf([roomId]);
    return this.memberships.get(roomId);
  }

  async state(room: RoomSnapshot, type: string, stateKey = ""): Promise<StoredEvent | undefined> {
    const id = room.state.get(stateKeyOf(type, stateKey));
    return id ? this.s.rooms.events.get(id) : undefined;
  }

  /** A space's children; none for a room that is not a space (its m.space.child events mean nothing, as Synapse). */
  async children(room: RoomSnapshot, suggestedOnly: boolean): Promise<StoredEvent[]> {
    if (room.createEvent.content.type !== "m.space") return [];
    const prefix = stateKeyOf("m.space.child", "");
    const ids = [...room.state].filter(([k]) => k.startsWith(prefix)).map(([, id]) => id);
    const events = [...(await this.s.rooms.events.getMany(ids)).values()].filter(
      (e) => e.pdu.state_key?.startsWith("!") && validVia(e.pdu.content) && (!suggestedOnly || e.pdu.content.suggested === true),
    );
    return events.sort((a, b) => compareChildren(a.pdu as ChildEvent, b.pdu as ChildEvent));
  }

  /** Synapse's rule for local rooms: joined or invited, public, knockable, restricted via a joined room, world_readable. */
  async accessible(room: RoomSnapshot): Promise<boolean> {
    const rules = (await this.state(room, "m.room.join_rules"))?.pdu.content;
    const rule = str(rules?.join_rule);
    if (rule === "public") return true;
    if ((rule === "knock" && room.version.knock) || (rule === "knock_restricted" && room.version.knockRestricted)) return true;
    if (str((await this.state(room, "m.room.history_visibility"))?.pdu.content.history_visibility) === "world_readable") return true;
    const m = await this.membership(room.roomId);
    if (m === "join" || m === "invite") return true;
    if ((rule === "restricted" && room.version.restricted) || (rule === "knock_restricted" && room.version.knockRestricted)) {
      const allowed = allowedRoomIds(rules);
      await this.membershipsOf(allowed);
      for (const id of allowed) if (this.memberships.get(id) === "join") return true;
    }
    return false;
  }
}

export function allowedRoomIds(rules: Record<string, unknown> | undefined): string[] {
  const allow = Array.isArray(rules?.allow) ? rules.allow : [];
  return allow.filter((a): a is { type: string; room_id: string } => isPlainObject(a) && a.type === "m.room_membership" && typeof a.room_id === "string" && isValidRoomId(a.room_id)).map((a) => a.room_id);
}

export async function entryOf(s: Services, facts: RoomFacts, room: RoomSnapshot, children: StoredEvent[], joined: number): Promise<HierarchyRoom> {
  const content = async (type: string) => (await facts.state(room, type))?.pdu.content;
  const create = room.createEvent.content;
  const rules = await content("m.room.join_rules");
  const rule = str(rules?.join_rule) ?? "invite";
  const entry: HierarchyRoom = {
    room_id: room.roomId,
    num_joined_members: joined,
    world_readable: str((await content("m.room.history_visibility"))?.history_visibility) === "world_readable",
    guest_can_join: str((await content("m.room.guest_access"))?.guest_access) === "can_join",
    join_rule: rule,
    room_version: room.version.id,
    children_state: children.map((e) => ({
      type: e.pdu.type,
      state_key: e.pdu.state_key!,
      content: e.pdu.content,
      sender: e.pdu.sender,
      origin_server_ts: e.pdu.origin_server_ts,
    })),
  };
  const name = str((await content("m.room.name"))?.name);
  const topic = plainTopic(await content("m.room.topic")) ?? undefined;
  const alias = shownSummaryField("canonical_alias", (await content("m.room.canonical_alias"))?.alias);
  const avatar = shownSummaryField("avatar_url", (await content("m.room.avatar"))?.url);
  const encryption = shownSummaryField("encryption", (await content("m.room.encryption"))?.algorithm);
  const roomType = str(create.type);
  if (name !== undefined) entry.name = name;
  if (topic !== undefined) entry.topic = topic;
  if (alias !== undefined) entry.canonical_alias = alias;
  if (avatar !== undefined) entry.avatar_url = avatar;
  if (encryption !== undefined) entry.encryption = encryption;
  if (roomType !== undefined) entry.room_type = roomType;
  if ((rule === "restricted" && room.version.restricted) || (rule === "knock_restricted" && room.version.knockRestricted)) {
    const allowed = allowedRoomIds(rules);
    if (allowed.length > 0) entry.allowed_room_ids = allowed; // omitted when empty, as Synapse
  }
  return entry;
}

export async function getHierarchy(s: Services, r: Requester, roomId: string, req: HierarchyRequest): Promise<{ rooms: HierarchyRoom[]; next_batch?: string }> {
  if (req.limit !== undefined && req.limit <= 0) throw new MatrixError("M_INVALID_PARAM", "limit must be a positive integer", 400);
  if (req.maxDepth !== undefined && req.maxDepth < 0) throw new MatrixError("M_INVALID_PARAM", "max_depth must be a non-negative integer", 400);
  const limit = Math.min(req.limit ?? HIERARCHY_MAX_ROOMS, HIERARCHY_MAX_ROOMS);
  const query: Token = { r: roomId, u: r.userId, s: req.suggestedOnly ?? false, d: req.maxDepth ?? null, n: 0 };
  if (req.from !== undefined) {
    const t = decodeToken(req.from);
    if (t.r !== query.r || t.u !== query.u || t.s !== query.s || t.d !== query.d) throw invalidToken();
    query.n = t.n;
  }
  const facts = new RoomFacts(s, r.userId);
  const root = await loadRoom(s, roomId);
  if (!root || !(await facts.accessible(root)))
    throw new MatrixError("M_FORBIDDEN", `User ${r.userId} not in room ${roomId}, and room previews are disabled`, 403);

  // Depth-first, children in order; each room once. Walks past the page by one room to know if more remain.
  // A room this server does not hold is summarised by the servers its m.space.child names (`via`).
  const queue: { roomId: string; depth: number; via: string[] }[] = [{ roomId, depth: 0, via: [] }];
  const seen = new Set<string>();
  const found: ({ room: RoomSnapshot; children: StoredEvent[] } | { remote: HierarchyRoom })[] = [];
  const remoteCache = new Map<string, HierarchyRoom>();
  let index = 0;
  let more = false;
  while (queue.length > 0) {
    const next = queue.shift()!;
    if (seen.has(next.roomId)) continue;
    seen.add(next.roomId);
    const room = next.roomId === roomId ? root : await loadRoom(s, next.roomId);
    let item: (typeof found)[number];
    let kids: { roomId: string; via: string[] }[];
    if (room) {
      if (!(await facts.accessible(room))) continue;
      const children = await facts.children(room, query.s);
      item = { room, children };
      kids = children.map((c) => ({ roomId: c.pdu.state_key!, via: c.pdu.content.via as string[] }));
    } else {
      let entry = remoteCache.get(next.roomId);
      if (!entry) {
        const fetched = await fetchRemoteSummary(s, next.roomId, next.via, query.s);
        if (!fetched) continue;
        entry = fetched.room;
        for (const c of fetched.children) if (!remoteCache.has(c.room_id)) remoteCache.set(c.room_id, c);
      }
      const allowed = entry.allowed_room_ids ?? [];
      await facts.membershipsOf([next.roomId, ...allowed]);
      const joined = new Set<string>();
      for (const id of allowed) if ((await facts.membership(id)) === "join") joined.add(id);
      if (!remoteRoomVisible(entry, await facts.membership(next.roomId), (id) => joined.has(id))) continue;
      item = { remote: entry };
      kids = remoteChildren(entry, query.s).map((c) => ({ roomId: c.state_key, via: c.content.via as string[] }));
    }
    if (index++ >= query.n) {
      if (found.length === limit) {
        more = true;
        break;
      }
      found.push(item);
    }
    if (query.d === null || next.depth < query.d) {
      const queued = kids.slice(0, MAX_CHILDREN_PER_SPACE).map((k) => ({ ...k, depth: next.depth + 1 }));
      await facts.membershipsOf(queued.map((k) => k.roomId));
      queue.unshift(...queued);
    }
  }
  const local = found.filter((f): f is { room: RoomSnapshot; children: StoredEvent[] } => "room" in f);
  const counts = await new SpaceReads(s.storage.sql).joinedCounts(local.map((f) => f.room.roomId));
  const rooms: HierarchyRoom[] = [];
  for (const f of found) rooms.push("remote" in f ? f.remote : await entryOf(s, facts, f.room, f.children, counts.get(f.room.roomId) ?? 0));
  return more ? { rooms, next_batch: encodeToken({ ...query, n: query.n + found.length }) } : { rooms };
}
