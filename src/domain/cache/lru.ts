// Bounded in-memory caches for hot reads (tokens, profiles, events, state) and the sizes of every other
// in-memory structure that grows with users, rooms or events. Sizes follow Synapse's
// `caches.global_factor` / `caches.per_cache_factors`; the event cache is sized by `event_cache_size`
// alone. A cache may also weigh its entries (an approximate byte size) and hold at most a weight budget,
// so a few huge entries cannot take what many small ones would. Invalidation goes through an
// InvalidationBus so several workers can share it.

interface Node<K, V> {
  key: K;
  value: V;
  weight: number;
  newer: Node<K, V> | null;
  older: Node<K, V> | null;
}

export interface LruOptions<K, V> {
  /** An entry's weight (e.g. its approximate size in bytes); with `maxWeight`, bounds the total. */
  weigh?: (value: V, key: K) => number;
  maxWeight?: number;
  /** Called for each entry evicted to make room (not for delete/clear/overwrite). */
  onEvict?: (key: K, value: V) => void;
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
  private totalWeight = 0;
  /** Lookups answered and not answered since start (metrics). */
  hits = 0;
  misses = 0;
  constructor(
    readonly name: string,
    readonly capacity: number,
    private readonly opts: LruOptions<K, V> = {},
  ) {}

  /** The summed weight of the entries (0 without a `weigh` function). */
  get weight(): number {
    return this.totalWeight;
  }

  /** Whether entries are weighed (the cache has a byte budget). */
  get weighted(): boolean {
    return this.opts.weigh !== undefined;
  }

  get(key: K): V | undefined {
    const node = this.map.get(key);
    if (node === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    this.touch(node);
    return node.value;
  }

  set(key: K, value: V): void {
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
    } else {
      const fresh: Node<K, V> = { key, value, weight, newer: null, older: this.newest };
      if (this.newest) this.newest.newer = fresh;
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
    this.totalWeight = 0;
  }

  /** Whether `key` is cached (without making it recent). */
  has(key: K): boolean {
    return this.map.has(key);
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
    this.totalWeight -= node.weight;
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

/** A named cache's size from the config alone (for caches built before the registry, e.g. in storage). */
export function scaledCacheSize(sizing: Pick<CacheSizing, "global_factor" | "per_cache_factors">, name: string, baseSize: number): number {
  return Math.max(1, Math.round(baseSize * (sizing.per_cache_factors[name] ?? sizing.global_factor)));
}

/** Creates named caches sized from the config, so operators tune them by name as in Synapse. */
export class CacheRegistry {
  private readonly caches = new Map<string, LruCache<unknown, unknown>>();
  constructor(private readonly sizing: CacheSizing) {}

  /** The cache's factor: its per-cache factor, else the global factor. */
  factor(name: string): number {
    return this.sizing.per_cache_factors[name] ?? this.sizing.global_factor;
  }

  /**
   * The size of a named in-memory structure that is not an LruCache (a set, a plan cache): `baseSize`
   * scaled by its factor, at least 1.
   */
  size(name: string, baseSize: number): number {
    return scaledCacheSize(this.sizing, name, baseSize);
  }

  /**
   * `baseSize` is scaled by the cache's factor (its per-cache factor, else the global factor); so is
   * `opts.baseWeight`, the weight budget when `opts.weigh` weighs entries.
   */
  get<K, V>(name: string, baseSize: number, opts: Omit<LruOptions<K, V>, "maxWeight"> & { baseWeight?: number } = {}): LruCache<K, V> {
    let cache = this.caches.get(name);
    if (!cache) {
      const factor = name === "event" ? this.sizing.event_cache_size / baseSize : this.factor(name);
      const capacity = name === "event" ? this.sizing.event_cache_size : Math.round(baseSize * factor);
      const { baseWeight, ...rest } = opts;
      cache = new LruCache<K, V>(name, capacity, { ...rest, ...(baseWeight !== undefined ? { maxWeight: Math.round(baseWeight * factor) } : {}) }) as LruCache<unknown, unknown>;
      this.caches.set(name, cache);
    }
    return cache as LruCache<K, V>;
  }

  all(): LruCache<unknown, unknown>[] {
    return [...this.caches.values()];
  }
}
