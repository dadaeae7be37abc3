// Bounded in-memory caches for hot reads (tokens, profiles, events, state) and the sizes of every other
// in-memory structure that grows with users, rooms or events. Sizes follow Synapse's
// `caches.global_factor` / `caches.per_cache_factors`; the event cache is sized by `event_cache_size`
// alone. A cache may also weigh its entries (an approximate byte size) and hold at most a weight budget,
// so a few huge entries cannot take what many small ones would. Invalidation goes through an
// InvalidationBus so several workers can share it.
/**
 * A least-recently-used cache: a Map from key to a node of a doubly linked recency list. A hit only
 * relinks the node; the Map changes on insert and eviction alone. (Re-inserting into a Map to keep its
 * insertion order as the recency order, the usual short cut, costs ~10 µs an operation in V8 at 10,000
 * entries: deleted slots pile up at the front of the table and every `keys().next()` walks them.)
 */
export class LruCache {
    name;
    capacity;
    opts;
    map = new Map();
    newest = null;
    oldest = null;
    totalWeight = 0;
    /** Lookups answered and not answered since start (metrics). */
    hits = 0;
    misses = 0;
    constructor(name, capacity, opts = {}) {
        this.name = name;
        this.capacity = capacity;
        this.opts = opts;
    }
    /** The summed weight of the entries (0 without a `weigh` function). */
    get weight() {
        return this.totalWeight;
    }
    /** Whether entries are weighed (the cache has a byte budget). */
    get weighted() {
        return this.opts.weigh !== undefined;
    }
    get(key) {
        const node = this.map.get(key);
        if (node === undefined) {
            this.misses++;
            return undefined;
        }
        this.hits++;
        this.touch(node);
        return node.value;
    }
    set(key, value) {
        const weight = this.opts.weigh ? this.opts.weigh(value, key) : 0;
        const max = this.opts.maxWeight;
        if (this.capacity <= 0 || (max !== undefined && weight > max)) {
            // No room at all, or heavier than the whole budget: evicted as it arrives.
            this.delete(key);
            this.opts.onEvict?.(key, value);
            return;
        }
        const node = this.map.get(key);
        if (node !== undefined) {
            this.totalWeight += weight - node.weight;
            node.value = value;
            node.weight = weight;
            this.touch(node);
        }
        else {
            const fresh = { key, value, weight, newer: null, older: this.newest };
            if (this.newest)
                this.newest.newer = fresh;
            this.newest = fresh;
            this.oldest ??= fresh;
            this.map.set(key, fresh);
            this.totalWeight += weight;
        }
        while (this.oldest && (this.map.size > this.capacity || (max !== undefined && this.totalWeight > max))) {
            const victim = this.oldest;
            this.remove(victim);
            this.opts.onEvict?.(victim.key, victim.value);
        }
    }
    delete(key) {
        const node = this.map.get(key);
        if (node !== undefined)
            this.remove(node);
    }
    /** Removes every entry whose value matches (e.g. all tokens of one user). */
    deleteWhere(pred) {
        for (const node of [...this.map.values()])
            if (pred(node.value, node.key))
                this.remove(node);
    }
    clear() {
        this.map.clear();
        this.newest = this.oldest = null;
        this.totalWeight = 0;
    }
    /** Whether `key` is cached (without making it recent). */
    has(key) {
        return this.map.has(key);
    }
    get size() {
        return this.map.size;
    }
    touch(node) {
        if (node === this.newest)
            return;
        this.unlink(node);
        node.older = this.newest;
        node.newer = null;
        if (this.newest)
            this.newest.newer = node;
        this.newest = node;
        this.oldest ??= node;
    }
    remove(node) {
        this.unlink(node);
        this.map.delete(node.key);
        this.totalWeight -= node.weight;
    }
    unlink(node) {
        if (node.newer)
            node.newer.older = node.older;
        else
            this.newest = node.older;
        if (node.older)
            node.older.newer = node.newer;
        else
            this.oldest = node.newer;
        node.newer = node.older = null;
    }
}
/** A named cache's size from the config alone (for caches built before the registry, e.g. in storage). */
export function scaledCacheSize(sizing, name, baseSize) {
    return Math.max(1, Math.round(baseSize * (sizing.per_cache_factors[name] ?? sizing.global_factor)));
}
/** Creates named caches sized from the config, so operators tune them by name as in Synapse. */
export class CacheRegistry {
    sizing;
    caches = new Map();
    constructor(sizing) {
        this.sizing = sizing;
    }
    /** The cache's factor: its per-cache factor, else the global factor. */
    factor(name) {
        return this.sizing.per_cache_factors[name] ?? this.sizing.global_factor;
    }
    /**
     * The size of a named in-memory structure that is not an LruCache (a set, a plan cache): `baseSize`
     * scaled by its factor, at least 1.
     */
    size(name, baseSize) {
        return scaledCacheSize(this.sizing, name, baseSize);
    }
    /**
     * `baseSize` is scaled by the cache's factor (its per-cache factor, else the global factor); so is
     * `opts.baseWeight`, the weight budget when `opts.weigh` weighs entries.
     */
    get(name, baseSize, opts = {}) {
        let cache = this.caches.get(name);
        if (!cache) {
            const factor = name === "event" ? this.sizing.event_cache_size / baseSize : this.factor(name);
            const capacity = name === "event" ? this.sizing.event_cache_size : Math.round(baseSize * factor);
            const { baseWeight, ...rest } = opts;
            cache = new LruCache(name, capacity, { ...rest, ...(baseWeight !== undefined ? { maxWeight: Math.round(baseWeight * factor) } : {}) });
            this.caches.set(name, cache);
        }
        return cache;
    }
    all() {
        return [...this.caches.values()];
    }
}
