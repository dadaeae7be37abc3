export class NonceStore {
    db;
    constructor(db) {
        this.db = db;
    }
    async create(nonce, now) {
        await this.db.registrationNonce.create({ data: { nonce, createdTs: BigInt(now) } });
    }
    /** Deletes the nonce and says whether it existed and was younger than `maxAgeMs`. */
    async consume(nonce, now, maxAgeMs) {
        await this.db.registrationNonce.deleteMany({ where: { createdTs: { lt: BigInt(now - maxAgeMs) } } });
        return (await this.db.registrationNonce.deleteMany({ where: { nonce } })).count > 0;
    }
}
