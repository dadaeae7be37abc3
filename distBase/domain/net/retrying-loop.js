// The machinery every outbound delivery queue shares (push gateways, application services): one run at a
// time, woken by `kick()`; a retry timer while the peer is failing (no run until it fires); and a stop that
// lets a request in flight finish for a grace period before aborting it. Subclasses say what a run does
// and whether more work arrived meanwhile.
export class RetryingLoop {
    running;
    timer;
    stopped = false;
    abort = new AbortController();
    get backingOff() {
        return this.timer !== undefined;
    }
    kick() {
        if (this.running || this.timer || this.stopped)
            return;
        this.running = this.run()
            .catch((err) => this.failed(err))
            .finally(() => {
            this.running = undefined;
            if (this.hasWork())
                this.kick();
        });
    }
    /** No run before `ms` have passed; then one runs. */
    retryAfter(ms) {
        if (this.stopped)
            return;
        this.timer = setTimeout(() => {
            this.timer = undefined;
            this.kick();
        }, ms);
        this.timer.unref();
    }
    /** Ends the backoff now (the peer is known to be back). */
    cancelRetry() {
        if (this.timer)
            clearTimeout(this.timer);
        this.timer = undefined;
    }
    async stop(graceMs) {
        this.stopped = true;
        this.cancelRetry();
        const running = this.running;
        if (!running)
            return;
        const grace = setTimeout(() => this.abort.abort(), graceMs);
        await running;
        clearTimeout(grace);
    }
}
