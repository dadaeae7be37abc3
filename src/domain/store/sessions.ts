// Repository of devices and the tokens that belong to them (devices, access_tokens, refresh_tokens,
// login_tokens). Tokens are only ever looked up by hash. The reads and writes of every authenticated
// request (the token lookup, the batched last-seen update) are raw SQL; the rest is Prisma.
import type { Db, Tx } from "../../storage/database.ts";
import type { Sql } from "../../storage/sql.ts";

type Client = Db | Tx;

export interface DeviceRow {
  userId: string;
  deviceId: string;
  displayName: string | null;
  lastSeenTs: number | null;
  lastSeenIp: string | null;
  lastSeenUserAgent: string | null;
}

export interface AccessTokenRow {
  id: string;
  userId: string;
  deviceId: string | null;
  validUntilTs: number | null;
  refreshTokenId: string | null;
  used: boolean;
}

export interface RefreshTokenRow {
  id: string;
  userId: string;
  deviceId: string;
  expiryTs: number | null;
  ultimateSessionExpiryTs: number | null;
  nextTokenId: string | null;
}

const num = (v: bigint | null) => (v === null ? null : Number(v));

const numOrNull = (v: number | string | bigint | null) => (v === null ? null : Number(v));

export class SessionStore {
  constructor(private readonly db: Db, private readonly sql: Sql) {}

  // Devices

  async getDevice(userId: string, deviceId: string, tx: Client = this.db): Promise<DeviceRow | null> {
    const d = await tx.device.findFirst({ where: { userId, deviceId } });
    return d && { ...d, lastSeenTs: num(d.lastSeenTs) };
  }

  async listDevices(userId: string): Promise<DeviceRow[]> {
    const rows = await this.db.device.findMany({ where: { userId }, orderBy: { createdTs: "asc" } });
    return rows.map((d) => ({ ...d, lastSeenTs: num(d.lastSeenTs) }));
  }

  async upsertDevice(tx: Client, userId: string, deviceId: string, displayName: string | null | undefined, now: number): Promise<void> {
    await tx.device.upsert({
      where: { userId_deviceId: { userId, deviceId } },
      create: { userId, deviceId, displayName: displayName ?? null, createdTs: BigInt(now) },
      update: displayName === undefined || displayName === null ? {} : { displayName },
    });
  }

  async setDeviceDisplayName(userId: string, deviceId: string, displayName: string | null): Promise<boolean> {
    const r = await this.db.device.updateMany({ where: { userId, deviceId }, data: { displayName } });
    return r.count > 0;
  }

  async recordLastSeen(entries: { userId: string; deviceId: string; ts: number; ip: string; userAgent: string | null }[]): Promise<void> {
    if (entries.length === 0) return;
    await this.sql.transaction(async (tx) => {
      for (const e of entries)
        await tx.run(`UPDATE devices SET last_seen_ts = ?, last_seen_ip = ?, last_seen_user_agent = ? WHERE user_id = ? AND device_id = ?`, [e.ts, e.ip, e.userAgent, e.userId, e.deviceId]);
    });
  }

  /** Deletes devices and every token bound to them. Returns the token hashes removed (for cache invalidation). */
  async deleteDevices(tx: Client, userId: string, deviceIds: string[]): Promise<void> {
    if (deviceIds.length === 0) return;
    await tx.accessToken.deleteMany({ where: { userId, deviceId: { in: deviceIds } } });
    await tx.refreshToken.deleteMany({ where: { userId, deviceId: { in: deviceIds } } });
    await tx.device.deleteMany({ where: { userId, deviceId: { in: deviceIds } } });
  }

  async deviceIds(userId: string, tx: Client = this.db): Promise<string[]> {
    const rows = await tx.device.findMany({ where: { userId }, select: { deviceId: true } });
    return rows.map((r) => r.deviceId);
  }

  // Access tokens

  async createAccessToken(
    tx: Client,
    t: { id: string; tokenHash: string; userId: string; deviceId: string | null; validUntilTs: number | null; refreshTokenId: string | null; puppetsUserId?: string | null },
    now: number,
  ): Promise<void> {
    await tx.accessToken.create({
      data: {
        id: t.id,
        tokenHash: t.tokenHash,
        userId: t.userId,
        deviceId: t.deviceId,
        createdTs: BigInt(now),
        validUntilTs: t.validUntilTs === null ? null : BigInt(t.validUntilTs),
        refreshTokenId: t.refreshTokenId,
        puppetsUserId: t.puppetsUserId ?? null,
      },
    });
  }

