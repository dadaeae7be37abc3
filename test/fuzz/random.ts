// A seeded random source for the fuzz suites: every run prints its seed, and WEFT_FUZZ_SEED replays it
// (WEFT_FUZZ_SAMPLES runs a larger sample locally). mulberry32: small, fast, good enough for choosing.

export class Rng {
  private state: number;
  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("pick from an empty list");
    return items[this.int(items.length)]!;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  /** A short lowercase word. */
  word(min = 3, max = 10): string {
    const n = min + this.int(max - min + 1);
    let s = "";
    for (let i = 0; i < n; i++) s += String.fromCharCode(97 + this.int(26));
    return s;
  }
}

/** The run's seed (WEFT_FUZZ_SEED, else a fresh one) and sample size (WEFT_FUZZ_SAMPLES, else `fallback`). */
export function fuzzSettings(fallback: number): { seed: number; samples: number } {
  const env = process.env.WEFT_FUZZ_SEED;
  const seed = env !== undefined && /^\d+$/.test(env) ? Number(env) >>> 0 : (Math.random() * 2 ** 32) >>> 0;
  const n = process.env.WEFT_FUZZ_SAMPLES;
  return { seed, samples: n !== undefined && /^\d+$/.test(n) ? Number(n) : fallback };
}
