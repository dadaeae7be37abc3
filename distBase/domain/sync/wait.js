export class Waiter {
    notifier;
    userId;
    seen = [];
    wake;
    off;
    /** Rooms whose events concern the user (joined rooms); set once known, may be replaced. */
    rooms = new Set();
    constructor(notifier, userId) {
        this.notifier = notifier;
        this.userId = userId;
        this.off = notifier.onStream((n) => {
            this.seen.push(n);
            if (this.seen.length > 1000)
                this.seen.splice(0, 500);
            this.wake?.();
        });
    }
    /** Does a notice concern this user: their own id, one of their rooms, or everyone (neither given)? */
    concerns(n) {
        if (!n.userIds && !n.roomIds)
            return true;
        if (n.userIds?.includes(this.userId))
            return true;
        return n.roomIds?.some((r) => this.rooms.has(r)) ?? false;
    }
    pending(after) {
        return this.seen.some((n) => n.position > after[n.stream] && this.concerns(n));
    }
    /**
     * Resolves true when a relevant stream moves past `after`, false at the timeout or when any of
     * `signals` aborts (several signals are listened to directly: AbortSignal.any costs more per call).
     */
    until(after, timeoutMs, signals) {
        const list = signals === undefined ? [] : Array.isArray(signals) ? signals : [signals];
        if (this.pending(after))
            return Promise.resolve(true);
        if (timeoutMs <= 0 || list.some((x) => x.aborted))
            return Promise.resolve(false);
        return new Promise((resolve) => {
            const unpark = this.notifier.park();
            const done = (woken) => {
                unpark();
                clearTimeout(timer);
                for (const x of list)
                    x.removeEventListener("abort", onAbort);
                this.wake = undefined;
                resolve(woken);
            };
            const onAbort = () => done(false);
            const timer = setTimeout(() => done(false), timeoutMs);
            for (const x of list)
                x.addEventListener("abort", onAbort);
            this.wake = () => {
                if (this.pending(after))
                    done(true);
            };
        });
    }
    /** Forgets notices at or below `token` (after a read that covered them). */
    consumed(token) {
        for (let i = this.seen.length - 1; i >= 0; i--)
            if (this.seen[i].position <= token[this.seen[i].stream])
                this.seen.splice(i, 1);
    }
    dispose() {
        this.off();
        this.wake = undefined;
    }
}
