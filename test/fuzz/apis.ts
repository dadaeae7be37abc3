// The APIs the fuzz suite drives: each entry is one OpenAPI directory of the spec (data/api/<api>) and
// how many requests a run sends to it per database. Federation and application-service endpoints are one
// line each here once Weft serves them (their worlds need a signing remote server / a registered
// application service: add them to world.ts with the entry).
import type { SpecApi } from "../helpers/spec.ts";

export interface FuzzedApi {
  api: SpecApi;
  /** Requests per database in one `npm test` run (WEFT_FUZZ_SAMPLES overrides). */
  samples: number;
}

export const FUZZED_APIS: FuzzedApi[] = [
  { api: "client-server", samples: 300 },
];