  async findAccessToken(tokenHash: string): Promise<AccessTokenRow | null> {
    const t = await this.sql.get<{ id: string; user_id: string; device_id: string | null; valid_until_ts: number | string | null; refresh_token_id: string | null; used: boolean | number }>(
      `SELECT id, user_id, device_id, valid_until_ts, refresh_token_id, used FROM access_tokens WHERE token_hash = ?`,
      [tokenHash],
    );
    return t ? { id: t.id, userId: t.user_id, deviceId: t.device_id, validUntilTs: numOrNull(t.valid_until_ts), refreshTokenId: t.refresh_token_id, used: Boolean(t.used) } : null;
  }

  async markAccessTokenUsed(id: string): Promise<void> {
    await this.db.accessToken.updateMany({ where: { id, used: false }, data: { used: true } });
  }

  async deleteAccessTokensOfUser(tx: Client, userId: string, exceptTokenId?: string): Promise<void> {
    await tx.accessToken.deleteMany({ where: { userId, ...(exceptTokenId ? { id: { not: exceptTokenId } } : {}) } });
  }

  // Refresh tokens

  async createRefreshToken(
    tx: Client,
    t: { id: string; tokenHash: string; userId: string; deviceId: string; expiryTs: number | null; ultimateSessionExpiryTs: number | null },
    now: number,
  ): Promise<void> {
    await tx.refreshToken.create({
      data: {
        ...t,
        createdTs: BigInt(now),
        expiryTs: t.expiryTs === null ? null : BigInt(t.expiryTs),
        ultimateSessionExpiryTs: t.ultimateSessionExpiryTs === null ? null : BigInt(t.ultimateSessionExpiryTs),
      },
    });
  }

  async findRefreshToken(tokenHash: string, tx: Client = this.db): Promise<RefreshTokenRow | null> {
    const t = await tx.refreshToken.findFirst({ where: { tokenHash } });
    return t && { id: t.id, userId: t.userId, deviceId: t.deviceId, expiryTs: num(t.expiryTs), ultimateSessionExpiryTs: num(t.ultimateSessionExpiryTs), nextTokenId: t.nextTokenId };
  }

  /** Has the access token issued with refresh token `refreshTokenId` been used yet? */
  async refreshSessionUsed(refreshTokenId: string, tx: Client = this.db): Promise<boolean> {
    return (await tx.accessToken.count({ where: { refreshTokenId, used: true } })) > 0;
  }

  async setNextRefreshToken(tx: Client, id: string, nextTokenId: string): Promise<void> {
    await tx.refreshToken.update({ where: { id }, data: { nextTokenId } });
  }

  /**
   * Drops refresh tokens (and their access tokens) that led to `refreshTokenId`: the client moved on.
   * Returns the hashes of the access tokens dropped (for the token cache).
   */
  async deletePredecessors(refreshTokenId: string): Promise<string[]> {
    const preds = await this.db.refreshToken.findMany({ where: { nextTokenId: refreshTokenId }, select: { id: true } });
    if (preds.length === 0) return [];
    const ids = preds.map((p) => p.id);
    const dropped = await this.db.accessToken.findMany({ where: { refreshTokenId: { in: ids } }, select: { tokenHash: true } });
    await this.db.$transaction([
      this.db.accessToken.deleteMany({ where: { refreshTokenId: { in: ids } } }),
      this.db.refreshToken.deleteMany({ where: { id: { in: ids } } }),
    ]);
    return dropped.map((t) => t.tokenHash);
  }

  async deleteRefreshTokensOfUser(tx: Client, userId: string, exceptDeviceId?: string): Promise<void> {
    await tx.refreshToken.deleteMany({ where: { userId, ...(exceptDeviceId ? { deviceId: { not: exceptDeviceId } } : {}) } });
  }

  // Login tokens (m.login.token)

  async createLoginToken(tokenHash: string, userId: string, expiryTs: number): Promise<void> {
    await this.db.loginToken.create({ data: { tokenHash, userId, expiryTs: BigInt(expiryTs) } });
  }

  /** Marks the token used and returns its user, or null if unknown, expired or already used. */
  async consumeLoginToken(tokenHash: string, now: number): Promise<string | null> {
    const r = await this.db.loginToken.updateMany({ where: { tokenHash, used: false, expiryTs: { gt: BigInt(now) } }, data: { used: true } });
    if (r.count === 0) return null;
    const t = await this.db.loginToken.findFirst({ where: { tokenHash }, select: { userId: true } });
    return t?.userId ?? null;
  }
}
