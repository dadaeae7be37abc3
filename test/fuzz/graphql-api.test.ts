// The GraphQL fuzz suite: every root query and mutation field of the schema, with generated arguments
// (world ids, and hostile values of the right and the wrong type) and hostile query texts, against a real
// server on SQLite and PostgreSQL. Fails on a 5xx, an error without extensions.errcode, a masked internal
// error, or a change to protected data. Prints its seed (WEFT_FUZZ_SEED replays, WEFT_FUZZ_SAMPLES).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { buildWeftSchema } from "../../src/graphql/schema.ts";
import { fuzzSettings, Rng } from "./random.ts";
import { formatFailures } from "./rest.ts";
import { fuzzGraphql } from "./graphql.ts";
import { startWorld, type World } from "./world.ts";

describe.each(backends())("GraphQL fuzz on %s", (backend) => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld(backend);
  });
  afterAll(async () => {
    await world?.t.close();
  });

  it("generated arguments and query texts break no rule", { timeout: 600_000 }, async () => {
    const { seed, samples } = fuzzSettings(200);
    console.log(`GraphQL fuzz on ${backend}: seed ${seed}, ${samples} requests (replay: WEFT_FUZZ_SEED=${seed})`);
    const started = performance.now();
    const { failures, statuses } = await fuzzGraphql(world, await buildWeftSchema(), new Rng(seed), samples);
    console.log(`  ${((performance.now() - started) / 1000).toFixed(1)} s; statuses ${[...statuses].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}×${n}`).join(" ")}`);
    expect(failures, `${failures.length} failures (seed ${seed}):\n${formatFailures(seed, failures)}`).toEqual([]);
  });
});
