const toRow = (r) => ({
    ...r,
    expiryTime: r.expiryTime === null ? null : Number(r.expiryTime),
});
export class RegistrationTokenStore {
    db;
    constructor(db) {
        this.db = db;
    }
    async get(token) {
        const r = await this.db.registrationToken.findFirst({ where: { token } });
        return r && toRow(r);
    }
    async list() {
        return (await this.db.registrationToken.findMany({ orderBy: { token: "asc" } })).map(toRow);
    }
    async create(t) {
        return toRow(await this.db.registrationToken.create({
            data: { token: t.token, usesAllowed: t.usesAllowed, expiryTime: t.expiryTime === null ? null : BigInt(t.expiryTime) },
        }));
    }
    async update(token, patch) {
        const data = {};
        if (patch.usesAllowed !== undefined)
            data.usesAllowed = patch.usesAllowed;
        if (patch.expiryTime !== undefined)
            data.expiryTime = patch.expiryTime === null ? null : BigInt(patch.expiryTime);
        const r = await this.db.registrationToken.updateMany({ where: { token }, data });
        return r.count ? this.get(token) : null;
    }
    async delete(token) {
        return (await this.db.registrationToken.deleteMany({ where: { token } })).count > 0;
    }
    /** A token is usable while unexpired and its pending plus completed uses are below uses_allowed. */
    static isValid(t, now) {
        if (!t)
            return false;
        if (t.expiryTime !== null && t.expiryTime <= now)
            return false;
        if (t.usesAllowed !== null && t.pending + t.completed >= t.usesAllowed)
            return false;
        return true;
    }
    async addPending(token) {
        await this.db.registrationToken.update({ where: { token }, data: { pending: { increment: 1 } } });
    }
    /** A registration that passed the token stage finished: its pending use becomes a completed one. */
    async completeUse(tx, token) {
        await tx.registrationToken.updateMany({ where: { token }, data: { pending: { decrement: 1 }, completed: { increment: 1 } } });
    }
}
