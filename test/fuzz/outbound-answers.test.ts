// The outbound fuzz suite (test/fuzz/outbound.ts): Weft as a client of a hostile server, on SQLite and
// PostgreSQL. Every federation request Weft makes for a local user's action — joins, leaves, invites,
// profiles, aliases, room directories, E2EE keys, media, server keys and the notary, and the past of
// events H sends (missing events, state, event, event_auth) — is answered with a generated hostile
// answer. Fails on any 5xx but 502/504, any error without errcode, any success breaking the spec's schema,
// any error the server logs, and any invite stored that the remote never countersigned. Prints its seed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { fuzzSettings, Rng } from "./random.ts";
import { formatFailures } from "./rest.ts";
import { fuzzOutbound, startOutboundWorld, type OutboundWorld } from "./outbound.ts";
import { fuzzServices, startServicesWorld, type ServicesWorld } from "./hostile-services.ts";

const line = (m: Map<string | number, number>) => [...m].sort((a, b) => String(a[0]).localeCompare(String(b[0]))).map(([s, n]) => `${s}×${n}`).join(" ");

describe.each(backends())("outbound fuzz (hostile remote answers) on %s", (backend) => {
  let world: OutboundWorld;
  beforeAll(async () => {
    world = await startOutboundWorld(backend);
  }, 120_000);
  afterAll(async () => {
    const started = performance.now();
    await world?.h.close();
    await world?.t.close();
    console.log(`  closed in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }, 120_000);

  it("hostile answers to every outbound request never earn a 5xx, a logged error or a half-made row", { timeout: 600_000 }, async () => {
    const { seed, samples } = fuzzSettings(90);
    console.log(`outbound fuzz on ${backend}: seed ${seed}, ${samples} actions (replay: WEFT_FUZZ_SEED=${seed})`);
    const started = performance.now();
    const { failures, statuses, reached, byAction, gaveUp } = await fuzzOutbound(world, new Rng(seed), samples);
    console.log(`  ${((performance.now() - started) / 1000).toFixed(1)} s; statuses ${line(statuses)}; client gave up ${gaveUp}`);
    console.log(`  H was asked: ${line(reached)}`);
    console.log(`  answers by action: ${line(byAction)}`);
    expect(failures, `${failures.length} failures (seed ${seed}):\n${formatFailures(seed, failures)}`).toEqual([]);
    // The fuzz reached Weft's outbound side: the main kinds of request went to H.
    const asked = [...reached.keys()].join(" ");
    for (const endpoint of ["make_join", "invite", "query/profile", "query/directory", "publicRooms", "user/keys/query", "user/keys/claim", "media/download", "get_missing_events", "user/devices"]) {
      if (samples >= 60) expect(asked, endpoint).toContain(endpoint);
    }
    // The server still answers, and the shared room is whole.
    const versions = await world.t.call("GET", "/_matrix/client/versions");
    expect(versions.status).toBe(200);
  });
});

describe.each(backends())("outbound fuzz (hostile application service and push gateway) on %s", (backend) => {
  let world: ServicesWorld;
  beforeAll(async () => {
    world = await startServicesWorld(backend);
  }, 120_000);
  afterAll(async () => {
    await world?.peer.close();
    await world?.t.close();
  });

  it("hostile answers of an application service and a push gateway never earn a 5xx or a logged error", { timeout: 600_000 }, async () => {
    const { seed, samples } = fuzzSettings(45);
    console.log(`service fuzz on ${backend}: seed ${seed}, ${samples} actions (replay: WEFT_FUZZ_SEED=${seed})`);
    const { failures, statuses, reached } = await fuzzServices(world, new Rng(seed), samples);
    console.log(`  answers by action: ${line(statuses)}`);
    console.log(`  the services were asked: ${line(reached)}`);
    expect(failures, `${failures.length} failures (seed ${seed}):\n${formatFailures(seed, failures)}`).toEqual([]);
    const asked = [...reached.keys()].join(" ");
    if (samples >= 30) for (const endpoint of ["/_matrix/app/v1/users", "/_matrix/app/v1/rooms", "/_matrix/app/v1/transactions", "/_matrix/push/v1/notify"]) expect(asked, endpoint).toContain(endpoint);
  });
});
