/** A stream's position allocator and its persisted-up-to position (see the module comment). */
export class StreamIdTracker {
    sql;
    opts;
    seed;
    seeded = false;
    seedValue = 0;
    /** Highest position allocated (SQLite's counter; on PostgreSQL the highest returned by the sequence). */
    allocated = 0;
    /** Highest position settled (committed or abandoned), or the seed. */
    settledMax = 0;
    /** Positions allocated and not yet settled; an entry is a lower bound while its nextval is under way. */
    inFlight = new Set();
    persisted = 0;
    held = [];
    constructor(sql, opts) {
        this.sql = sql;
        this.opts = opts;
    }
    seedOnce() {
        return (this.seed ??= this.sql.get(this.opts.seedSql).then((r) => {
            const m = Number(r?.m ?? 0);
            if (!this.seeded) {
                this.seeded = true;
                this.seedValue = m;
                this.allocated = Math.max(this.allocated, m);
                this.settledMax = Math.max(this.settledMax, m);
                this.persisted = Math.max(this.persisted, m);
            }
            return m;
        }));
    }
    /**
     * Allocates the next position inside transaction `tx` (which must offer `onSettled`: a transaction of
     * `sql.transaction`, or a Prisma one run through `runWithSettleHooks`). The position stays in flight,
     * holding the persisted position below it, until the transaction commits or rolls back.
     */
    async next(tx) {
        if (!tx.onSettled)
            throw new Error("stream positions must be allocated inside a transaction that reports when it settles");
        await this.seedOnce();
        // Registered before the sequence is asked: whatever it returns is above every position known now.
        const slot = { pos: this.allocated + 1 };
        this.inFlight.add(slot);
        let settled = false;
        tx.onSettled(() => {
            settled = true;
            this.settle(slot);
        });
        try {
            if (this.sql.dialect === "postgres") {
                slot.pos = Number((await tx.get(`SELECT nextval('${this.opts.sequence}') AS id`)).id);
            }
            else
                slot.pos = this.allocated + 1;
        }
        catch (err) {
            if (!settled)
                this.settle(slot);
            throw err;
        }
        if (slot.pos > this.allocated)
            this.allocated = slot.pos;
        return slot.pos;
    }
    /**
     * `n` positions at once, ascending (one query on PostgreSQL: a commit of many events asks once); each
     * is in flight until `tx` settles, as with `next`.
     */
    async nextMany(tx, n) {
        if (n === 1)
            return [await this.next(tx)];
        if (n === 0)
            return [];
        if (!tx.onSettled)
            throw new Error("stream positions must be allocated inside a transaction that reports when it settles");
        await this.seedOnce();
        const slots = Array.from({ length: n }, (_, i) => ({ pos: this.allocated + 1 + i }));
        for (const slot of slots)
            this.inFlight.add(slot);
        let settled = false;
        tx.onSettled(() => {
            settled = true;
            for (const slot of slots)
                this.settle(slot);
        });
        try {
            if (this.sql.dialect === "postgres") {
                const rows = await tx.all(`SELECT nextval('${this.opts.sequence}') AS id FROM generate_series(1, ?::int)`, [n]);
                const ids = rows.map((r) => Number(r.id)).sort((a, b) => a - b);
                ids.forEach((id, i) => (slots[i].pos = id));
            }
        }
        catch (err) {
            if (!settled)
                for (const slot of slots)
                    this.settle(slot);
            throw err;
        }
        const top = slots[n - 1].pos;
        if (top > this.allocated)
            this.allocated = top;
        return slots.map((s) => s.pos);
    }
    settle(slot) {
        if (!this.inFlight.delete(slot))
            return;
        if (slot.pos > this.settledMax)
            this.settledMax = slot.pos;
        let low = Infinity;
        for (const s of this.inFlight)
            if (s.pos < low)
                low = s.pos;
        const now = low === Infinity ? this.settledMax : Math.min(low - 1, this.settledMax);
        if (now <= this.persisted)
            return;
        this.persisted = now;
        if (this.held.length === 0)
            return;
        const ready = this.held.filter((h) => h.pos <= now);
        if (ready.length === 0)
            return;
        for (let i = this.held.length - 1; i >= 0; i--)
            if (this.held[i].pos <= now)
                this.held.splice(i, 1);
        ready.sort((a, b) => a.pos - b.pos);
        for (const h of ready)
            h.fn();
    }
    /** The persisted-up-to position: every position at or below it has committed or been abandoned. */
    async current() {
        if (!this.seeded)
            await this.seedOnce();
        return this.persisted;
    }
    /** The position the table started from (its maximum when first read); undefined before that read. */
    seedPosition() {
        return this.seeded ? this.seedValue : undefined;
    }
    /**
     * The highest position handed out so far (or the seed): every position allocated from now on is above
     * it, so its transaction settles later. Undefined before the first read of the table.
     */
    allocatedMax() {
        return this.seeded ? this.allocated : undefined;
    }
    /** `current()` without waiting; undefined before the first read of the table. */
    peek() {
        return this.seeded ? this.persisted : undefined;
    }
    whenPersisted(position, fn) {
        // Nothing can be in flight before the seed was read (allocations read it first).
        if (!this.seeded || position <= this.persisted)
            fn();
        else
            this.held.push({ pos: position, fn });
    }
}
/**
 * The allocator of `table.column` from `sequence` (PostgreSQL) or an in-process counter (SQLite), seeded
 * from the column's maximum, or from `seedSql` (returning `m`) when rows get deleted.
 */
export function idAllocator(sql, table, column, sequence, seedSql) {
    return new StreamIdTracker(sql, { sequence, seedSql: seedSql ?? `SELECT MAX(${column}) AS m FROM ${table}` });
}
