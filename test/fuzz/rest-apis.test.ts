// The REST fuzz suite: every operation of each API in apis.ts, driven with generated bad inputs against a
// real server with real users and rooms, on SQLite and PostgreSQL. Fails on any 5xx, any error body
// without errcode, any body that breaks the spec's schema, or any change to data the actor had no right
// to touch. Prints its seed: WEFT_FUZZ_SEED=<seed> replays a run, WEFT_FUZZ_SAMPLES=<n> runs more.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { specOperations } from "../helpers/spec.ts";
import { FUZZED_APIS } from "./apis.ts";
import { fuzzSettings, Rng } from "./random.ts";
import { formatFailures, fuzzOperations } from "./rest.ts";
import { startWorld, type World } from "./world.ts";

describe.each(backends())("REST fuzz on %s", (backend) => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld(backend);
  });
  afterAll(async () => {
    await world?.t.close();
  });

  for (const { api, samples: fallback } of FUZZED_APIS) {
    it(`${api}: generated bad inputs break no rule`, { timeout: 600_000 }, async () => {
      const { seed, samples } = fuzzSettings(fallback);
      console.log(`REST fuzz ${api} on ${backend}: seed ${seed}, ${samples} requests (replay: WEFT_FUZZ_SEED=${seed})`);
      const ops = specOperations(api);
      expect(ops.length).toBeGreaterThan(0);
      const started = performance.now();
      const { failures, statuses } = await fuzzOperations(world, ops, new Rng(seed), samples);
      console.log(`  ${((performance.now() - started) / 1000).toFixed(1)} s; statuses ${[...statuses].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}×${n}`).join(" ")}`);
      expect(failures, `${failures.length} failures (seed ${seed}):\n${formatFailures(seed, failures)}`).toEqual([]);
    });
  }
});
