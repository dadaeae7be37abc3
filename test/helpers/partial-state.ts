// Partial-state join tests: holding back a server's /state_ids and /state requests (its resync's fetch of
// the full state) so that a room joined with partial state stays partial until the test says, observed
// through the flag.
import type { Services } from "../../src/domain/services.ts";

/** Holds `s`'s federation /state_ids and /state requests until `release()`; `held()` counts those that arrived. */
export function holdStateFetches(s: Services): { release: () => void; held: () => number } {
  const fed = s.federation;
  const original = fed.getJson.bind(fed);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let held = 0;
  fed.getJson = (async (dest: string, path: string, ...rest: unknown[]) => {
    if (path.startsWith("/_matrix/federation/v1/state/") || path.startsWith("/_matrix/federation/v1/state_ids/")) {
      held++;
      await gate;
    }
    return (original as (...a: unknown[]) => Promise<unknown>)(dest, path, ...rest);
  }) as typeof fed.getJson;
  return { release, held: () => held };
}
