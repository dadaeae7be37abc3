// Repository of rooms, their current state and current memberships (rooms, current_state_events,
// room_memberships), over raw SQL: written with every state event, read on every membership check.
import type { Param, Sql, SqlExecutor } from "../../storage/sql.ts";
import { stateKeyOf, type StateMap } from "./state-groups.ts";
import { indexableText } from "../text.ts";
import { chunks as inChunks, marks as placeholders } from "./in-lists.ts";

export interface RoomRow {
  roomId: string;
  roomVersion: string;
  creator: string;
  isPublic: boolean;
}

export interface MembershipRow {
  roomId: string;
  userId: string;
  membership: string;
  eventId: string;
  sender: string;
  displayname: string | null;
  avatarUrl: string | null;
  streamOrdering: number;
  forgotten: boolean;
}

export class RoomStore {
  constructor(private readonly sql: Sql) {}

  async insertRoom(tx: SqlExecutor, r: RoomRow, now: number): Promise<void> {
    await tx.run(`INSERT INTO rooms (room_id, room_version, creator, is_public, created_ts) VALUES (?, ?, ?, ?, ?)`, [r.roomId, r.roomVersion, r.creator, r.isPublic, now]);
  }

  /**
   * Inserts the row of a room first known from its create event, or sets the version and creator of the
   * row an out-of-band membership made (whose version the inviting server claimed).
   */
  async upsertRoom(tx: SqlExecutor, r: RoomRow, now: number): Promise<void> {
    await tx.run(
      `INSERT INTO rooms (room_id, room_version, creator, is_public, created_ts) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (room_id) DO UPDATE SET room_version = excluded.room_version, creator = excluded.creator`,
      [r.roomId, r.roomVersion, r.creator, r.isPublic, now],
    );
  }

  /** The row of a room this server holds no state of (an out-of-band membership), unless there is one. */
  async insertRoomIfAbsent(tx: SqlExecutor, r: RoomRow, now: number): Promise<void> {
    await tx.run(
      `INSERT INTO rooms (room_id, room_version, creator, is_public, created_ts) VALUES (?, ?, ?, ?, ?) ON CONFLICT (room_id) DO NOTHING`,
      [r.roomId, r.roomVersion, r.creator, r.isPublic, now],
    );
  }

  async getRoom(roomId: string): Promise<RoomRow | undefined> {
    const r = await this.sql.get<{ room_id: string; room_version: string; creator: string; is_public: number | boolean }>(
      `SELECT room_id, room_version, creator, is_public FROM rooms WHERE room_id = ?`,
      [roomId],
    );
    return r && { roomId: r.room_id, roomVersion: r.room_version, creator: r.creator, isPublic: Boolean(r.is_public) };
  }

  async setPublic(roomId: string, isPublic: boolean, tx: SqlExecutor = this.sql): Promise<void> {
    await tx.run(`UPDATE rooms SET is_public = ? WHERE room_id = ?`, [isPublic, roomId]);
  }

  async currentState(roomId: string): Promise<Map<string, string>> {
    const rows = await this.sql.all<{ type: string; state_key: string; event_id: string }>(
      `SELECT type, state_key, event_id FROM current_state_events WHERE room_id = ?`,
      [roomId],
    );
    return new Map(rows.map((r) => [stateKeyOf(r.type, r.state_key), r.event_id]));
  }

  /** Applies changes to current state: each key gets its new event id, or (null) leaves the state. */
  async changeCurrentState(tx: SqlExecutor, roomId: string, changes: ReadonlyMap<string, string | null>): Promise<void> {
    for (const [k, eventId] of changes) {
      const sep = k.indexOf("\u0000");
      const type = k.slice(0, sep);
      const stateKey = k.slice(sep + 1);
      if (eventId === null) {
        await tx.run(`DELETE FROM current_state_events WHERE room_id = ? AND type = ? AND state_key = ?`, [roomId, type, stateKey]);
        continue;
      }
      const changed = await tx.run(`UPDATE current_state_events SET event_id = ? WHERE room_id = ? AND type = ? AND state_key = ?`, [eventId, roomId, type, stateKey]);
      if (changed === 0)
        await tx.run(`INSERT INTO current_state_events (room_id, type, state_key, event_id) VALUES (?, ?, ?, ?)`, [roomId, type, stateKey, eventId]);
    }
  }

