// Batch reads of /sync (and the legacy initialSync) over raw SQL: a user's memberships with room
// versions, the newest events of many rooms in one windowed query, the current state of many rooms,
// the state group at a position of many rooms, member counts and hero candidates. One query per kind of lookup for the
// whole batch of rooms, never one per room (ARCHITECTURE "Storage": hot paths batch their reads).
import type { Param, Sql } from "../../storage/sql.ts";
import { stateKeyOf } from "./state-groups.ts";
import { IN_TIMELINE_SQL } from "./events.ts";
import { chunks, marks } from "./in-lists.ts";


export interface UserMembership {
  roomId: string;
  roomVersion: string;
  membership: string;
  eventId: string;
  streamOrdering: number;
  forgotten: boolean;
}

export class SyncReads {
  constructor(private readonly sql: Sql) {}

  /** Every room `userId` has a membership in, with the room's version. One query. */
  async membershipsOf(userId: string): Promise<UserMembership[]> {
    const rows = await this.sql.all<{ room_id: string; room_version: string; membership: string; event_id: string; stream_ordering: number; forgotten: number | boolean }>(
      `SELECT m.room_id, r.room_version, m.membership, m.event_id, m.stream_ordering, m.forgotten
       FROM room_memberships m JOIN rooms r ON r.room_id = m.room_id WHERE m.user_id = ?`,
      [userId],
    );
    return rows.map((r) => ({ roomId: r.room_id, roomVersion: r.room_version, membership: r.membership, eventId: r.event_id, streamOrdering: Number(r.stream_ordering), forgotten: Boolean(r.forgotten) }));
  }

  /**
   * The ids of the newest `perRoom` events of each room with `after < stream_ordering <= upTo`, newest
   * first per room: by stream position, or (`order` "dag") by depth and then stream position, the order
   * the room's DAG gives them (an initial sync's timelines: a fork's late-arriving branch sorts where it
   * happened, not where it arrived). One query per 400 rooms, each room's part a walk down the (room_id, stream_ordering)
   * index that stops after `perRoom` rows (a LATERAL join on PostgreSQL, a correlated subquery on
   * SQLite): the cost follows what is returned, not the rooms' history (a window over every event of
   * the rooms costs 10x more at 50 events a room).
   */
  async newestEventIds(roomIds: readonly string[], after: number, upTo: number, perRoom: number, order: "stream" | "dag" = "stream"): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    const by = order === "dag" ? "depth DESC, stream_ordering DESC" : "stream_ordering DESC";
    for (const chunk of chunks(roomIds)) {
      if (this.sql.dialect === "postgres") {
        const rows = await this.sql.all<{ room_id: string; event_id: string }>(
          `SELECT r.room_id, e.event_id FROM rooms r CROSS JOIN LATERAL (
             SELECT event_id, depth, stream_ordering FROM events
             WHERE room_id = r.room_id AND ${IN_TIMELINE_SQL} AND stream_ordering > ? AND stream_ordering <= ?
             ORDER BY ${by} LIMIT ?
           ) e WHERE r.room_id IN (${marks(chunk.length)}) ORDER BY r.room_id, ${order === "dag" ? "e.depth DESC, e.stream_ordering DESC" : "e.stream_ordering DESC"}`,
          [after, upTo, perRoom, ...chunk] as Param[],
        );
        for (const r of rows) {
          let list = out.get(r.room_id);
          if (!list) out.set(r.room_id, (list = []));
          list.push(r.event_id);
        }
      } else {
        const rows = await this.sql.all<{ room_id: string; ids: string | null }>(
          `SELECT r.room_id, (SELECT json_group_array(event_id ORDER BY ${by}) FROM (
             SELECT event_id, depth, stream_ordering FROM events
             WHERE room_id = r.room_id AND ${IN_TIMELINE_SQL} AND stream_ordering > ? AND stream_ordering <= ?
             ORDER BY ${by} LIMIT ?
           )) AS ids FROM rooms r WHERE r.room_id IN (${marks(chunk.length)})`,
          [after, upTo, perRoom, ...chunk] as Param[],
        );
        for (const r of rows) {
          const ids = r.ids ? (JSON.parse(r.ids) as string[]) : [];
          if (ids.length > 0) out.set(r.room_id, ids);
        }
      }
    }
    return out;
  }

  /** Current state of many rooms: room id → state key → event id. */
  async currentState(roomIds: readonly string[]): Promise<Map<string, Map<string, string>>> {
    const out = new Map<string, Map<string, string>>();
    for (const id of roomIds) out.set(id, new Map());
    for (const chunk of chunks(roomIds)) {
      const rows = await this.sql.all<{ room_id: string; type: string; state_key: string; event_id: string }>(
        `SELECT room_id, type, state_key, event_id FROM current_state_events WHERE room_id IN (${marks(chunk.length)})`,
        chunk,
      );
      for (const r of rows) out.get(r.room_id)!.set(stateKeyOf(r.type, r.state_key), r.event_id);
    }
    return out;
  }

  /**
   * Per room, the state group after its last timeline event at or before stream position `pos` (the
   * state at that position; a room with no such event is absent). One query per 400 rooms, each room's
   * lookup a single step down the (room_id, stream_ordering) index.
   */
  async stateGroupsAt(roomIds: readonly string[], pos: number): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const chunk of chunks(roomIds)) {
      const rows = await this.sql.all<{ room_id: string; state_group: number | null }>(
        `SELECT r.room_id, (SELECT state_group FROM events e WHERE e.room_id = r.room_id AND ${IN_TIMELINE_SQL} AND e.stream_ordering <= ?
                            ORDER BY e.stream_ordering DESC LIMIT 1) AS state_group
         FROM rooms r WHERE r.room_id IN (${marks(chunk.length)})`,
        [pos, ...chunk] as Param[],
      );
      for (const r of rows) if (r.state_group !== null) out.set(r.room_id, Number(r.state_group));
    }
    return out;
  }

  /** Which of these rooms are published in the room directory (the legacy initialSync's `visibility`). */
  async publicRoomIds(roomIds: readonly string[]): Promise<Set<string>> {
    const out = new Set<string>();
    for (const chunk of chunks(roomIds)) {
      const rows = await this.sql.all<{ room_id: string }>(`SELECT room_id FROM rooms WHERE is_public = ? AND room_id IN (${marks(chunk.length)})`, [true, ...chunk] as Param[]);
      for (const r of rows) out.add(r.room_id);
    }
    return out;
  }

  /** Joined and invited members of many rooms (for member counts and heroes), oldest membership first. */
  async activeMembers(roomIds: readonly string[]): Promise<Map<string, { userId: string; membership: string }[]>> {
    const out = new Map<string, { userId: string; membership: string }[]>();
    for (const chunk of chunks(roomIds)) {
      const rows = await this.sql.all<{ room_id: string; user_id: string; membership: string }>(
        `SELECT room_id, user_id, membership FROM room_memberships WHERE membership IN (?, ?) AND room_id IN (${marks(chunk.length)}) ORDER BY stream_ordering`,
        ["join", "invite", ...chunk],
      );
      for (const r of rows) {
        let list = out.get(r.room_id);
        if (!list) out.set(r.room_id, (list = []));
        list.push({ userId: r.user_id, membership: r.membership });
      }
    }
    return out;
  }
}
