const toUser = (r) => ({ ...r, createdTs: Number(r.createdTs) });
export class UserStore {
    db;
    sql;
    constructor(db, sql) {
        this.db = db;
        this.sql = sql;
    }
    /** The account; read inside `tx` when given (a Prisma transaction). */
    async get(userId, tx) {
        if (tx) {
            const r = await tx.user.findFirst({ where: { userId } });
            return r ? toUser(r) : null;
        }
        const r = await this.sql.get(`SELECT user_id, password_hash, is_guest, is_admin, user_type, appservice_id, deactivated, erased, created_ts FROM users WHERE user_id = ?`, [userId]);
        return r
            ? {
                userId: r.user_id, passwordHash: r.password_hash, isGuest: Boolean(r.is_guest), isAdmin: Boolean(r.is_admin), userType: r.user_type,
                appserviceId: r.appservice_id, deactivated: Boolean(r.deactivated), erased: Boolean(r.erased), createdTs: Number(r.created_ts),
            }
            : null;
    }
    async exists(userId) {
        return (await this.db.user.count({ where: { userId } })) > 0;
    }
    async create(tx, u, now) {
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
    async setPasswordHash(tx, userId, passwordHash) {
        await tx.user.update({ where: { userId }, data: { passwordHash } });
    }
    /** A guest becomes a full user (POST /register with guest_access_token); false if it was no guest. */
    async upgradeGuest(tx, userId, passwordHash) {
        const n = await tx.user.updateMany({ where: { userId, isGuest: true }, data: { isGuest: false, passwordHash } });
        return n.count === 1;
    }
    async setAdmin(userId, isAdmin) {
        await this.db.user.update({ where: { userId }, data: { isAdmin } });
    }
    async markDeactivated(tx, userId, erased) {
        await tx.user.update({ where: { userId }, data: { deactivated: true, passwordHash: null, ...(erased ? { erased: true } : {}) } });
    }
    /** Which of `userIds` are erased (deactivated with erase). */
    async erasedAmong(userIds) {
        if (userIds.length === 0)
            return new Set();
        const rows = await this.sql.all(`SELECT user_id FROM users WHERE erased = ? AND user_id IN (${userIds.map(() => "?").join(", ")})`, [true, ...userIds]);
        return new Set(rows.map((r) => r.user_id));
    }
    async getProfile(userId) {
        return this.db.profile.findFirst({ where: { userId }, select: { displayname: true, avatarUrl: true } });
    }
    async setProfileField(tx, userId, field, value) {
        await tx.profile.upsert({ where: { userId }, create: { userId, [field]: value }, update: { [field]: value } });
    }
    /** Do the two users share a room in which both are joined? (for limit_profile_requests_to_users_who_share_rooms) */
    async shareARoom(a, b) {
        const rooms = await this.db.roomMembership.findMany({ where: { userId: a, membership: "join" }, select: { roomId: true } });
        if (rooms.length === 0)
            return false;
        const n = await this.db.roomMembership.count({
            where: { userId: b, membership: "join", roomId: { in: rooms.map((r) => r.roomId) } },
        });
        return n > 0;
    }
}
