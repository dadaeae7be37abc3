const num = (v) => (v === null ? null : Number(v));
const numOrNull = (v) => (v === null ? null : Number(v));
export class SessionStore {
    db;
    sql;
    constructor(db, sql) {
        this.db = db;
        this.sql = sql;
    }
    // Devices
    async getDevice(userId, deviceId, tx = this.db) {
        const d = await tx.device.findFirst({ where: { userId, deviceId } });
        return d && { ...d, lastSeenTs: num(d.lastSeenTs) };
    }
    async listDevices(userId) {
        const rows = await this.db.device.findMany({ where: { userId }, orderBy: { createdTs: "asc" } });
        return rows.map((d) => ({ ...d, lastSeenTs: num(d.lastSeenTs) }));
    }
    async upsertDevice(tx, userId, deviceId, displayName, now) {
        await tx.device.upsert({
            where: { userId_deviceId: { userId, deviceId } },
            create: { userId, deviceId, displayName: displayName ?? null, createdTs: BigInt(now) },
            update: displayName === undefined || displayName === null ? {} : { displayName },
        });
    }
    async setDeviceDisplayName(userId, deviceId, displayName) {
        const r = await this.db.device.updateMany({ where: { userId, deviceId }, data: { displayName } });
        return r.count > 0;
    }
    async recordLastSeen(entries) {
        if (entries.length === 0)
            return;
        await this.sql.transaction(async (tx) => {
            for (const e of entries)
                await tx.run(`UPDATE devices SET last_seen_ts = ?, last_seen_ip = ?, last_seen_user_agent = ? WHERE user_id = ? AND device_id = ?`, [e.ts, e.ip, e.userAgent, e.userId, e.deviceId]);
        });
    }
    /** Deletes devices and every token bound to them. Returns the token hashes removed (for cache invalidation). */
    async deleteDevices(tx, userId, deviceIds) {
        if (deviceIds.length === 0)
            return;
        await tx.accessToken.deleteMany({ where: { userId, deviceId: { in: deviceIds } } });
        await tx.refreshToken.deleteMany({ where: { userId, deviceId: { in: deviceIds } } });
        await tx.device.deleteMany({ where: { userId, deviceId: { in: deviceIds } } });
    }
    async deviceIds(userId, tx = this.db) {
        const rows = await tx.device.findMany({ where: { userId }, select: { deviceId: true } });
        return rows.map((r) => r.deviceId);
    }
    // Access tokens
    async createAccessToken(tx, t, now) {
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
    async findAccessToken(tokenHash) {
        const t = await this.sql.get(`SELECT id, user_id, device_id, valid_until_ts, refresh_token_id, used FROM access_tokens WHERE token_hash = ?`, [tokenHash]);
        return t ? { id: t.id, userId: t.user_id, deviceId: t.device_id, validUntilTs: numOrNull(t.valid_until_ts), refreshTokenId: t.refresh_token_id, used: Boolean(t.used) } : null;
    }
    async markAccessTokenUsed(id) {
        await this.db.accessToken.updateMany({ where: { id, used: false }, data: { used: true } });
    }
    async deleteAccessTokensOfUser(tx, userId, exceptTokenId) {
        await tx.accessToken.deleteMany({ where: { userId, ...(exceptTokenId ? { id: { not: exceptTokenId } } : {}) } });
    }
    // Refresh tokens
    async createRefreshToken(tx, t, now) {
        await tx.refreshToken.create({
            data: {
                ...t,
                createdTs: BigInt(now),
                expiryTs: t.expiryTs === null ? null : BigInt(t.expiryTs),
                ultimateSessionExpiryTs: t.ultimateSessionExpiryTs === null ? null : BigInt(t.ultimateSessionExpiryTs),
            },
        });
    }
    async findRefreshToken(tokenHash, tx = this.db) {
        const t = await tx.refreshToken.findFirst({ where: { tokenHash } });
        return t && { id: t.id, userId: t.userId, deviceId: t.deviceId, expiryTs: num(t.expiryTs), ultimateSessionExpiryTs: num(t.ultimateSessionExpiryTs), nextTokenId: t.nextTokenId };
    }
    /** Has the access token issued with refresh token `refreshTokenId` been used yet? */
    async refreshSessionUsed(refreshTokenId, tx = this.db) {
        return (await tx.accessToken.count({ where: { refreshTokenId, used: true } })) > 0;
    }
    async setNextRefreshToken(tx, id, nextTokenId) {
        await tx.refreshToken.update({ where: { id }, data: { nextTokenId } });
    }
    /** Drops refresh tokens (and their access tokens) that led to `refreshTokenId`: the client moved on. */
    async deletePredecessors(refreshTokenId) {
        const preds = await this.db.refreshToken.findMany({ where: { nextTokenId: refreshTokenId }, select: { id: true } });
        if (preds.length === 0)
            return;
        const ids = preds.map((p) => p.id);
        await this.db.$transaction([
            this.db.accessToken.deleteMany({ where: { refreshTokenId: { in: ids } } }),
            this.db.refreshToken.deleteMany({ where: { id: { in: ids } } }),
        ]);
    }
    async deleteRefreshTokensOfUser(tx, userId, exceptDeviceId) {
        await tx.refreshToken.deleteMany({ where: { userId, ...(exceptDeviceId ? { deviceId: { not: exceptDeviceId } } : {}) } });
    }
    // Login tokens (m.login.token)
    async createLoginToken(tokenHash, userId, expiryTs) {
        await this.db.loginToken.create({ data: { tokenHash, userId, expiryTs: BigInt(expiryTs) } });
    }
    /** Marks the token used and returns its user, or null if unknown, expired or already used. */
    async consumeLoginToken(tokenHash, now) {
        const r = await this.db.loginToken.updateMany({ where: { tokenHash, used: false, expiryTs: { gt: BigInt(now) } }, data: { used: true } });
        if (r.count === 0)
            return null;
        const t = await this.db.loginToken.findFirst({ where: { tokenHash }, select: { userId: true } });
        return t?.userId ?? null;
    }
}
