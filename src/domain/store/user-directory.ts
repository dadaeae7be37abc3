// Repository behind the user directory: room_publicity (each room's join rule and history visibility,
// written with those state events) and the candidate queries over users, profiles and room_memberships
// (remote users: from their member events).
// The directory is read live from those tables, so profile changes, joins, leaves and deactivations show
// at once without a copy to keep in step. Spec: Client-Server API "User directory".
import type { Param, Sql, SqlExecutor } from "../../storage/sql.ts";
import { indexableText } from "../text.ts";

export interface DirectoryCandidate {
  userId: string;
  displayname: string | null;
  avatarUrl: string | null;
  /** Shares a joined room with the requester. */
  sharesRoom: boolean;
}

/** Escapes LIKE wildcards (with `\` as the ESCAPE character). */
const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Most words of a search term that narrow the candidate query. */
const MAX_NARROWING_WORDS = 8;

export class UserDirectoryStore {
  constructor(private readonly sql: Sql) {}

  /** Records a room's join rule or history visibility (inside the event commit). */
  async setPublicity(tx: SqlExecutor, roomId: string, field: "join_rule" | "history_visibility", content: string | null): Promise<void> {
    const value = indexableText(content);
    const changed = await tx.run(`UPDATE room_publicity SET ${field} = ? WHERE room_id = ?`, [value, roomId]);
    if (changed === 0) await tx.run(`INSERT INTO room_publicity (room_id, ${field}) VALUES (?, ?)`, [roomId, value]);
  }

  /**
   * Active, non-support local users whose user id or display name contains every one of `words` (ASCII
   * words only narrow the query: the caller matches precisely), visible to `requesterId`: all of them with
   * `searchAll`, else those sharing a joined room with the requester or joined to a public room (join rule
   * public, history world_readable, or published in the room directory).
   */
  async candidates(requesterId: string, words: string[], opts: { searchAll: boolean; max: number }): Promise<DirectoryCandidate[]> {
    // Driven from the visible users (the requester's room-mates and the members of public rooms) rather
    // than from every user: measured on SQLite with 20k users and 2k rooms, ~15-25 ms a search against
    // ~400 ms for a scan of all users with per-user EXISTS checks.
    // Room-mates are other users (as Synapse's users_who_share_private_rooms): the requester finds
    // themselves only through a public room.
    const shared = `SELECT b.user_id FROM room_memberships a JOIN room_memberships b ON b.room_id = a.room_id
                    WHERE a.user_id = ? AND a.membership = 'join' AND b.membership = 'join' AND b.user_id <> a.user_id`;
    const publicRooms = `SELECT room_id FROM room_publicity WHERE join_rule = 'public' OR history_visibility = 'world_readable'
                         UNION SELECT room_id FROM rooms WHERE is_public = ?`;
    const params: Param[] = [requesterId];
    let from = "users u";
    if (!opts.searchAll) {
      from = `(SELECT user_id FROM shared
               UNION SELECT m.user_id FROM room_memberships m WHERE m.membership = 'join' AND m.room_id IN (${publicRooms})) AS v
              JOIN users u ON u.user_id = v.user_id`;
      params.push(true);
    }
    let where = `u.deactivated = ? AND (u.user_type IS NULL OR u.user_type <> 'support')`;
    params.push(false);
    // A few words narrow the query enough (the caller matches every word precisely): a long term must
    // not become hundreds of LIKE clauses.
    for (const w of words.filter((x) => /^[\x20-\x7e]+$/.test(x)).slice(0, MAX_NARROWING_WORDS)) {
      where += ` AND (LOWER(u.user_id) LIKE ? ESCAPE '\\' OR LOWER(COALESCE(p.displayname, '')) LIKE ? ESCAPE '\\')`;
      const pattern = `%${likeEscape(w.toLowerCase())}%`;
      params.push(pattern, pattern);
    }
    const rows = await this.sql.all<{ user_id: string; displayname: string | null; avatar_url: string | null; shared: number | boolean }>(
      `WITH shared AS (${shared})
       SELECT u.user_id, p.displayname, p.avatar_url, CASE WHEN u.user_id IN (SELECT user_id FROM shared) THEN 1 ELSE 0 END AS shared
       FROM ${from} LEFT JOIN profiles p ON p.user_id = u.user_id
       WHERE ${where}
       ORDER BY u.user_id LIMIT ?`,
      [...params, opts.max],
    );
    const local = rows.map((r) => ({ userId: r.user_id, displayname: r.displayname, avatarUrl: r.avatar_url, sharesRoom: Number(r.shared) === 1 }));
    const remote = await this.remoteCandidates(requesterId, words, opts);
    if (remote.length === 0) return local;
    return [...local, ...remote].sort((a, b) => (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0)).slice(0, opts.max);
  }

  /**
   * Remote users (no account here) joined to a room here, as Synapse's directory holds them, with the name
   * and avatar of their member event: with `searchAll` every one, else those sharing a joined room with
   * the requester or joined to a public room. Matched on `words` as `candidates` is.
   */
  private async remoteCandidates(requesterId: string, words: string[], opts: { searchAll: boolean; max: number }): Promise<DirectoryCandidate[]> {
    const shared = `SELECT b.user_id FROM room_memberships a JOIN room_memberships b ON b.room_id = a.room_id
                    WHERE a.user_id = ? AND a.membership = 'join' AND b.membership = 'join' AND b.user_id <> a.user_id`;
    const publicRooms = `SELECT room_id FROM room_publicity WHERE join_rule = 'public' OR history_visibility = 'world_readable'
                         UNION SELECT room_id FROM rooms WHERE is_public = ?`;
    const params: Param[] = [requesterId];
    const visible = opts.searchAll
      ? `SELECT DISTINCT user_id FROM room_memberships WHERE membership = 'join'`
      : `SELECT user_id FROM shared UNION SELECT x.user_id FROM room_memberships x WHERE x.membership = 'join' AND x.room_id IN (${publicRooms})`;
    if (!opts.searchAll) params.push(true);
    let where = `NOT EXISTS (SELECT 1 FROM users u WHERE u.user_id = v.user_id)`;
    for (const w of words.filter((x) => /^[\x20-\x7e]+$/.test(x)).slice(0, MAX_NARROWING_WORDS)) {
      where += ` AND (LOWER(v.user_id) LIKE ? ESCAPE '\\' OR LOWER(COALESCE(m.displayname, '')) LIKE ? ESCAPE '\\')`;
      const pattern = `%${likeEscape(w.toLowerCase())}%`;
      params.push(pattern, pattern);
    }
    const rows = await this.sql.all<{ user_id: string; displayname: string | null; avatar_url: string | null; shared: number | boolean }>(
      `WITH shared AS (${shared})
       SELECT v.user_id, MAX(m.displayname) AS displayname, MAX(m.avatar_url) AS avatar_url,
              CASE WHEN v.user_id IN (SELECT user_id FROM shared) THEN 1 ELSE 0 END AS shared
       FROM (${visible}) AS v JOIN room_memberships m ON m.user_id = v.user_id AND m.membership = 'join'
       WHERE ${where}
       GROUP BY v.user_id ORDER BY v.user_id LIMIT ?`,
      [...params, opts.max],
    );
    return rows.map((r) => ({ userId: r.user_id, displayname: r.displayname, avatarUrl: r.avatar_url, sharesRoom: Number(r.shared) === 1 }));
  }
}
