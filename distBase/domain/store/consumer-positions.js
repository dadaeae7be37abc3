export class ConsumerPositionStore {
    sql;
    constructor(sql) {
        this.sql = sql;
    }
    async get(consumer, stream) {
        const r = await this.sql.get(`SELECT position FROM stream_consumer_positions WHERE consumer = ? AND stream = ?`, [consumer, stream]);
        return r ? Number(r.position) : undefined;
    }
    async set(tx, consumer, stream, position) {
        await tx.run(`INSERT INTO stream_consumer_positions (consumer, stream, position) VALUES (?, ?, ?)
       ON CONFLICT (consumer, stream) DO UPDATE SET position = excluded.position`, [consumer, stream, position]);
    }
}
