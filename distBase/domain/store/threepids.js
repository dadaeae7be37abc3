const toSession = (r) => ({
    ...r,
    tokenExpiryTs: Number(r.tokenExpiryTs),
    validatedAt: r.validatedAt === null ? null : Number(r.validatedAt),
    createdTs: Number(r.createdTs),
});
export class ThreepidStore {
    db;
    constructor(db) {
        this.db = db;
    }
    async ofUser(userId) {
        const rows = await this.db.userThreepid.findMany({ where: { userId }, orderBy: [{ medium: "asc" }, { address: "asc" }] });
        return rows.map((r) => ({ ...r, validatedAt: Number(r.validatedAt), addedAt: Number(r.addedAt) }));
    }
    async owner(medium, address) {
        return (await this.db.userThreepid.findUnique({ where: { medium_address: { medium, address } } }))?.userId ?? null;
    }
    async add(tx, row) {
        await tx.userThreepid.create({ data: { ...row, validatedAt: BigInt(row.validatedAt), addedAt: BigInt(row.addedAt) } });
    }
    async remove(userId, medium, address) {
        return (await this.db.userThreepid.deleteMany({ where: { userId, medium, address } })).count > 0;
    }
    async idServers(userId, medium, address) {
        return (await this.db.userThreepidIdServer.findMany({ where: { userId, medium, address } })).map((r) => r.idServer);
    }
    async recordIdServer(userId, medium, address, idServer) {
        const key = { userId, medium, address, idServer };
        await this.db.userThreepidIdServer.upsert({ where: { userId_medium_address_idServer: key }, create: key, update: {} });
    }
    async forgetIdServer(userId, medium, address, idServer) {
        await this.db.userThreepidIdServer.deleteMany({ where: { userId, medium, address, idServer } });
    }
    // Validation sessions
    async sessionFor(clientSecretHash, medium, address, purpose) {
        const r = await this.db.threepidValidationSession.findFirst({ where: { clientSecretHash, medium, address, purpose } });
        return r && toSession(r);
    }
    async session(sessionId) {
        const r = await this.db.threepidValidationSession.findUnique({ where: { sessionId } });
        return r && toSession(r);
    }
    async sessionByToken(tokenHash) {
        const r = await this.db.threepidValidationSession.findUnique({ where: { tokenHash } });
        return r && toSession(r);
    }
    async createSession(row) {
        await this.db.threepidValidationSession.create({
            data: { ...row, tokenExpiryTs: BigInt(row.tokenExpiryTs), validatedAt: row.validatedAt === null ? null : BigInt(row.validatedAt), createdTs: BigInt(row.createdTs) },
        });
    }
    async newToken(sessionId, tokenHash, tokenExpiryTs, sendAttempt, nextLink) {
        await this.db.threepidValidationSession.update({
            where: { sessionId },
            data: { tokenHash, tokenExpiryTs: BigInt(tokenExpiryTs), lastSendAttempt: sendAttempt, nextLink },
        });
    }
    /** Marks the session validated and spends its token. */
    async markValidated(sessionId, now) {
        await this.db.threepidValidationSession.update({ where: { sessionId }, data: { validatedAt: BigInt(now), tokenHash: null } });
    }
    /** A validated session serves one use (adding the address, one registration, one password reset). */
    async deleteSession(sessionId) {
        await this.db.threepidValidationSession.deleteMany({ where: { sessionId } });
    }
    async deleteSessionsBefore(ts) {
        await this.db.threepidValidationSession.deleteMany({ where: { createdTs: { lt: BigInt(ts) } } });
    }
}
