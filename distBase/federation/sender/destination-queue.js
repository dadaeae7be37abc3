import { afterFailure, afterSuccess, isDown, retryAt, upState } from "./backoff.js";
import { EduBuffer } from "./edu-buffer.js";
import { MAX_EDUS_PER_TRANSACTION, MAX_PDUS_PER_TRANSACTION, pdusOf, sendTransaction } from "./transaction.js";
/**
 * How many queued PDUs of one room a destination that was down is sent when it comes back: the newest
 * this many, all in order (Synapse's catch-up sends only the newest event of each room; Weft sends more,
 * so a short outage loses nothing, and bounds what a long one leaves queued).
 */
export const CATCH_UP_KEEP_PER_ROOM = 200;
export class DestinationQueue {
    c;
    destination;
    edus;
    state;
    running;
    again = false;
    timer;
    /** Transactions sent since this process started (tests and metrics). */
    sent = 0;
    constructor(c, destination) {
        this.c = c;
        this.destination = destination;
        this.edus = new EduBuffer(() => c.s.clock.now());
    }
    /** The backoff state (undefined until first read from storage). */
    get current() {
        return this.state;
    }
    get busy() {
        return this.running !== undefined;
    }
    /** Something was queued (or the destination may be back): send what is there, unless backing off. */
    wake() {
        if (this.c.stopped)
            return;
        if (this.running) {
            this.again = true;
            return;
        }
        this.running = this.run()
            .catch((err) => this.c.s.log.error({ err, destination: this.destination }, "the federation sender loop failed"))
            .finally(() => {
            this.running = undefined;
            if (this.again) {
                this.again = false;
                this.wake();
            }
        });
    }
    /** The destination contacted us: it is up. Resets the backoff and sends what waits. */
    async markUp() {
        const state = await this.load();
        if (!isDown(state))
            return;
        this.cancelTimer();
        await this.recordSuccess(state, "it contacted us");
        this.wake();
    }
    /** Waits for the transaction in flight, if any (shutdown). */
    async idle() {
        this.cancelTimer();
        await this.running;
    }
    cancelTimer() {
        if (this.timer)
            clearTimeout(this.timer);
        this.timer = undefined;
    }
    /** Sets the state read at start-up. */
    prime(row) {
        this.state ??= row;
    }
    async load() {
        this.state ??= (await this.c.store.getDestination(this.destination)) ?? upState(this.destination);
        return this.state;
    }
    schedule(delayMs) {
        this.cancelTimer();
        this.timer = setTimeout(() => {
            this.timer = undefined;
            this.wake();
        }, Math.max(0, delayMs));
        this.timer.unref();
    }
    async recordSuccess(state, why) {
        const now = this.c.s.clock.now();
        if (isDown(state)) {
            this.c.s.log.info({ destination: this.destination, downForMs: now - (state.failureTs ?? now), why }, "federation destination is back up: sending what waited");
            this.state = afterSuccess(state, now);
            await this.c.store.saveDestination(this.state);
        }
        else {
            this.state = afterSuccess(state, now);
        }
    }
    async run() {
        const { s, store } = this.c;
        let state = await this.load();
        let trimmed = false;
        for (;;) {
            if (this.c.stopped)
                return;
            if (isDown(state)) {
                const wait = retryAt(state) - s.clock.now();
                if (wait > 0)
                    return this.schedule(wait);
                if (!trimmed) {
                    trimmed = true;
                    const dropped = await store.trim(CATCH_UP_KEEP_PER_ROOM, [this.destination]);
                    if (dropped > 0)
                        s.log.info({ destination: this.destination, dropped, keptPerRoom: CATCH_UP_KEEP_PER_ROOM }, "catching up: older queued PDUs dropped");
                }
            }
            const rows = await store.next(this.destination, MAX_PDUS_PER_TRANSACTION);
            // Durable EDUs first (in the order queued), then what the in-memory buffer holds, 100 in all.
            const durable = await store.nextEdus(this.destination, MAX_EDUS_PER_TRANSACTION);
            const taken = this.edus.take(MAX_EDUS_PER_TRANSACTION - durable.length);
            const edus = [...durable.map(({ edu_type, content }) => ({ edu_type, content })), ...taken.edus];
            if (rows.length === 0 && edus.length === 0)
                return;
            const pdus = await pdusOf(s, rows);
            const outcome = pdus.length === 0 && edus.length === 0
                ? { kind: "delivered" } // only events that no longer exist: nothing to send
                : await sendTransaction(s, this.destination, this.c.nextTxnId(), pdus, edus, this.c.signal);
            if (outcome.kind === "failed") {
                this.edus.restore(taken);
                if (this.c.stopped)
                    return; // aborted by shutdown: not the destination's fault
                const now = s.clock.now();
                const wasDown = isDown(state);
                state = this.state = afterFailure(state, now, s.config.federation);
                await store.saveDestination(state);
                const log = { destination: this.destination, reason: outcome.reason, retryInMs: state.retryInterval, queuedPdus: rows.length, queuedEdus: durable.length };
                if (!wasDown)
                    s.log.warn(log, "federation destination is down: its queue waits");
                else
                    s.log.debug(log, "federation destination still down");
                return this.schedule(state.retryInterval);
            }
            this.sent++;
            if (outcome.kind === "refused")
                s.log.warn({ destination: this.destination, reason: outcome.reason, pdus: rows.length, edus: edus.length }, "the destination refused a transaction: dropped");
            await store.remove(this.destination, rows.map((r) => r.streamOrdering));
            await store.removeEdus(this.destination, durable.map((e) => e.id));
            await this.recordSuccess(state, "a transaction went through");
            state = this.state;
        }
    }
}
