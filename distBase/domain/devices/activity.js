export class DeviceActivity {
    store;
    log;
    intervalMs;
    pending = new Map();
    timer;
    flushing = Promise.resolve();
    constructor(store, log, intervalMs = 5000) {
        this.store = store;
        this.log = log;
        this.intervalMs = intervalMs;
    }
    record(seen) {
        this.pending.set(`${seen.userId}\u0000${seen.deviceId}`, seen);
        this.timer ??= setTimeout(() => void this.flush(), this.intervalMs).unref();
    }
    /** What was seen but not yet written, so reads can show it at once. */
    peek(userId, deviceId) {
        return this.pending.get(`${userId}\u0000${deviceId}`);
    }
    forget(userId, deviceIds) {
        for (const [k, v] of this.pending)
            if (v.userId === userId && (!deviceIds || deviceIds.includes(v.deviceId)))
                this.pending.delete(k);
    }
    flush() {
        clearTimeout(this.timer);
        this.timer = undefined;
        const batch = [...this.pending.values()];
        this.pending = new Map();
        this.flushing = this.flushing.then(() => this.store.recordLastSeen(batch).catch((err) => this.log.warn({ err }, "could not record device activity")));
        return this.flushing;
    }
    async stop() {
        await this.flush();
    }
}
