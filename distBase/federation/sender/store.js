const toRow = (r) => ({
    destination: r.destination,
    retryLastTs: Number(r.retry_last_ts),
    retryInterval: Number(r.retry_interval),
    failureTs: r.failure_ts === null ? null : Number(r.failure_ts),
    lastSuccessTs: r.last_success_ts === null ? null : Number(r.last_success_ts),
});
const marks = (n) => Array.from({ length: n }, () => "?").join(",");
export class SenderStore {
    sql;
    constructor(sql) {
        this.sql = sql;
    }
    /** Adds PDUs to their destinations' queues (in the consumer's transaction); a row already queued is kept. */
    async enqueue(tx, rows) {
        for (let i = 0; i < rows.length; i += 200) {
            const chunk = rows.slice(i, i + 200);
            await tx.run(`INSERT INTO federation_outbound_pdus (destination, stream_ordering, room_id, event_id) VALUES ${chunk.map(() => "(?, ?, ?, ?)").join(", ")}
         ON CONFLICT (destination, stream_ordering) DO NOTHING`, chunk.flatMap((r) => [r.destination, r.streamOrdering, r.roomId, r.eventId]));
        }
    }
    /** The oldest `limit` PDUs queued for `destination`, in stream order. */
    async next(destination, limit) {
        const rows = await this.sql.all(`SELECT stream_ordering, room_id, event_id FROM federation_outbound_pdus WHERE destination = ? ORDER BY stream_ordering LIMIT ?`, [destination, limit]);
        return rows.map((r) => ({ destination, streamOrdering: Number(r.stream_ordering), roomId: r.room_id, eventId: r.event_id }));
    }
    /** Drops sent (or refused) PDUs from a destination's queue. */
    async remove(destination, streamOrderings) {
        if (streamOrderings.length === 0)
            return;
        await this.sql.run(`DELETE FROM federation_outbound_pdus WHERE destination = ? AND stream_ordering IN (${marks(streamOrderings.length)})`, [destination, ...streamOrderings]);
    }
    /**
     * Keeps only the newest `keep` queued PDUs of each room for `destinations` (every destination when
     * undefined): what a long outage may leave queued. Returns how many were dropped.
     */
    async trim(keep, destinations) {
        if (destinations && destinations.length === 0)
            return 0;
        const where = destinations ? `WHERE destination IN (${marks(destinations.length)})` : "";
        return this.sql.run(`DELETE FROM federation_outbound_pdus WHERE (destination, stream_ordering) IN (
         SELECT destination, stream_ordering FROM (
           SELECT destination, stream_ordering, ROW_NUMBER() OVER (PARTITION BY destination, room_id ORDER BY stream_ordering DESC) AS n
           FROM federation_outbound_pdus ${where}
         ) ranked WHERE n > ?)`, [...(destinations ?? []), keep]);
    }
    /** Queues one EDU for each of `destinations` (in the producer's transaction). */
    async enqueueEdu(tx, destinations, edu, now) {
        const content = JSON.stringify(edu.content);
        for (let i = 0; i < destinations.length; i += 200) {
            const chunk = destinations.slice(i, i + 200);
            await tx.run(`INSERT INTO federation_outbound_edus (destination, edu_type, content, created_ts) VALUES ${chunk.map(() => "(?, ?, ?, ?)").join(", ")}`, chunk.flatMap((d) => [d, edu.edu_type, content, now]));
        }
    }
    /** The oldest `limit` durable EDUs queued for `destination`, in the order they were queued. */
    async nextEdus(destination, limit) {
        if (limit <= 0)
            return [];
        const rows = await this.sql.all(`SELECT id, edu_type, content FROM federation_outbound_edus WHERE destination = ? ORDER BY id LIMIT ?`, [destination, limit]);
        return rows.map((r) => ({ id: Number(r.id), edu_type: r.edu_type, content: JSON.parse(r.content) }));
    }
    /** Drops delivered (or refused) durable EDUs. */
    async removeEdus(destination, ids) {
        if (ids.length === 0)
            return;
        await this.sql.run(`DELETE FROM federation_outbound_edus WHERE destination = ? AND id IN (${marks(ids.length)})`, [destination, ...ids]);
    }
    /** How many durable EDUs are queued per destination (for `destinations`). */
    async eduQueueSizes(destinations) {
        if (destinations.length === 0)
            return new Map();
        const rows = await this.sql.all(`SELECT destination, COUNT(*) AS n FROM federation_outbound_edus WHERE destination IN (${marks(destinations.length)}) GROUP BY destination`, [...destinations]);
        return new Map(rows.map((r) => [r.destination, Number(r.n)]));
    }
    /** Destinations with something queued (PDUs or durable EDUs). */
    async destinationsWithQueue() {
        const rows = await this.sql.all(`SELECT destination FROM federation_outbound_pdus UNION SELECT destination FROM federation_outbound_edus`);
        return rows.map((r) => r.destination);
    }
    /** How many PDUs are queued per destination (for `destinations`, or all). */
    async queueSizes(destinations) {
        const where = destinations ? `WHERE destination IN (${marks(destinations.length)})` : "";
        if (destinations && destinations.length === 0)
            return new Map();
        const rows = await this.sql.all(`SELECT destination, COUNT(*) AS n FROM federation_outbound_pdus ${where} GROUP BY destination`, [...(destinations ?? [])]);
        return new Map(rows.map((r) => [r.destination, Number(r.n)]));
    }
    /** Destinations backing off now. */
    async downDestinations() {
        return (await this.sql.all(`SELECT * FROM federation_destinations WHERE retry_interval > 0`)).map(toRow);
    }
    async getDestination(destination) {
        const r = await this.sql.get(`SELECT * FROM federation_destinations WHERE destination = ?`, [destination]);
        return r ? toRow(r) : undefined;
    }
    /** A page of destinations by name (after `from`), and the total count. */
    async listDestinations(opts) {
        const params = [];
        const where = [];
        if (opts.from !== undefined) {
            where.push("destination > ?");
            params.push(opts.from);
        }
        if (opts.search) {
            where.push("LOWER(destination) LIKE ?");
            params.push(`%${opts.search.toLowerCase().replace(/[\\%_]/g, "")}%`);
        }
        const rows = await this.sql.all(`SELECT * FROM federation_destinations ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY destination LIMIT ?`, [...params, opts.limit]);
        return rows.map(toRow);
    }
    async countDestinations() {
        const r = await this.sql.get(`SELECT COUNT(*) AS n FROM federation_destinations`);
        return Number(r?.n ?? 0);
    }
    async saveDestination(d) {
        const vals = [d.retryLastTs, d.retryInterval, d.failureTs, d.lastSuccessTs];
        const changed = await this.sql.run(`UPDATE federation_destinations SET retry_last_ts = ?, retry_interval = ?, failure_ts = ?, last_success_ts = ? WHERE destination = ?`, [...vals, d.destination]);
        if (changed === 0)
            await this.sql.run(`INSERT INTO federation_destinations (retry_last_ts, retry_interval, failure_ts, last_success_ts, destination) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (destination) DO UPDATE SET retry_last_ts = excluded.retry_last_ts, retry_interval = excluded.retry_interval, failure_ts = excluded.failure_ts, last_success_ts = excluded.last_success_ts`, [...vals, d.destination]);
    }
}
