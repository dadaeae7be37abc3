// The pg driver, loaded without its Cloudflare Workers probe: at load, pg asks whether it runs in a Worker
// by constructing a `Response` when `navigator` is missing (Node 20 has none), and that first touch of
// the global loads Node's whole built-in fetch (undici and its llhttp wasm, ~2 MB of heap and more
// outside it) into a server that never fetches. A `navigator` that says Node.js is present only while
// pg loads. Every PostgreSQL module of ours takes pg from here (sql-postgres.ts, migrate.ts).
//
// pg copies every query config it is given, property descriptor by property descriptor, so that it never
// changes the caller's object (`normalizeQueryConfig`): 1–2 µs a query, on every statement a send makes.
// A config made for one call only (`QueryConfig` below) is nobody else's, and goes in uncopied.
import { createRequire } from "node:module";
import type * as Pg from "pg";

const require = createRequire(import.meta.url);

function load(): typeof Pg {
  const g = globalThis as { navigator?: unknown };
  if ("navigator" in g) return require("pg") as typeof Pg;
  g.navigator = { userAgent: "Node.js" };
  try {
    return require("pg") as typeof Pg;
  } finally {
    delete g.navigator;
  }
}

export const pg = load();

/**
 * A query's config made for that one call (sql-postgres.ts): pg takes it as it is. Every field pg's Query
 * reads is present, so each query pg builds reads one shape.
 */
export class QueryConfig {
  rows = undefined;
  queryMode = undefined;
  binary = undefined;
  portal = undefined;
  rowMode = undefined;
  callback: ((err: Error | null, res: unknown) => void) | undefined = undefined;
  constructor(
    readonly text: string,
    readonly name: string | undefined,
    public values: unknown[] | undefined,
    readonly types: Pg.CustomTypesConfig | undefined,
  ) {}
}

type Normalize = (config: unknown, values?: unknown, callback?: unknown) => unknown;
const utils = require("pg/lib/utils.js") as { normalizeQueryConfig: Normalize };
const copying = utils.normalizeQueryConfig;
utils.normalizeQueryConfig = (config, values, callback) => {
  if (!(config instanceof QueryConfig)) return copying(config, values, callback);
  // What pg's own does to its copy, done to the config itself.
  if (typeof values === "function") config.callback = values as QueryConfig["callback"];
  else if (values) config.values = values as unknown[];
  if (callback) config.callback = callback as QueryConfig["callback"];
  return config;
};
