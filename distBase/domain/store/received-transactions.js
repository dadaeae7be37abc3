export class ReceivedTransactionStore {
    sql;
    constructor(sql) {
        this.sql = sql;
    }
    /** The answer stored for this transaction, if it was processed. */
    async response(origin, txnId) {
        const r = await this.sql.get(`SELECT response FROM received_transactions WHERE origin = ? AND txn_id = ?`, [origin, txnId]);
        return r ? JSON.parse(r.response) : undefined;
    }
    /** Records the answer of a processed transaction (a concurrent record of the same one is kept as is). */
    async record(origin, txnId, response, now) {
        const json = JSON.stringify(response);
        await this.sql.run(`INSERT INTO received_transactions (origin, txn_id, response, received_ts) VALUES (?, ?, ?, ?) ON CONFLICT (origin, txn_id) DO NOTHING`, [origin, txnId, json, now]);
    }
    /** Forgets transactions received before `before` (ms). Returns how many. */
    async expire(before) {
        return this.sql.run(`DELETE FROM received_transactions WHERE received_ts < ?`, [before]);
    }
}
