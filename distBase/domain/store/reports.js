export class ReportStore {
    db;
    constructor(db) {
        this.db = db;
    }
    async add(r) {
        const row = await this.db.contentReport.create({
            data: { receivedTs: BigInt(r.receivedTs), roomId: r.roomId, eventId: r.eventId, userId: r.userId, reason: r.reason, score: r.score },
        });
        return row.id;
    }
    async list(q) {
        const where = {
            eventId: q.events ? { not: null } : null,
            ...(q.roomId !== undefined ? { roomId: q.roomId } : {}),
            ...(q.userId !== undefined ? { userId: q.userId } : {}),
        };
        const [rows, total] = await Promise.all([
            this.db.contentReport.findMany({ where, orderBy: [{ receivedTs: q.dir === "b" ? "desc" : "asc" }, { id: q.dir === "b" ? "desc" : "asc" }], skip: q.offset, take: q.limit }),
            this.db.contentReport.count({ where }),
        ]);
        return {
            total,
            reports: rows.map((x) => ({ id: x.id, receivedTs: Number(x.receivedTs), roomId: x.roomId, eventId: x.eventId, userId: x.userId, reason: x.reason, score: x.score })),
        };
    }
}
