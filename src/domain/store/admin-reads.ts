// Reads of the admin API over many accounts or rooms at once (users with their profiles and last-seen
// time; rooms with their directory stats and member counts), in raw SQL on both databases: one query a
// page or one per kind of count, never one per user or room. Owned by src/domain/admin/.
import type { Param, Sql } from "../../storage/sql.ts";

export interface AdminUserRow {
  name: string;
  isGuest: boolean;
  admin: boolean;
  userType: string | null;
  deactivated: boolean;
  erased: boolean;
  locked: boolean;
  suspended: boolean;
  displayname: string | null;
  avatarUrl: string | null;
  creationTs: number;
  lastSeenTs: number | null;
  appserviceId: string | null;
}

/** Synapse's `order_by` values for the user list and the column each sorts by. */
export const USER_ORDER_COLUMNS: Record<string, string> = {
  name: "u.user_id",
  is_guest: "u.is_guest",
  admin: "u.is_admin",
  user_type: "u.user_type",
  deactivated: "u.deactivated",
  shadow_banned: "u.user_id",
  displayname: "p.displayname",
  avatar_url: "p.avatar_url",
  creation_ts: "u.created_ts",
  last_seen_ts: "ls.last_seen_ts",
};

export interface UserListQuery {
  /** Substring of the user id (ignored when `name` is given). */
  userId?: string;
  /** Substring of the user id or display name (case-insensitive). */
  name?: string;
  guests: boolean;
  /** undefined: both; true: only deactivated; false: only active. */
  deactivated?: boolean;
  admins?: boolean;
  notUserTypes: string[];
  orderBy: string;
  dir: "f" | "b";
  offset: number;
  limit: number;
}

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => "\\" + c);

export class AdminReads {
  constructor(private readonly sql: Sql) {}

  async userPage(q: UserListQuery): Promise<{ users: AdminUserRow[]; total: number }> {
    const where: string[] = [];
    const params: Param[] = [];
    if (q.name !== undefined) {
      where.push(`(LOWER(u.user_id) LIKE ? ESCAPE '\\' OR LOWER(p.displayname) LIKE ? ESCAPE '\\')`);
      const pat = `%${likeEscape(q.name.toLowerCase())}%`;
      params.push(pat, pat);
    } else if (q.userId !== undefined) {
      where.push(`u.user_id LIKE ? ESCAPE '\\'`);
      params.push(`%${likeEscape(q.userId)}%`);
    }
    if (!q.guests) where.push("u.is_guest = ?"), params.push(false);
    if (q.deactivated !== undefined) where.push("u.deactivated = ?"), params.push(q.deactivated);
    if (q.admins !== undefined) where.push("u.is_admin = ?"), params.push(q.admins);
    const types = q.notUserTypes.filter((t) => t !== "");
    if (types.length > 0) {
      where.push(`(u.user_type IS NULL OR u.user_type NOT IN (${types.map(() => "?").join(",")}))`);
      params.push(...types);
    }
    if (q.notUserTypes.includes("")) where.push("u.user_type IS NOT NULL");
    const from = `FROM users u LEFT JOIN profiles p ON p.user_id = u.user_id
      LEFT JOIN (SELECT user_id, MAX(last_seen_ts) AS last_seen_ts FROM devices GROUP BY user_id) ls ON ls.user_id = u.user_id
      ${where.length ? "WHERE " + where.join(" AND ") : ""}`;
    const total = await this.sql.get<{ n: number | string }>(`SELECT COUNT(*) AS n ${from}`, params);
    const col = USER_ORDER_COLUMNS[q.orderBy] ?? "u.user_id";
    const order = q.dir === "b" ? "DESC" : "ASC";
    // NULLs sort as the smallest value on both databases (SQLite's default; PostgreSQL's is the largest).
    const nulls = this.sql.dialect === "postgres" ? (order === "ASC" ? " NULLS FIRST" : " NULLS LAST") : "";
    const rows = await this.sql.all<Record<string, unknown>>(
      `SELECT u.user_id, u.is_guest, u.is_admin, u.user_type, u.deactivated, u.erased, u.locked, u.suspended, u.created_ts, u.appservice_id,
              p.displayname, p.avatar_url, ls.last_seen_ts
       ${from} ORDER BY ${col} ${order}${nulls}, u.user_id ASC LIMIT ? OFFSET ?`,
      [...params, q.limit, q.offset],
    );
    return { users: rows.map(toAdminUser), total: Number(total?.n ?? 0) };
  }

  async user(userId: string): Promise<AdminUserRow | undefined> {
    const r = await this.sql.get<Record<string, unknown>>(
      `SELECT u.user_id, u.is_guest, u.is_admin, u.user_type, u.deactivated, u.erased, u.locked, u.suspended, u.created_ts, u.appservice_id,
              p.displayname, p.avatar_url, (SELECT MAX(last_seen_ts) FROM devices d WHERE d.user_id = u.user_id) AS last_seen_ts
       FROM users u LEFT JOIN profiles p ON p.user_id = u.user_id WHERE u.user_id = ?`,
      [userId],
    );
    return r && toAdminUser(r);
  }

