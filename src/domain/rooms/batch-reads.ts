// Batch reads for faces that show many rooms at once (the GraphQL room list): a page of a user's rooms by
// membership, and the summary of many rooms (version, the requester's membership, name, topic, avatar)
// in a bounded number of queries — one per kind of lookup for the whole batch, never one per room.
// The summary follows the read rules of read-access.ts: members and readers of world_readable rooms see
// the current state, former members (leave, ban) the state at their leave, invitees and knockers the
// current name/topic/avatar (all three are the spec's stripped "invite state" types); anyone else sees
// nothing. Spec: Client-Server API "Room membership", "History visibility", "Stripped state".
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { stateKeyOf } from "../store/state-groups.ts";
import { RoomBatchReads } from "../store/rooms.ts";
import { plainTopic } from "./topic.ts";
export { roomNotVisible } from "./read-access.ts";
import type { KnownMembership } from "./read-access.ts";

/** Largest page of rooms one call returns. */
export const MAX_ROOM_PAGE = 1000;

export interface RoomSummary {
  roomId: string;
  roomVersion: string;
  /** The requester's membership: join, invite, leave, ban, knock; undefined when they have none. */
  membership: string | undefined;
  name: string | undefined;
  topic: string | undefined;
  /** The m.room.avatar url (an mxc:// URI). */
  avatarUrl: string | undefined;
  /** m.room.canonical_alias's alias. */
  canonicalAlias: string | undefined;
  /** The room's history is world_readable now. */
  worldReadable: boolean;
}

const SUMMARY_TYPES = ["m.room.name", "m.room.topic", "m.room.avatar", "m.room.history_visibility", "m.room.canonical_alias"] as const;

function stringField(content: Record<string, unknown> | undefined, field: string): string | undefined {
  const v = content?.[field];
  return typeof v === "string" ? v : undefined;
}

/**
 * Summaries of `roomIds` as `r` may see them; rooms that do not exist or that `r` may not read are absent.
 * Queries: one for the rooms and `r`'s memberships, one for the current state entries of the summary
 * types, at most one for those state events (none when they are cached). Rooms the requester left add
 * one batch read of their leave events, a state-group read each (cached), and one batch read of the
 * older state events.
 */
export async function roomSummaries(s: Services, r: Requester, roomIds: readonly string[]): Promise<Map<string, RoomSummary>> {
  const ids = [...new Set(roomIds)];
  const out = new Map<string, RoomSummary>();
  if (ids.length === 0) return out;
  const reads = new RoomBatchReads(s.storage.sql);
  const rooms = await reads.roomsWithMembership(r.userId, ids);
  if (rooms.length === 0) return out;
  const current = await reads.currentStateOfTypes(rooms.map((x) => x.roomId), SUMMARY_TYPES);
  // The current state events of every room in one read (most are cached).
  const events = await s.rooms.events.getMany([...current.values()].flatMap((m) => [...m.values()]));
  const worldReadable = (roomId: string) => {
    const id = current.get(roomId)?.get("m.room.history_visibility");
    return stringField(id ? events.get(id)?.pdu.content : undefined, "history_visibility") === "world_readable";
  };

  // Which state each visible room shows: the current one, or (former members) the state at their leave.
  const shown = new Map<string, ReadonlyMap<string, string>>();
  const formerMembers: { roomId: string; leaveEventId: string }[] = [];
  for (const row of rooms) {
    const m = row.membership;
    if (m === "join" || m === "invite" || m === "knock" || worldReadable(row.roomId)) shown.set(row.roomId, current.get(row.roomId) ?? new Map());
    else if ((m === "leave" || m === "ban") && row.membershipEventId) formerMembers.push({ roomId: row.roomId, leaveEventId: row.membershipEventId });
  }
  if (formerMembers.length > 0) {
    const leaves = await s.rooms.events.getMany(formerMembers.map((f) => f.leaveEventId));
    const groups = await s.rooms.stateGroups.getMany([...leaves.values()].map((e) => e.stateGroup).filter((g): g is number => g !== null));
    for (const f of formerMembers) {
      const group = leaves.get(f.leaveEventId)?.stateGroup;
      const state = group !== undefined && group !== null ? groups.get(group) : undefined;
      if (!state) continue;
      const picked = new Map<string, string>();
      for (const type of SUMMARY_TYPES) {
        const id = state.get(stateKeyOf(type, ""));
        if (id) picked.set(type, id);
      }
      shown.set(f.roomId, picked);
    }
    const missing = formerMembers.flatMap((f) => [...(shown.get(f.roomId)?.values() ?? [])]).filter((id) => !events.has(id));
    for (const [id, e] of await s.rooms.events.getMany(missing)) events.set(id, e);
  }

  const contentOf = (state: ReadonlyMap<string, string>, type: string) => {
    const id = state.get(type);
    return id ? events.get(id)?.pdu.content : undefined;
  };
  for (const row of rooms) {
    const state = shown.get(row.roomId);
    if (!state) continue;
    out.set(row.roomId, {
      roomId: row.roomId,
      roomVersion: row.roomVersion,
      membership: row.membership,
      name: stringField(contentOf(state, "m.room.name"), "name"),
      topic: plainTopic(contentOf(state, "m.room.topic")) ?? undefined,
      avatarUrl: stringField(contentOf(state, "m.room.avatar"), "url"),
      canonicalAlias: stringField(contentOf(state, "m.room.canonical_alias"), "alias"),
      worldReadable: worldReadable(row.roomId),
    });
  }
  return out;
}

