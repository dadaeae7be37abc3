// The APIs the REST fuzz suite drives as a user: each entry is one OpenAPI directory of the spec
// (data/api/<api>) and how many requests a run sends to it per database. The Server-Server API has its own
// world and suite (a signing origin server: federation.ts, federation-apis.test.ts), and so do the
// requests of application services (their as_token and identity assertion: appservice.ts).
import type { SpecApi } from "../helpers/spec.ts";

export interface FuzzedApi {
  api: SpecApi;
  /** Requests per database in one `npm test` run (WEFT_FUZZ_SAMPLES overrides). */
  samples: number;
}

export const FUZZED_APIS: FuzzedApi[] = [
  { api: "client-server", samples: 300 },
];
