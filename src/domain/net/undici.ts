// undici, loaded on the first outbound request rather than at start-up: it weighs ~5 MB of V8 heap (and
// its llhttp wasm more outside it) that a server which has not called out yet need not carry. A plain
// synchronous require of the CommonJS package, so the dispatchers built from it stay synchronous.
import { createRequire } from "node:module";

export type Undici = typeof import("undici");

const require = createRequire(import.meta.url);
let loaded: Undici | undefined;

/** The undici module (loaded on the first call). */
export function undici(): Undici {
  return (loaded ??= require("undici") as Undici);
}
