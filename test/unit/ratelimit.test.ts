// Token-bucket rate limiter: burst, refill at per_second, retry_after_ms, check-only mode.
import { describe, expect, it } from "vitest";
import { RateLimiter } from "../../src/domain/ratelimit.ts";
import { MatrixError } from "../../src/domain/errors.ts";

describe("RateLimiter", () => {
  it("allows the burst, then refuses with the time until the next action", () => {
    let now = 1_000_000;
    const rl = new RateLimiter(() => now);
    const limit = { per_second: 0.5, burst_count: 3 };
    for (let i = 0; i < 3; i++) rl.check("k", limit);
    let err: unknown;
    try {
      rl.check("k", limit);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(MatrixError);
    expect((err as MatrixError).errcode).toBe("M_LIMIT_EXCEEDED");
    expect((err as MatrixError).httpStatus).toBe(429);
    expect((err as MatrixError).extra.retry_after_ms).toBe(2000);
    now += 2000;
    rl.check("k", limit);
    expect(() => rl.check("k", limit)).toThrow(MatrixError);
    rl.check("other", limit); // keys are independent
  });

  it("checks without spending when update is false", () => {
    const rl = new RateLimiter(() => 0);
    const limit = { per_second: 1, burst_count: 1 };
    rl.check("k", limit, { update: false });
    rl.check("k", limit, { update: false });
    rl.check("k", limit);
    expect(() => rl.check("k", limit, { update: false })).toThrow(MatrixError);
  });

  it("treats a zero limit as unlimited, like Synapse", () => {
    const rl = new RateLimiter(() => 0);
    for (let i = 0; i < 100; i++) rl.check("k", { per_second: 0, burst_count: 0 });
  });

  it("records failures against later checks", () => {
    const rl = new RateLimiter(() => 0);
    const limit = { per_second: 0.1, burst_count: 2 };
    rl.record("k", limit);
    rl.record("k", limit);
    expect(() => rl.check("k", limit, { update: false })).toThrow(MatrixError);
  });

  it("forgets refilled buckets and holds at most maxBuckets, the limits still applying to live ones", () => {
    let now = 0;
    const rl = new RateLimiter(() => now, 1000);
    const limit = { per_second: 1, burst_count: 1 };
    for (let i = 0; i < 5000; i++) rl.check(`name${i}`, limit);
    expect(rl.size).toBeLessThanOrEqual(1000);
    // The newest key is still limited ...
    expect(() => rl.check("name4999", limit)).toThrow(MatrixError);
    // ... and once every bucket has refilled, all of them go at the next sweep.
    now += 2000;
    for (let i = 0; i < 1000; i++) rl.check("again", { per_second: 1e6, burst_count: 1e6 });
    expect(rl.size).toBeLessThanOrEqual(1);
  });
});
