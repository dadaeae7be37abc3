const toQueued = (r) => ({
    id: Number(r.id),
    serviceId: r.service_id,
    kind: r.kind,
    ...(r.event_id !== null ? { eventId: r.event_id } : {}),
    ...(r.content !== null ? { content: r.content } : {}),
});
const marks = (n) => Array.from({ length: n }, () => "?").join(",");
/** Rows per multi-row INSERT (5 parameters each: well under SQLite's variable limit). */
const INSERT_CHUNK = 150;
export class AppServiceQueueStore {
    sql;
    constructor(sql) {
        this.sql = sql;
    }
    /** Appends items to their services' queues (inside the caller's transaction), keeping their order. */
    async enqueue(tx, items) {
        for (let i = 0; i < items.length; i += INSERT_CHUNK) {
            const chunk = items.slice(i, i + INSERT_CHUNK);
            const params = [];
            for (const it of chunk)
                params.push(it.serviceId, it.kind, it.eventId ?? null, it.content ?? null, null);
            await tx.run(`INSERT INTO appservice_queue (service_id, kind, event_id, content, txn_id) VALUES ${chunk.map(() => "(?, ?, ?, ?, ?)").join(", ")}`, params);
        }
    }
    /** The oldest transaction formed and not yet accepted, with its rows in order (a retry sends it again). */
    async formedTxn(serviceId) {
        const top = await this.sql.get(`SELECT MIN(txn_id) AS t FROM appservice_queue WHERE service_id = ? AND txn_id IS NOT NULL`, [serviceId]);
        if (top?.t === null || top?.t === undefined)
            return undefined;
        const txnId = Number(top.t);
        const rows = await this.sql.all(`SELECT id, service_id, kind, event_id, content FROM appservice_queue WHERE service_id = ? AND txn_id = ? ORDER BY id`, [serviceId, txnId]);
        return { txnId, rows: rows.map(toQueued) };
    }
    /**
     * Forms the next transaction from the oldest unsent rows (at most `limit` of each kind) under the next
     * txn id, in one database transaction; undefined when the queue is empty.
     */
    async formTxn(serviceId, limit) {
        return this.sql.transaction(async (tx) => {
            const picked = [];
            for (const kind of ["event", "ephemeral", "to_device"]) {
                picked.push(...(await tx.all(`SELECT id, service_id, kind, event_id, content FROM appservice_queue WHERE service_id = ? AND txn_id IS NULL AND kind = ? ORDER BY id LIMIT ?`, [serviceId, kind, limit])));
            }
            if (picked.length === 0)
                return undefined;
            const state = await tx.get(`SELECT last_txn_id FROM appservice_state WHERE service_id = ?`, [serviceId]);
            const txnId = Number(state?.last_txn_id ?? 0) + 1;
            if (state)
                await tx.run(`UPDATE appservice_state SET last_txn_id = ? WHERE service_id = ?`, [txnId, serviceId]);
            else
                await tx.run(`INSERT INTO appservice_state (service_id, last_txn_id) VALUES (?, ?)`, [serviceId, txnId]);
            const ids = picked.map((r) => Number(r.id));
            for (let i = 0; i < ids.length; i += 500) {
                const chunk = ids.slice(i, i + 500);
                await tx.run(`UPDATE appservice_queue SET txn_id = ? WHERE id IN (${marks(chunk.length)})`, [txnId, ...chunk]);
            }
            return { txnId, rows: picked.map(toQueued).sort((a, b) => a.id - b.id) };
        });
    }
    /** The service accepted the transaction: its rows leave the queue. */
    async complete(serviceId, txnId) {
        await this.sql.run(`DELETE FROM appservice_queue WHERE service_id = ? AND txn_id = ?`, [serviceId, txnId]);
    }
    /** How many items wait for the service (formed into a transaction or not). */
    async pending(serviceId) {
        const r = await this.sql.get(`SELECT COUNT(*) AS n FROM appservice_queue WHERE service_id = ?`, [serviceId]);
        return Number(r?.n ?? 0);
    }
}
