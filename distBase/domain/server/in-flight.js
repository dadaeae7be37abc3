// Requests being handled right now, so that shutdown can wait for them before it closes storage
// (a handler still querying a closed database pool would answer 500 on its way out).
export class InFlight {
    running = new Set();
    /** Set when shutdown begins: answers still to come close their connection behind them. */
    draining = false;
    /** Runs `fn`, remembering it until it settles. */
    track(fn) {
        const p = fn();
        this.running.add(p);
        const done = () => this.running.delete(p);
        p.then(done, done);
        return p;
    }
    get size() {
        return this.running.size;
    }
    /** Resolves once everything tracked so far has settled (never rejects). */
    async idle() {
        while (this.running.size > 0)
            await Promise.allSettled([...this.running]);
    }
}
