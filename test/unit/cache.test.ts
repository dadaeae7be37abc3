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
});

describe("CacheRegistry", () => {
  it("scales sizes by the per-cache factor, else the global factor; the event cache by its own size", () => {
    const r = new CacheRegistry({ global_factor: 0.5, per_cache_factors: { get_user_by_access_token: 2 }, event_cache_size: 777 });
    expect(r.get("get_user_by_access_token", 1000).capacity).toBe(2000);
    expect(r.get("profiles", 1000).capacity).toBe(500);
    expect(r.get("event", 1000).capacity).toBe(777);
    expect(r.get("profiles", 1).capacity).toBe(500); // one cache per name
  });
});
