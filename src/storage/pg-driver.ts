// The pg driver, with its query configs taken uncopied. Every PostgreSQL module of ours takes pg from here
// (sql-postgres.ts, migrate.ts). (pg's Cloudflare Workers probe reads `navigator`, a global since Node 21:
// it no longer constructs a `Response`, which loaded Node's whole built-in fetch into every server on
// Node 20; test/unit/pg-driver.test.ts checks that it stays so.)
//
// pg copies every query config it is given, property descriptor by property descriptor, so that it never
// changes the caller's object (`normalizeQueryConfig`): 1–2 µs a query, on every statement a send makes.
// A config made for one call only (`QueryConfig` below) is nobody else's, and goes in uncopied.
import { createRequire } from "node:module";
import type * as Pg from "pg";

const require = createRequire(import.meta.url);

export const pg = require("pg") as typeof Pg;

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
