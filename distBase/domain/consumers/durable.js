const STREAM = "events";
const RETRY_FIRST_MS = 50;
const RETRY_MAX_MS = 30_000;
/** How long a replayable consumer's position may stay ahead of the stored one (see `replayable`). */
const IDLE_PERSIST_MS = 1_000;
/**
 * The executor a replayable consumer handles a batch with, outside any transaction: reads go straight to
 * storage (the events and their state do not change), writes and settle callbacks are recorded, to be
 * replayed in one transaction with the new position — or, when there are none, not to open one at all.
 */
class WriteRecorder {
    sql;
    writes = [];
    settled = [];
    constructor(sql) {
        this.sql = sql;
    }
    get dialect() {
        return this.sql.dialect;
    }
    /** Recorded, not run: a replayable handler never reads what its writes return (the count is 0). */
    async run(sql, params) {
        this.writes.push([sql, params]);
        return 0;
    }
    all(sql, params) {
        return this.sql.all(sql, params);
    }
    get(sql, params) {
        return this.sql.get(sql, params);
    }
    onSettled(fn) {
        this.settled.push(fn);
    }
}
/** One consumer's loop: its position, its backlog, and the one batch it may be handling. */
class ConsumerLoop {
    s;
    consumer;
    /** Handled up to here (undefined until read from storage). */
    position;
    /** Stored up to here (below `position` while a replayable consumer's effect-free batches are unsaved). */
    stored;
    persistTimer;
    /** Offered events not yet handled, by position. */
    backlog = [];
    /** Positions allocated from here on reach `offer` (Infinity until started). */
    startedFrom = Infinity;
    /** The highest position dropped from the full backlog. */
    droppedUpTo = -Infinity;
    running;
    again = false;
    failures = 0;
    retry;
    stopped = false;
    batchSize;
    backlogSize;
    constructor(s, consumer) {
        this.s = s;
        this.consumer = consumer;
        this.batchSize = Math.max(1, consumer.batchSize ?? 100);
        this.backlogSize = Math.max(1, consumer.backlog ?? 1000);
    }
    async start() {
        const ids = this.s.rooms.events.streamIds;
        const current = await ids.current();
        // Positions handed out from now on settle later, and their commits reach `offer`.
        this.startedFrom = ids.allocatedMax() ?? current;
        let pos = await this.s.consumerPositions.get(this.consumer.name, STREAM);
        if (pos === undefined) {
            pos = this.consumer.startAt === "beginning" ? 0 : current;
            const start = pos;
            await this.s.storage.sql.transaction((tx) => this.s.consumerPositions.set(tx, this.consumer.name, STREAM, start));
        }
        this.position = pos;
        this.stored = pos;
        this.dropHandled();
        this.kick();
    }
    /** A commit settled: keep its events (bounded) and wake up once its position is persisted. */
    offer(c) {
        if (this.stopped)
            return;
        for (const e of c.events) {
            if (this.position !== undefined && e.streamOrdering <= this.position)
                continue;
            let i = this.backlog.length;
            while (i > 0 && this.backlog[i - 1].streamOrdering > e.streamOrdering)
                i--;
            this.backlog.splice(i, 0, e);
        }
        if (this.backlog.length > this.backlogSize) {
            const dropped = this.backlog.splice(0, this.backlog.length - this.backlogSize);
            this.droppedUpTo = Math.max(this.droppedUpTo, dropped[dropped.length - 1].streamOrdering);
        }
        this.s.rooms.events.streamIds.whenPersisted(c.notice.position, () => this.kick());
    }
    kick() {
        if (this.stopped || this.position === undefined || this.retry)
            return;
        if (this.running) {
            this.again = true;
            return;
        }
        this.running = this.run().finally(() => {
            this.running = undefined;
            if (this.again) {
                this.again = false;
                this.kick();
            }
        });
    }
    dropHandled() {
        const pos = this.position ?? -Infinity;
        let n = 0;
        while (n < this.backlog.length && this.backlog[n].streamOrdering <= pos)
            n++;
        if (n > 0)
            this.backlog.splice(0, n);
    }
    /** Every committed event above this position is in the backlog (or handled). */
    get completeFrom() {
        return Math.max(this.startedFrom, this.droppedUpTo);
    }
    /** The next events after the position (at most a batch), and the position that handling them reaches. */
    async nextBatch(target) {
        const pos = this.position;
        if (pos >= this.completeFrom) {
            const events = [];
            for (const e of this.backlog) {
                if (e.streamOrdering > target)
                    break;
                if (events.length === this.batchSize)
                    return { events, end: events[events.length - 1].streamOrdering };
                events.push(e);
            }
            return { events, end: target };
        }
        const upTo = Math.min(target, this.completeFrom);
        const events = await this.s.rooms.events.streamAfter(pos, upTo, this.batchSize);
        return { events, end: events.length === this.batchSize ? events[events.length - 1].streamOrdering : upTo };
    }
    async run() {
        try {
            for (;;) {
                if (this.stopped)
                    return;
                const target = await this.s.rooms.events.streamIds.current();
                if (this.position >= target)
                    return;
                const { events, end } = await this.nextBatch(target);
                if (events.length > 0 && this.consumer.replayable)
                    await this.handleReplayable(events, end);
                else if (events.length > 0) {
                    await this.s.storage.sql.transaction(async (tx) => {
                        await this.consumer.handle(tx, events, this.s);
                        await this.s.consumerPositions.set(tx, this.consumer.name, STREAM, end);
                    });
                    this.stored = end;
                }
                this.position = end;
                this.failures = 0;
                this.dropHandled();
            }
        }
        catch (err) {
            this.failures++;
            const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (this.failures - 1));
            this.s.log.warn({ err, consumer: this.consumer.name, position: this.position, retryInMs: delay }, "a durable consumer failed; retrying");
            if (this.stopped)
                return;
            this.retry = setTimeout(() => {
                this.retry = undefined;
                this.kick();
            }, delay);
            this.retry.unref();
        }
    }
    /**
     * A replayable consumer's batch: handled outside a transaction; what it writes is then written in one
     * transaction with the position. A batch that wrote nothing commits nothing: its position is stored later.
     */
    async handleReplayable(events, end) {
        const rec = new WriteRecorder(this.s.storage.sql);
        await this.consumer.handle(rec, events, this.s);
        if (rec.writes.length === 0 && rec.settled.length === 0) {
            this.schedulePersist();
            return;
        }
        await this.s.storage.sql.transaction(async (tx) => {
            for (const [sql, params] of rec.writes)
                await tx.run(sql, params);
            await this.s.consumerPositions.set(tx, this.consumer.name, STREAM, end);
            for (const fn of rec.settled)
                tx.onSettled(fn);
        });
        this.stored = end;
    }
    schedulePersist() {
        if (this.persistTimer || this.stopped)
            return;
        this.persistTimer = setTimeout(() => {
            this.persistTimer = undefined;
            void this.persistPosition().catch((err) => this.s.log.warn({ err, consumer: this.consumer.name }, "storing a durable consumer's position failed"));
        }, IDLE_PERSIST_MS);
        this.persistTimer.unref();
    }
    /** Stores the handled position when it is ahead of the stored one (replayable consumers). */
    async persistPosition() {
        const pos = this.position;
        if (pos === undefined || this.stored === undefined || pos <= this.stored)
            return;
        await this.s.storage.sql.transaction((tx) => this.s.consumerPositions.set(tx, this.consumer.name, STREAM, pos));
        if (this.stored === undefined || pos > this.stored)
            this.stored = pos;
    }
    async stop() {
        this.stopped = true;
        if (this.retry)
            clearTimeout(this.retry);
        this.retry = undefined;
        if (this.persistTimer)
            clearTimeout(this.persistTimer);
        this.persistTimer = undefined;
        await this.running;
        await this.persistPosition().catch((err) => this.s.log.warn({ err, consumer: this.consumer.name }, "storing a durable consumer's position failed"));
    }
    get handledUpTo() {
        return this.position;
    }
}
/** Runs the declared durable consumers: started with the server, stopped before storage closes. */
export class ConsumerRunner {
    loops;
    constructor(s, consumers) {
        const names = new Set();
        for (const c of consumers) {
            if (names.has(c.name))
                throw new Error(`two durable consumers are named ${c.name}`);
            names.add(c.name);
        }
        this.loops = consumers.map((c) => new ConsumerLoop(s, c));
    }
    async start() {
        for (const loop of this.loops)
            await loop.start();
    }
    /** The commit listener that wakes every consumer (in-memory; never waits). */
    offer(c) {
        for (const loop of this.loops)
            loop.offer(c);
    }
    /** Where a consumer has got to in this process (undefined before it started). */
    positionOf(name) {
        return this.loops.find((l) => l.consumer.name === name)?.handledUpTo;
    }
    async stop() {
        await Promise.all(this.loops.map((l) => l.stop()));
    }
}
