// Repository behind the user directory: room_publicity (each room's join rule and history visibility,
// written with those state events) and the candidate query over users, profiles and room_memberships.
// The directory is read live from those tables, so profile changes, joins, leaves and deactivations show
// at once without a copy to keep in step. Spec: Client-Server API "User directory".
import type { Param, Sql, SqlExecutor } from "../../storage/sql.ts";

export interface DirectoryCandidate {
  userId: string;
  displayname: string | null;
  avatarUrl: string | null;
  /** Shares a joined room with the requester. */
  sharesRoom: boolean;
}

/** Escapes LIKE wildcards (with `\` as the ESCAPE character). */
const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

export class UserDirectoryStore {
  constructor(private readonly sql: Sql) {}

  /** Records a room's join rule or history visibility (inside the event commit). */
  async setPublicity(tx: SqlExecutor, roomId: string, field: "join_rule" | "history_visibility", value: string | null): Promise<void> {
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
    const shared = `EXISTS (SELECT 1 FROM room_memberships a JOIN room_memberships b ON b.room_id = a.room_id
                     WHERE a.user_id = u.user_id AND a.membership = 'join' AND b.user_id = ? AND b.membership = 'join')`;
    const inPublic = `EXISTS (SELECT 1 FROM room_memberships m JOIN rooms r ON r.room_id = m.room_id
                       LEFT JOIN room_publicity rp ON rp.room_id = m.room_id
                       WHERE m.user_id = u.user_id AND m.membership = 'join'
                         AND (r.is_public = ? OR rp.join_rule = 'public' OR rp.history_visibility = 'world_readable'))`;
    const params: Param[] = [requesterId, false];
    let where = `u.deactivated = ? AND (u.user_type IS NULL OR u.user_type <> 'support')`;
    for (const w of words) {
      if (!/^[\x20-\x7e]+$/.test(w)) continue;
      where += ` AND (LOWER(u.user_id) LIKE ? ESCAPE '\\' OR LOWER(COALESCE(p.displayname, '')) LIKE ? ESCAPE '\\')`;
      const pattern = `%${likeEscape(w.toLowerCase())}%`;
      params.push(pattern, pattern);
    }
    if (!opts.searchAll) {
      where += ` AND (${shared} OR ${inPublic})`;
      params.push(requesterId, true);
    }
    const rows = await this.sql.all<{ user_id: string; displayname: string | null; avatar_url: string | null; shared: number | boolean }>(
      `SELECT u.user_id, p.displayname, p.avatar_url, CASE WHEN ${shared} THEN 1 ELSE 0 END AS shared
       FROM users u LEFT JOIN profiles p ON p.user_id = u.user_id
       WHERE ${where}
       ORDER BY u.user_id LIMIT ?`,
      [...params, opts.max],
    );
    return rows.map((r) => ({ userId: r.user_id, displayname: r.displayname, avatarUrl: r.avatar_url, sharesRoom: Number(r.shared) === 1 }));
  }
}