  async upsertMembership(tx: SqlExecutor, row: Omit<MembershipRow, "forgotten">): Promise<void> {
    // Display name and avatar come from event content: a value carrying NUL is left out (src/domain/text.ts).
    const m = { ...row, displayname: indexableText(row.displayname), avatarUrl: indexableText(row.avatarUrl) };
    const changed = await tx.run(
      `UPDATE room_memberships SET membership = ?, event_id = ?, sender = ?, displayname = ?, avatar_url = ?, stream_ordering = ?, forgotten = ? WHERE room_id = ? AND user_id = ?`,
      [m.membership, m.eventId, m.sender, m.displayname, m.avatarUrl, m.streamOrdering, false, m.roomId, m.userId],
    );
    if (changed === 0)
      await tx.run(
        `INSERT INTO room_memberships (room_id, user_id, membership, event_id, sender, displayname, avatar_url, stream_ordering, forgotten) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [m.roomId, m.userId, m.membership, m.eventId, m.sender, m.displayname, m.avatarUrl, m.streamOrdering, false],
      );
  }

  async membership(roomId: string, userId: string): Promise<MembershipRow | undefined> {
    const r = await this.sql.get<Record<string, unknown>>(`SELECT * FROM room_memberships WHERE room_id = ? AND user_id = ?`, [roomId, userId]);
    return r && toMembership(r);
  }

  /** `userId`'s membership of each of `roomIds` that has one, one query per 500 rooms. */
  async membershipsIn(userId: string, roomIds: readonly string[]): Promise<Map<string, MembershipRow>> {
    const out = new Map<string, MembershipRow>();
    for (const chunk of chunks([...new Set(roomIds)])) {
      const rows = await this.sql.all<Record<string, unknown>>(`SELECT * FROM room_memberships WHERE user_id = ? AND room_id IN (${placeholders(chunk.length)})`, [userId, ...chunk]);
      for (const r of rows) out.set(r.room_id as string, toMembership(r));
    }
    return out;
  }

  async membersOf(roomId: string): Promise<MembershipRow[]> {
    return (await this.sql.all<Record<string, unknown>>(`SELECT * FROM room_memberships WHERE room_id = ?`, [roomId])).map(toMembership);
  }

  async roomsOfUser(userId: string, membership: string): Promise<string[]> {
    const rows = await this.sql.all<{ room_id: string }>(`SELECT room_id FROM room_memberships WHERE user_id = ? AND membership = ?`, [userId, membership]);
    return rows.map((r) => r.room_id);
  }

  /** The joined members of many rooms (room id → user ids), one query per 500 rooms. */
  async joinedMembersOf(roomIds: readonly string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    for (const chunk of chunks([...new Set(roomIds)])) {
      const rows = await this.sql.all<{ room_id: string; user_id: string }>(
        `SELECT room_id, user_id FROM room_memberships WHERE membership = ? AND room_id IN (${placeholders(chunk.length)})`,
        ["join", ...chunk],
      );
      for (const r of rows) {
        const list = out.get(r.room_id);
        if (list) list.push(r.user_id);
        else out.set(r.room_id, [r.user_id]);
      }
    }
    return out;
  }

  /** Rooms both users are joined to, by room id after `after` ("" for the first), at most `limit`; and how many in all. */
  async mutualJoinedRooms(a: string, b: string, after: string, limit: number): Promise<{ roomIds: string[]; count: number }> {
    const from = `FROM room_memberships x JOIN room_memberships y ON y.room_id = x.room_id
      WHERE x.user_id = ? AND x.membership = ? AND y.user_id = ? AND y.membership = ?`;
    const params = [a, "join", b, "join"];
    const rows = await this.sql.all<{ room_id: string }>(`SELECT x.room_id ${from} AND x.room_id > ? ORDER BY x.room_id LIMIT ?`, [...params, after, limit]);
    const total = await this.sql.get<{ n: number | string }>(`SELECT COUNT(*) AS n ${from}`, params);
    return { roomIds: rows.map((r) => r.room_id), count: Number(total?.n ?? 0) };
  }

  async forget(roomId: string, userId: string): Promise<void> {
    await this.sql.run(`UPDATE room_memberships SET forgotten = ? WHERE room_id = ? AND user_id = ?`, [true, roomId, userId]);
  }
}

/** IN (...) lists are split into chunks of 500 parameters (SQLite's variable limit). */
const chunks = <T>(items: readonly T[]) => inChunks(items, 500);

export interface RoomWithMembership {
  roomId: string;
  roomVersion: string;
  /** `userId`'s membership and its event, when they have one. */
  membership: string | undefined;
  membershipEventId: string | undefined;
}

/** Batch reads for faces that show many rooms at once: one query per kind of lookup, never one per room. */
export class RoomBatchReads {
  constructor(private readonly sql: Sql) {}

  /** The rooms among `roomIds` that exist, with `userId`'s membership of each. */
  async roomsWithMembership(userId: string, roomIds: readonly string[]): Promise<RoomWithMembership[]> {
    const out: RoomWithMembership[] = [];
    for (const chunk of chunks(roomIds)) {
      const rows = await this.sql.all<{ room_id: string; room_version: string; membership: string | null; event_id: string | null }>(
        `SELECT r.room_id, r.room_version, m.membership, m.event_id FROM rooms r
         LEFT JOIN room_memberships m ON m.room_id = r.room_id AND m.user_id = ?
         WHERE r.room_id IN (${placeholders(chunk.length)})`,
        [userId, ...chunk],
      );
      for (const r of rows)
        out.push({ roomId: r.room_id, roomVersion: r.room_version, membership: r.membership ?? undefined, membershipEventId: r.event_id ?? undefined });
    }
    return out;
  }

  /** Current state event ids of the given types (state key "") per room: room id → type → event id. */
  async currentStateOfTypes(roomIds: readonly string[], types: readonly string[]): Promise<Map<string, Map<string, string>>> {
    const out = new Map<string, Map<string, string>>();
    for (const chunk of chunks(roomIds)) {
      const rows = await this.sql.all<{ room_id: string; type: string; event_id: string }>(
        `SELECT room_id, type, event_id FROM current_state_events
         WHERE state_key = ? AND type IN (${placeholders(types.length)}) AND room_id IN (${placeholders(chunk.length)})`,
        ["", ...types, ...chunk] as Param[],
      );
      for (const row of rows) {
        let m = out.get(row.room_id);
        if (!m) out.set(row.room_id, (m = new Map()));
        m.set(row.type, row.event_id);
      }
    }
    return out;
  }

  /** Joined and invited member counts per room (rooms with neither are absent). */
  async memberCounts(roomIds: readonly string[]): Promise<Map<string, { joined: number; invited: number }>> {
    const out = new Map<string, { joined: number; invited: number }>();
    for (const chunk of chunks(roomIds)) {
      const rows = await this.sql.all<{ room_id: string; membership: string; n: number | string }>(
        `SELECT room_id, membership, COUNT(*) AS n FROM room_memberships
         WHERE membership IN (?, ?) AND room_id IN (${placeholders(chunk.length)}) GROUP BY room_id, membership`,
        ["join", "invite", ...chunk],
      );
      for (const row of rows) {
        let c = out.get(row.room_id);
        if (!c) out.set(row.room_id, (c = { joined: 0, invited: 0 }));
        if (row.membership === "join") c.joined = Number(row.n);
        else c.invited = Number(row.n);
      }
    }
    return out;
  }

  /**
   * One page of the rooms where `userId` has one of `memberships` (forgotten rooms left out), newest
   * membership change first, below stream position `before` when given; `limit + 1` rows tell if there is more.
   */
  async membershipPage(userId: string, memberships: readonly string[], before: number | undefined, limit: number) {
    const params: Param[] = [userId, false, ...memberships];
    let where = `user_id = ? AND forgotten = ? AND membership IN (${placeholders(memberships.length)})`;
    if (before !== undefined) {
      where += " AND stream_ordering < ?";
      params.push(before);
    }
    const rows = await this.sql.all<{ room_id: string; membership: string; stream_ordering: number | string }>(
      `SELECT room_id, membership, stream_ordering FROM room_memberships WHERE ${where} ORDER BY stream_ordering DESC LIMIT ?`,
      [...params, limit + 1],
    );
    return rows.map((x) => ({ roomId: x.room_id, membership: x.membership, streamOrdering: Number(x.stream_ordering) }));
  }
}

function toMembership(r: Record<string, unknown>): MembershipRow {
  return {
    roomId: r.room_id as string,
    userId: r.user_id as string,
    membership: r.membership as string,
    eventId: r.event_id as string,
    sender: r.sender as string,
    displayname: (r.displayname as string | null) ?? null,
    avatarUrl: (r.avatar_url as string | null) ?? null,
    streamOrdering: Number(r.stream_ordering),
    forgotten: Boolean(r.forgotten),
  };
}
