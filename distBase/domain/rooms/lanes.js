// Per-room lanes: writes to one room run one after another (their prev_events, depth and state depend on
// the previous write); different rooms run concurrently. One process owns a room's writes, as Synapse's
// event persisters do, so an in-process queue is the whole mechanism.
export class KeyedLanes {
    tails = new Map();
    run(key, fn) {
        const prev = this.tails.get(key) ?? Promise.resolve();
        const next = prev.then(fn, fn);
        const tail = next.catch(() => { });
        this.tails.set(key, tail);
        void tail.then(() => {
            if (this.tails.get(key) === tail)
                this.tails.delete(key);
        });
        return next;
    }
}