  /** Every room this server knows, with its directory stats (rooms without a stats row: nulls). */
  async allRooms(): Promise<AdminRoomRow[]> {
    const rows = await this.sql.all<Record<string, unknown>>(
      `SELECT r.room_id, r.room_version, r.creator, r.is_public, s.name, s.topic, s.canonical_alias, s.avatar_url,
              s.join_rule, s.history_visibility, s.guest_access, s.room_type, s.room_id AS has_stats
       FROM rooms r LEFT JOIN room_directory_stats s ON s.room_id = r.room_id`,
    );
    return rows.map((r) => ({
      roomId: r.room_id as string,
      version: r.room_version as string,
      creator: r.creator as string,
      isPublic: Boolean(r.is_public),
      name: (r.name as string | null) ?? null,
      topic: (r.topic as string | null) ?? null,
      canonicalAlias: (r.canonical_alias as string | null) ?? null,
      avatarUrl: (r.avatar_url as string | null) ?? null,
      joinRule: (r.join_rule as string | null) ?? null,
      historyVisibility: (r.history_visibility as string | null) ?? null,
      guestAccess: (r.guest_access as string | null) ?? null,
      roomType: (r.room_type as string | null) ?? null,
      hasStats: r.has_stats !== null && r.has_stats !== undefined,
    }));
  }

  /** Joined members per room, all and local only (`localSuffix` is ":server_name"). */
  async joinedCounts(localSuffix: string): Promise<Map<string, { joined: number; local: number }>> {
    const rows = await this.sql.all<{ room_id: string; joined: number | string; local: number | string }>(
      `SELECT room_id, COUNT(*) AS joined, SUM(CASE WHEN user_id LIKE ? ESCAPE '\\' THEN 1 ELSE 0 END) AS local
       FROM room_memberships WHERE membership = ? GROUP BY room_id`,
      [`%${likeEscape(localSuffix)}`, "join"],
    );
    return new Map(rows.map((r) => [r.room_id, { joined: Number(r.joined), local: Number(r.local) }]));
  }

  async stateEventCounts(): Promise<Map<string, number>> {
    const rows = await this.sql.all<{ room_id: string; n: number | string }>(`SELECT room_id, COUNT(*) AS n FROM current_state_events GROUP BY room_id`);
    return new Map(rows.map((r) => [r.room_id, Number(r.n)]));
  }

  /** Devices of local joined members of the room (Synapse's joined_local_devices). */
  async joinedLocalDevices(roomId: string, localSuffix: string): Promise<number> {
    const r = await this.sql.get<{ n: number | string }>(
      `SELECT COUNT(*) AS n FROM devices d JOIN room_memberships m ON m.user_id = d.user_id
       WHERE m.room_id = ? AND m.membership = ? AND m.user_id LIKE ? ESCAPE '\\'`,
      [roomId, "join", `%${likeEscape(localSuffix)}`],
    );
    return Number(r?.n ?? 0);
  }

  /** Has every local member who ever was in the room forgotten it? */
  async forgottenByAll(roomId: string, localSuffix: string): Promise<boolean> {
    const r = await this.sql.get<{ n: number | string; f: number | string | null }>(
      `SELECT COUNT(*) AS n, SUM(CASE WHEN forgotten = ? THEN 1 ELSE 0 END) AS f FROM room_memberships
       WHERE room_id = ? AND user_id LIKE ? ESCAPE '\\'`,
      [true, roomId, `%${likeEscape(localSuffix)}`],
    );
    const n = Number(r?.n ?? 0);
    return n > 0 && Number(r?.f ?? 0) === n;
  }
}

export interface AdminRoomRow {
  roomId: string;
  version: string;
  creator: string;
  isPublic: boolean;
  name: string | null;
  topic: string | null;
  canonicalAlias: string | null;
  avatarUrl: string | null;
  joinRule: string | null;
  historyVisibility: string | null;
  guestAccess: string | null;
  roomType: string | null;
  hasStats: boolean;
}

function toAdminUser(r: Record<string, unknown>): AdminUserRow {
  return {
    name: r.user_id as string,
    isGuest: Boolean(r.is_guest),
    admin: Boolean(r.is_admin),
    userType: (r.user_type as string | null) ?? null,
    deactivated: Boolean(r.deactivated),
    erased: Boolean(r.erased),
    locked: Boolean(r.locked),
    suspended: Boolean(r.suspended),
    displayname: (r.displayname as string | null) ?? null,
    avatarUrl: (r.avatar_url as string | null) ?? null,
    creationTs: Number(r.created_ts),
    lastSeenTs: r.last_seen_ts === null || r.last_seen_ts === undefined ? null : Number(r.last_seen_ts),
    appserviceId: (r.appservice_id as string | null) ?? null,
  };
}
