// Bounded in-memory caches for hot reads (tokens, profiles; later current state and events).
// Sizes follow Synapse's `caches.global_factor` / `caches.per_cache_factors`; the event cache is sized by
// `event_cache_size` alone. Invalidation goes through an InvalidationBus so several workers can share it.

interface Node<K, V> {
  key: K;
  value: V;
  newer: Node<K, V> | null;
  older: Node<K, V> | null;
}

/**
 * A least-recently-used cache: a Map from key to a node of a doubly linked recency list. A hit only
 * relinks the node; the Map changes on insert and eviction alone. (Re-inserting into a Map to keep its
 * insertion order as the recency order, the usual short cut, costs ~10 µs an operation in V8 at 10,000
 * entries: deleted slots pile up at the front of the table and every `keys().next()` walks them.)
 */
export class LruCache<K, V> {
  private readonly map = new Map<K, Node<K, V>>();
  private newest: Node<K, V> | null = null;
  private oldest: Node<K, V> | null = null;
  constructor(readonly name: string, readonly capacity: number) {}

  get(key: K): V | undefined {
    const node = this.map.get(key);
    if (node === undefined) return undefined;
    this.touch(node);
    return node.value;
  }

  set(key: K, value: V): void {
    if (this.capacity <= 0) return;
    const node = this.map.get(key);
    if (node !== undefined) {
      node.value = value;
      this.touch(node);
      return;
    }
    const fresh: Node<K, V> = { key, value, newer: null, older: this.newest };
    if (this.newest) this.newest.newer = fresh;
    this.newest = fresh;
    this.oldest ??= fresh;
    this.map.set(key, fresh);
    while (this.map.size > this.capacity && this.oldest) this.remove(this.oldest);
  }

  delete(key: K): void {
    const node = this.map.get(key);
    if (node !== undefined) this.remove(node);
  }

  /** Removes every entry whose value matches (e.g. all tokens of one user). */
  deleteWhere(pred: (value: V, key: K) => boolean): void {
    for (const node of [...this.map.values()]) if (pred(node.value, node.key)) this.remove(node);
  }

  clear(): void {
    this.map.clear();
    this.newest = this.oldest = null;
  }

  get size(): number {
    return this.map.size;
  }

  private touch(node: Node<K, V>): void {
    if (node === this.newest) return;
    this.unlink(node);
    node.older = this.newest;
    node.newer = null;
    if (this.newest) this.newest.newer = node;
    this.newest = node;
    this.oldest ??= node;
  }

  private remove(node: Node<K, V>): void {
    this.unlink(node);
    this.map.delete(node.key);
  }

  private unlink(node: Node<K, V>): void {
    if (node.newer) node.newer.older = node.older;
    else this.newest = node.older;
    if (node.older) node.older.newer = node.newer;
    else this.oldest = node.newer;
    node.newer = node.older = null;
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