export interface UserRoomEntry {
  roomId: string;
  membership: string;
  /** Stream position of the membership event: the stable order of the list. */
  streamOrdering: number;
}

/**
 * One page of the rooms where `userId` has one of `memberships` (forgotten rooms left out), newest
 * membership change first, starting below stream position `before` when given. One query.
 */
export async function userRoomsPage(
  s: Services,
  userId: string,
  opts: { memberships: readonly string[]; before?: number; limit: number },
): Promise<{ rooms: UserRoomEntry[]; more: boolean }> {
  const limit = Math.min(Math.max(Math.floor(opts.limit), 0), MAX_ROOM_PAGE);
  if (opts.memberships.length === 0) return { rooms: [], more: false };
  const rows = await new RoomBatchReads(s.storage.sql).membershipPage(userId, opts.memberships, opts.before, limit);
  return {
    rooms: rows.slice(0, limit),
    more: rows.length > limit,
  };
}

/**
 * Current joined and invited member counts of rooms, one grouped query for the batch (rooms with no such
 * members count 0). The caller shows them only for rooms the requester may see now (a summary's rule).
 */
export async function memberCounts(s: Services, roomIds: readonly string[]): Promise<Map<string, { joined: number; invited: number }>> {
  return new RoomBatchReads(s.storage.sql).memberCounts([...new Set(roomIds)]);
}

/**
 * `userId`'s membership of each room, as read-access.ts's `known` takes it (null: none), one query for the
 * batch: a face reading the state or members of many rooms hands each read its room's.
 */
export async function knownMemberships(s: Services, userId: string, roomIds: readonly string[]): Promise<Map<string, KnownMembership>> {
  const rows = await s.rooms.store.membershipsIn(userId, roomIds);
  return new Map(roomIds.map((id) => {
    const m = rows.get(id);
    return [id, m ? { membership: m.membership, forgotten: m.forgotten, eventId: m.eventId, streamOrdering: m.streamOrdering } : null];
  }));
}

/** Stream positions of events (e.g. a page /messages returned, to give each one a cursor). One query at most. */
export async function eventStreamPositions(s: Services, eventIds: readonly string[]): Promise<Map<string, number>> {
  const events = await s.rooms.events.getMany(eventIds);
  return new Map([...events].map(([id, e]) => [id, e.streamOrdering]));
}
