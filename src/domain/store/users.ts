// Repository of accounts and their global profiles (tables users, profiles). The account read of every
// token lookup and the erased-users read of /sync are raw SQL; the rest is Prisma.
import type { Db, Tx } from "../../storage/database.ts";
import type { Sql } from "../../storage/sql.ts";

export interface UserRow {
  userId: string;
  passwordHash: string | null;
  isGuest: boolean;
  isAdmin: boolean;
  userType: string | null;
  appserviceId: string | null;
  deactivated: boolean;
  erased: boolean;
  /** MSC3939: locked (accounts/moderation.ts). */
  locked: boolean;
  /** MSC3823: suspended (accounts/moderation.ts). */
  suspended: boolean;
  createdTs: number;
}

export interface ProfileRow {
  displayname: string | null;
  avatarUrl: string | null;
}

type Client = Db | Tx;

const toUser = (r: { createdTs: bigint } & Omit<UserRow, "createdTs">): UserRow => ({ ...r, createdTs: Number(r.createdTs) });

export class UserStore {
  constructor(private readonly db: Db, private readonly sql: Sql) {}

  /** The account; read inside `tx` when given (a Prisma transaction). */
  async get(userId: string, tx?: Client): Promise<UserRow | null> {
    if (tx) {
      const r = await tx.user.findFirst({ where: { userId } });
      return r ? toUser(r) : null;
    }
    const r = await this.sql.get<{
      user_id: string; password_hash: string | null; is_guest: boolean | number; is_admin: boolean | number; user_type: string | null;
      appservice_id: string | null; deactivated: boolean | number; erased: boolean | number; locked: boolean | number; suspended: boolean | number; created_ts: number | string;
    }>(`SELECT user_id, password_hash, is_guest, is_admin, user_type, appservice_id, deactivated, erased, locked, suspended, created_ts FROM users WHERE user_id = ?`, [userId]);
    return r
      ? {
          userId: r.user_id, passwordHash: r.password_hash, isGuest: Boolean(r.is_guest), isAdmin: Boolean(r.is_admin), userType: r.user_type,
          appserviceId: r.appservice_id, deactivated: Boolean(r.deactivated), erased: Boolean(r.erased), locked: Boolean(r.locked), suspended: Boolean(r.suspended),
          createdTs: Number(r.created_ts),
        }
      : null;
  }

  async exists(userId: string): Promise<boolean> {
    return (await this.db.user.count({ where: { userId } })) > 0;
  }

  async create(
    tx: Client,
    u: { userId: string; passwordHash: string | null; isGuest?: boolean; isAdmin?: boolean; userType?: string | null; appserviceId?: string | null; displayname?: string | null },
    now: number,
  ): Promise<void> {
    await tx.user.create({
      data: {
        userId: u.userId,
        passwordHash: u.passwordHash,
        isGuest: u.isGuest ?? false,
        isAdmin: u.isAdmin ?? false,
        userType: u.userType ?? null,
        appserviceId: u.appserviceId ?? null,
        createdTs: BigInt(now),
      },
    });
    await tx.profile.create({ data: { userId: u.userId, displayname: u.displayname ?? null } });
  }

  async setPasswordHash(tx: Client, userId: string, passwordHash: string | null): Promise<void> {
    await tx.user.update({ where: { userId }, data: { passwordHash } });
  }

  /** A guest becomes a full user (POST /register with guest_access_token); false if it was no guest. */
  async upgradeGuest(tx: Client, userId: string, passwordHash: string | null): Promise<boolean> {
    const n = await tx.user.updateMany({ where: { userId, isGuest: true }, data: { isGuest: false, passwordHash } });
    return n.count === 1;
  }

  async setAdmin(userId: string, isAdmin: boolean): Promise<void> {
    await this.db.user.update({ where: { userId }, data: { isAdmin } });
  }

  /** Sets MSC3939's `locked` or MSC3823's `suspended` (accounts/moderation.ts). */
  async setModerationFlag(userId: string, flag: "locked" | "suspended", value: boolean): Promise<void> {
    await this.sql.run(`UPDATE users SET ${flag === "locked" ? "locked" : "suspended"} = ? WHERE user_id = ?`, [value, userId]);
  }

  async markDeactivated(tx: Client, userId: string, erased: boolean): Promise<void> {
    await tx.user.update({ where: { userId }, data: { deactivated: true, passwordHash: null, ...(erased ? { erased: true } : {}) } });
  }

  /** Which of `userIds` are erased (deactivated with erase). */
  async erasedAmong(userIds: readonly string[]): Promise<Set<string>> {
    if (userIds.length === 0) return new Set();
    const rows = await this.sql.all<{ user_id: string }>(`SELECT user_id FROM users WHERE erased = ? AND user_id IN (${userIds.map(() => "?").join(", ")})`, [true, ...userIds]);
    return new Set(rows.map((r) => r.user_id));
  }

  /** The profiles row; read inside `tx` when given. */
  async getProfile(userId: string, tx: Client = this.db): Promise<ProfileRow | null> {
    return tx.profile.findFirst({ where: { userId }, select: { displayname: true, avatarUrl: true } });
  }

  async setProfileField(tx: Client, userId: string, field: "displayname" | "avatarUrl", value: string | null): Promise<void> {
    await tx.profile.upsert({ where: { userId }, create: { userId, [field]: value }, update: { [field]: value } });
  }

  /** Do the two users share a room in which both are joined? (for limit_profile_requests_to_users_who_share_rooms) */
  async shareARoom(a: string, b: string): Promise<boolean> {
    const rooms = await this.db.roomMembership.findMany({ where: { userId: a, membership: "join" }, select: { roomId: true } });
    if (rooms.length === 0) return false;
    const n = await this.db.roomMembership.count({
      where: { userId: b, membership: "join", roomId: { in: rooms.map((r) => r.roomId) } },
    });
    return n > 0;
  }
}
