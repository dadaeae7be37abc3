// The federation fuzz suite: every Server-Server API operation driven with generated bad inputs, signed by
// a fake origin server whose user is in one room, on SQLite and PostgreSQL. Fails on any 5xx (a 502 only
// where the request names another server), any error body without errcode, any body that breaks the
// spec's schema, any change to the rooms the origin is not in or to the victim's data; and on any unsigned
// or forged request that is not refused with 401 M_UNAUTHORIZED. Prints its seed (WEFT_FUZZ_SEED replays).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { specOperations } from "../helpers/spec.ts";
import { fuzzSettings, Rng } from "./random.ts";
import { formatFailures } from "./rest.ts";
import { fuzzFederation, fuzzForgeries, fuzzPdus, startFederationWorld, type FederationWorld } from "./federation.ts";

const statusLine = (statuses: Map<number, number>) => [...statuses].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}×${n}`).join(" ");

describe.each(backends())("federation fuzz on %s", (backend) => {
  let world: FederationWorld;
  beforeAll(async () => {
    world = await startFederationWorld(backend);
  }, 120_000);
  afterAll(async () => {
    await world?.t.close();
    await world?.origin.close();
  });

  it("server-server: signed generated bad inputs break no rule", { timeout: 600_000 }, async () => {
    const { seed, samples } = fuzzSettings(250);
    console.log(`federation fuzz on ${backend}: seed ${seed}, ${samples} requests (replay: WEFT_FUZZ_SEED=${seed})`);
    const ops = specOperations("server-server");
    expect(ops.length).toBeGreaterThan(30);
    const started = performance.now();
    const { failures, statuses } = await fuzzFederation(world, ops, new Rng(seed), samples);
    console.log(`  ${((performance.now() - started) / 1000).toFixed(1)} s; statuses ${statusLine(statuses)}`);
    expect(failures, `${failures.length} failures (seed ${seed}):\n${formatFailures(seed, failures)}`).toEqual([]);
    // The fuzz reached the handlers: signed requests were not all refused at the door.
    expect([...statuses].filter(([s]) => s !== 401).reduce((n, [, c]) => n + c, 0)).toBeGreaterThan(samples / 2);
  });

  it("server-server: unsigned and forged requests all get 401 M_UNAUTHORIZED and change nothing", { timeout: 600_000 }, async () => {
    const { seed, samples } = fuzzSettings(60);
    console.log(`federation forgeries on ${backend}: seed ${seed}, ${samples} requests (replay: WEFT_FUZZ_SEED=${seed})`);
    const { failures, statuses } = await fuzzForgeries(world, specOperations("server-server"), new Rng(seed), samples);
    console.log(`  statuses ${statusLine(statuses)}`);
    expect(failures, `${failures.length} failures (seed ${seed}):\n${formatFailures(seed, failures)}`).toEqual([]);
  });

  it("server-server: events with hostile content from the origin never break the room it is in", { timeout: 600_000 }, async () => {
    const { seed, samples } = fuzzSettings(60);
    console.log(`federation hostile PDUs on ${backend}: seed ${seed}, ${samples} events (replay: WEFT_FUZZ_SEED=${seed})`);
    const { failures, accepted, refused } = await fuzzPdus(world, new Rng(seed), samples);
    console.log(`  ${accepted} accepted, ${refused} refused`);
    expect(failures, `${failures.length} failures (seed ${seed}):\n${formatFailures(seed, failures)}`).toEqual([]);
    // Contents too deep for the origin to hash are never sent (about half the draws): a third reached /send.
    expect(accepted + refused).toBeGreaterThan(samples / 3);
  });
});
