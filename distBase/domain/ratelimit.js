// Token-bucket rate limiting with Synapse's `{per_second, burst_count}` settings (rc_login, rc_registration,
// rc_message ...). Over the limit is M_LIMIT_EXCEEDED with retry_after_ms; the REST face adds Retry-After.
// Buckets are bounded: a full bucket is the same as none, so buckets that have refilled are dropped, and
// past `maxBuckets` (many distinct keys: user names tried at login, addresses) the oldest go first.
import { limitExceeded } from "./errors.js";
export class RateLimiter {
    now;
    maxBuckets;
    buckets = new Map();
    sweeps = 0;
    constructor(now = Date.now, maxBuckets = 100_000) {
        this.now = now;
        this.maxBuckets = maxBuckets;
    }
    /** Takes one action from `key`'s bucket, or throws M_LIMIT_EXCEEDED. `update: false` only checks. */
    check(key, limit, { update = true, cost = 1 } = {}) {
        if (limit.per_second <= 0 && limit.burst_count <= 0)
            return;
        const now = this.now();
        const bucket = this.refill(key, limit, now);
        if (bucket.tokens < cost) {
            const missing = cost - bucket.tokens;
            const retryMs = limit.per_second > 0 ? (missing / limit.per_second) * 1000 : 60_000;
            throw limitExceeded(retryMs);
        }
        if (update) {
            bucket.tokens -= cost;
            bucket.fullAt = fullAt(bucket, limit);
        }
        if (++this.sweeps % 1000 === 0 || this.buckets.size > this.maxBuckets)
            this.sweep(now);
    }
    /** Records an action without refusing it (e.g. a failed login counted against later attempts). */
    record(key, limit, cost = 1) {
        const bucket = this.refill(key, limit, this.now());
        bucket.tokens = Math.max(-limit.burst_count, bucket.tokens - cost);
        bucket.fullAt = fullAt(bucket, limit);
        if (this.buckets.size > this.maxBuckets)
            this.sweep(this.now());
    }
    reset(key) {
        this.buckets.delete(key);
    }
    refill(key, limit, now) {
        let bucket = this.buckets.get(key);
        if (!bucket) {
            bucket = { tokens: limit.burst_count, updated: now, fullAt: now };
            this.buckets.set(key, bucket);
        }
        else {
            bucket.tokens = Math.min(limit.burst_count, bucket.tokens + ((now - bucket.updated) / 1000) * limit.per_second);
            bucket.updated = now;
        }
        return bucket;
    }
    sweep(now) {
        for (const [k, b] of this.buckets)
            if (b.fullAt <= now)
                this.buckets.delete(k);
        // Still too many: the least recently created go (Map order), down to 90% so sweeps stay rare.
        if (this.buckets.size <= this.maxBuckets)
            return;
        const keep = Math.floor(this.maxBuckets * 0.9);
        for (const k of this.buckets.keys()) {
            if (this.buckets.size <= keep)
                break;
            this.buckets.delete(k);
        }
    }
    /** Buckets held (tests, metrics). */
    get size() {
        return this.buckets.size;
    }
}
function fullAt(b, limit) {
    if (b.tokens >= limit.burst_count)
        return b.updated;
    return limit.per_second > 0 ? b.updated + ((limit.burst_count - b.tokens) / limit.per_second) * 1000 : Number.POSITIVE_INFINITY;
}
