// Batch reads for faces that show many rooms at once (the GraphQL room list): a page of a user's rooms by
// membership, and the summary of many rooms (version, the requester's membership, name, topic, avatar)
// in a bounded number of queries — one per kind of lookup for the whole batch, never one per room.
// The summary follows the read rules of read-access.ts: members and readers of world_readable rooms see
// the current state, former members (leave, ban) the state at their leave, invitees and knockers the
// current name/topic/avatar (all three are the spec's stripped "invite state" types); anyone else sees
// nothing. Spec: Client-Server API "Room membership", "History visibility", "Stripped state".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { Param } from "../../storage/sql.ts";
import { stateKeyOf } from "../store/state-groups.ts";

/** IN (...) lists are split into chunks of this many parameters (SQLite's variable limit). */
const CHUNK = 500;
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
}

/** The error a read of a room the requester may not see gives (the same as read-access.ts). */
export function roomNotVisible(): MatrixError {
  return new MatrixError("M_FORBIDDEN", "You are not in this room (or it does not exist)", 403);
}

const SUMMARY_TYPES = ["m.room.name", "m.room.topic", "m.room.avatar", "m.room.history_visibility"] as const;

const placeholders = (n: number) => Array.from({ length: n }, () => "?").join(",");

function chunks<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

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
  const sql = s.storage.sql;

  const rooms: { room_id: string; room_version: string; membership: string | null; event_id: string | null }[] = [];
  for (const chunk of chunks(ids)) {
    rooms.push(
      ...(await sql.all<(typeof rooms)[number]>(
        `SELECT r.room_id, r.room_version, m.membership, m.event_id FROM rooms r
         LEFT JOIN room_memberships m ON m.room_id = r.room_id AND m.user_id = ?
         WHERE r.room_id IN (${placeholders(chunk.length)})`,
        [r.userId, ...chunk],
      )),
    );
  }
  if (rooms.length === 0) return out;

  // Current state entries of the summary types, for every room at once.
  const current = new Map<string, Map<string, string>>();
  for (const chunk of chunks(rooms.map((x) => x.room_id))) {
    const rows = await sql.all<{ room_id: string; type: string; event_id: string }>(
      `SELECT room_id, type, event_id FROM current_state_events
       WHERE state_key = ? AND type IN (${placeholders(SUMMARY_TYPES.length)}) AND room_id IN (${placeholders(chunk.length)})`,
      ["", ...SUMMARY_TYPES, ...chunk] as Param[],
    );
    for (const row of rows) {
      let m = current.get(row.room_id);
      if (!m) current.set(row.room_id, (m = new Map()));
      m.set(row.type, row.event_id);
    }
  }
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
    const m = row.membership ?? undefined;
    if (m === "join" || m === "invite" || m === "knock" || worldReadable(row.room_id)) shown.set(row.room_id, current.get(row.room_id) ?? new Map());
    else if ((m === "leave" || m === "ban") && row.event_id) formerMembers.push({ roomId: row.room_id, leaveEventId: row.event_id });
  }
  if (formerMembers.length > 0) {
    const leaves = await s.rooms.events.getMany(formerMembers.map((f) => f.leaveEventId));
    for (const f of formerMembers) {
      const leave = leaves.get(f.leaveEventId);
      if (!leave) continue;
      const state = await s.rooms.stateGroups.get(leave.stateGroup);
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
    const state = shown.get(row.room_id);
    if (!state) continue;
    out.set(row.room_id, {
      roomId: row.room_id,
      roomVersion: row.room_version,
      membership: row.membership ?? undefined,
      name: stringField(contentOf(state, "m.room.name"), "name"),
      topic: stringField(contentOf(state, "m.room.topic"), "topic"),
      avatarUrl: stringField(contentOf(state, "m.room.avatar"), "url"),
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
  const params: Param[] = [userId, false, ...opts.memberships];
  let where = `user_id = ? AND forgotten = ? AND membership IN (${placeholders(opts.memberships.length)})`;
  if (opts.before !== undefined) {
    where += " AND stream_ordering < ?";
    params.push(opts.before);
  }
  const rows = await s.storage.sql.all<{ room_id: string; membership: string; stream_ordering: number | string }>(
    `SELECT room_id, membership, stream_ordering FROM room_memberships WHERE ${where} ORDER BY stream_ordering DESC LIMIT ?`,
    [...params, limit + 1],
  );
  return {
    rooms: rows.slice(0, limit).map((x) => ({ roomId: x.room_id, membership: x.membership, streamOrdering: Number(x.stream_ordering) })),
    more: rows.length > limit,
  };
}

/** Stream positions of events (e.g. a page /messages returned, to give each one a cursor). One query at most. */
export async function eventStreamPositions(s: Services, eventIds: readonly string[]): Promise<Map<string, number>> {
  const events = await s.rooms.events.getMany(eventIds);
  return new Map([...events].map(([id, e]) => [id, e.streamOrdering]));
}
