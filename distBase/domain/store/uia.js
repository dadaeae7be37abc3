export class UiaStore {
    db;
    constructor(db) {
        this.db = db;
    }
    async create(s) {
        await this.db.uiaSession.create({
            data: {
                sessionId: s.sessionId,
                createdTs: BigInt(s.createdTs),
                uri: s.uri,
                method: s.method,
                clientDict: JSON.stringify(s.clientDict),
                serverData: JSON.stringify(s.serverData),
                description: s.description,
            },
        });
    }
    async get(sessionId) {
        const r = await this.db.uiaSession.findFirst({ where: { sessionId } });
        if (!r)
            return null;
        return { ...r, createdTs: Number(r.createdTs), clientDict: JSON.parse(r.clientDict), serverData: JSON.parse(r.serverData) };
    }
    async setServerData(sessionId, serverData) {
        await this.db.uiaSession.update({ where: { sessionId }, data: { serverData: JSON.stringify(serverData) } });
    }
    async completedStages(sessionId) {
        const rows = await this.db.uiaCredential.findMany({ where: { sessionId } });
        return new Map(rows.map((r) => [r.stageType, JSON.parse(r.result)]));
    }
    async markStageCompleted(sessionId, stageType, result) {
        const data = JSON.stringify(result);
        await this.db.uiaCredential.upsert({
            where: { sessionId_stageType: { sessionId, stageType } },
            create: { sessionId, stageType, result: data },
            update: { result: data },
        });
    }
    async delete(sessionId) {
        await this.db.$transaction([
            this.db.uiaCredential.deleteMany({ where: { sessionId } }),
            this.db.uiaSession.deleteMany({ where: { sessionId } }),
        ]);
    }
    async deleteOlderThan(ts) {
        const old = await this.db.uiaSession.findMany({ where: { createdTs: { lt: BigInt(ts) } }, select: { sessionId: true } });
        const ids = old.map((o) => o.sessionId);
        if (ids.length === 0)
            return;
        await this.db.$transaction([
            this.db.uiaCredential.deleteMany({ where: { sessionId: { in: ids } } }),
            this.db.uiaSession.deleteMany({ where: { sessionId: { in: ids } } }),
        ]);
    }
}
