export class SsoStore {
    db;
    constructor(db) {
        this.db = db;
    }
    async userForExternalId(authProvider, externalId) {
        const r = await this.db.userExternalId.findUnique({ where: { authProvider_externalId: { authProvider, externalId } } });
        return r?.userId ?? null;
    }
    async providersOfUser(userId) {
        return (await this.db.userExternalId.findMany({ where: { userId }, select: { authProvider: true } })).map((r) => r.authProvider);
    }
    async externalIdsOfUser(userId) {
        return this.db.userExternalId.findMany({ where: { userId }, select: { authProvider: true, externalId: true }, orderBy: [{ authProvider: "asc" }, { externalId: "asc" }] });
    }
    async unlinkExternalId(authProvider, externalId, userId) {
        await this.db.userExternalId.deleteMany({ where: { authProvider, externalId, userId } });
    }
    async linkExternalId(authProvider, externalId, userId) {
        await this.db.userExternalId.create({ data: { authProvider, externalId, userId } });
    }
    async createSession(row) {
        await this.db.ssoSession.create({ data: { ...row, createdTs: BigInt(row.createdTs) } });
    }
    /** Deletes and returns the attempt: a state serves one callback. */
    async takeSession(stateHash) {
        const r = await this.db.ssoSession.findUnique({ where: { stateHash } });
        if (!r)
            return null;
        const { count } = await this.db.ssoSession.deleteMany({ where: { stateHash } });
        if (count === 0)
            return null; // a concurrent callback took it first
        return { ...r, createdTs: Number(r.createdTs) };
    }
    async deleteSessionsBefore(ts) {
        await this.db.ssoSession.deleteMany({ where: { createdTs: { lt: BigInt(ts) } } });
    }
}
