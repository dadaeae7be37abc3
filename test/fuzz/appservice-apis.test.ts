// The application-service fuzz suite: client-server operations sent with a registered service's as_token,
// asserting identities inside and outside its namespace, on SQLite and PostgreSQL. Fails on any 5xx, any
// error body without errcode, any body that breaks the spec's schema, or any change to the victim's data
// and rooms (outside the service's namespace). Prints its seed (WEFT_FUZZ_SEED replays).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { specOperations } from "../helpers/spec.ts";
import { fuzzSettings, Rng } from "./random.ts";
import { formatFailures } from "./rest.ts";
import { fuzzAppService, startAppServiceWorld, type AppServiceWorld } from "./appservice.ts";

describe.each(backends())("application service fuzz on %s", (backend) => {
  let world: AppServiceWorld;
  beforeAll(async () => {
    world = await startAppServiceWorld(backend);
  }, 120_000);
  afterAll(async () => {
    await world?.t.close();
    await world?.service.stop();
  });

  it("as_token requests with generated bad inputs and asserted identities break no rule", { timeout: 600_000 }, async () => {
    const { seed, samples } = fuzzSettings(250);
    console.log(`application service fuzz on ${backend}: seed ${seed}, ${samples} requests (replay: WEFT_FUZZ_SEED=${seed})`);
    const started = performance.now();
    const { failures, statuses } = await fuzzAppService(world, specOperations("client-server"), new Rng(seed), samples);
    console.log(`  ${((performance.now() - started) / 1000).toFixed(1)} s; statuses ${[...statuses].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}×${n}`).join(" ")}`);
    expect(failures, `${failures.length} failures (seed ${seed}):\n${formatFailures(seed, failures)}`).toEqual([]);
    // The service's own endpoints were reached and answered: not everything refused at the door.
    expect(statuses.get(200) ?? 0).toBeGreaterThanOrEqual(samples / 20);
  });
});
