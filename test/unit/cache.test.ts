// The LRU cache and the registry that sizes caches from caches.global_factor / per_cache_factors.
import { describe, expect, it } from "vitest";
import { CacheRegistry, LruCache } from "../../src/domain/cache/lru.ts";

describe("LruCache", () => {
  it("evicts the least recently used entry", () => {
    const c = new LruCache<string, number>("t", 2);
    c.set("a", 1);
    c.set("b", 2);
    expect(c.get("a")).toBe(1); // a is now most recent
    c.set("c", 3);
    expect(c.get("b")).toBeUndefined();
    expect(c.get("a")).toBe(1);
    expect(c.get("c")).toBe(3);
    c.deleteWhere((v) => v === 1);
    expect(c.size).toBe(1);
  });

  it("agrees with a reference LRU over random operations", () => {
    // Reference: an array of keys, most recent last.
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (const capacity of [1, 3, 50]) {
      const c = new LruCache<number, number>("t", capacity);
      const order: number[] = [];
      const values = new Map<number, number>();
      for (let i = 0; i < 5000; i++) {
        const k = rand(capacity * 2 + 2);
        const op = rand(10);
        if (op < 4) {
          const expected = order.includes(k) ? values.get(k) : undefined;
          expect(c.get(k)).toBe(expected);
          if (expected !== undefined) order.splice(order.indexOf(k), 1), order.push(k);
        } else if (op < 9) {
          c.set(k, i);
          if (order.includes(k)) order.splice(order.indexOf(k), 1);
          order.push(k);
          values.set(k, i);
          if (order.length > capacity) order.shift();
        } else {
          c.delete(k);
          if (order.includes(k)) order.splice(order.indexOf(k), 1);
        }
        expect(c.size).toBe(order.length);
      }
      for (const k of order) expect(c.get(k)).toBe(values.get(k));
      c.clear();
      expect(c.size).toBe(0);
      expect(c.get(order[0]!)).toBeUndefined();
    }
  });
});

describe("LruCache weights and evictions", () => {
  it("keeps the summed weight within the budget, evicting the least recent, and reports evictions", () => {
    const evicted: string[] = [];
    const c = new LruCache<string, string>("w", 100, { weigh: (v) => v.length, maxWeight: 10, onEvict: (k) => evicted.push(k) });
    c.set("a", "xxxx");
    c.set("b", "xxxx");
    expect(c.weight).toBe(8);
    c.get("a");
    c.set("c", "xxxx"); // 12 > 10: b (least recent) goes
    expect(evicted).toEqual(["b"]);
    expect([c.has("a"), c.has("b"), c.has("c")]).toEqual([true, false, true]);
    expect(c.weight).toBe(8);
    c.set("a", "x"); // overwrite adjusts the weight
    expect(c.weight).toBe(5);
    c.set("huge", "x".repeat(11)); // heavier than the budget: evicted as it arrives
    expect(c.has("huge")).toBe(false);
    expect(evicted).toEqual(["b", "huge"]);
    c.delete("a");
    expect(c.weight).toBe(4);
  });
});

describe("LruCache of capacity 0", () => {
  it("holds nothing and reports every entry as evicted", () => {
    const evicted: string[] = [];
    const c = new LruCache<string, number>("none", 0, { onEvict: (k) => evicted.push(k) });
    c.set("a", 1);
    expect([c.get("a"), c.size, evicted]).toEqual([undefined, 0, ["a"]]);
  });
});

describe("CacheRegistry", () => {
  it("scales sizes by the per-cache factor, else the global factor; the event cache by its own size", () => {
    const r = new CacheRegistry({ global_factor: 0.5, per_cache_factors: { get_user_by_access_token: 2 }, event_cache_size: 777 });
    expect(r.get("get_user_by_access_token", 1000).capacity).toBe(2000);
    expect(r.get("profiles", 1000).capacity).toBe(500);
    expect(r.get("event", 1000).capacity).toBe(777);
    expect(r.get("profiles", 1).capacity).toBe(500); // one cache per name
    expect(r.size("plans", 1000)).toBe(500);
    expect(r.size("get_user_by_access_token", 10)).toBe(20);
    expect(r.size("tiny", 1)).toBe(1);
  });
});
