// Cache invalidation messages: a writer announces "user X's tokens changed" and every cache holder drops
// what it kept. In one process this is an in-memory fan-out; across workers it is bridged (PostgreSQL
// LISTEN/NOTIFY) by the worker setup, which subscribes here and republishes remote messages.
export class InvalidationBus {
    listeners = new Set();
    subscribe(fn) {
        this.listeners.add(fn);
        return () => this.listeners.delete(fn);
    }
    publish(m) {
        for (const fn of this.listeners)
            fn(m);
    }
}
