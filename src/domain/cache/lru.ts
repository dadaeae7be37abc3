// Bounded in-memory caches for hot reads (tokens, profiles; later current state and events).
// Sizes follow Synapse's `caches.global_factor` / `caches.per_cache_factors`; the event cache is sized by
// `event_cache_size` alone. Invalidation goes through an InvalidationBus so several workers can share it.

export class LruCache<K, V> {
  private readonly map = new Map<K, V>();
  constructor(readonly name: string, readonly capacity: number) {}

  get(key: K): V | undefined {
    const v = this.map.get(key);
    if (v === undefined) return undefined;
    this.map.delete(key); // move to the most-recent end
    this.map.set(key, v);
    return v;
  }

  set(key: K, value: V): void {
    if (this.capacity <= 0) return;
    this.map.delete(key);
    this.map.set(key, value);
    while (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as K);
  }

  delete(key: K): void {
    this.map.delete(key);
  }

  /** Removes every entry whose value matches (e.g. all tokens of one user). */
  deleteWhere(pred: (value: V, key: K) => boolean): void {
    for (const [k, v] of this.map) if (pred(v, k)) this.map.delete(k);
  }

  clear(): void {
    this.map.clear();
  }

  get size(): number {
    return this.map.size;
  }
}

export interface CacheSizing {
  global_factor: number;
  per_cache_factors: Record<string, number>;
  event_cache_size: number;
}

/** Creates named caches sized from the config, so operators tune them by name as in Synapse. */
export class CacheRegistry {
  private readonly caches = new Map<string, LruCache<unknown, unknown>>();
  constructor(private readonly sizing: CacheSizing) {}

  /** `baseSize` is scaled by the cache's factor (its per-cache factor, else the global factor). */
  get<K, V>(name: string, baseSize: number): LruCache<K, V> {
    let cache = this.caches.get(name);
    if (!cache) {
      const capacity =
        name === "event"
          ? this.sizing.event_cache_size
          : Math.round(baseSize * (this.sizing.per_cache_factors[name] ?? this.sizing.global_factor));
      cache = new LruCache(name, capacity);
      this.caches.set(name, cache);
    }
    return cache as LruCache<K, V>;
  }

  all(): LruCache<unknown, unknown>[] {
    return [...this.caches.values()];
  }
}
