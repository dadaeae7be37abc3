// The pg driver, loaded without its Cloudflare Workers probe: at load, pg asks whether it runs in a Worker
// by constructing a `Response` when `navigator` is missing (Node 20 has none), and that first touch of
// the global loads Node's whole built-in fetch (undici and its llhttp wasm, ~2 MB of heap and more
// outside it) into a server that never fetches. A `navigator` that says Node.js is present only while
// pg loads. Every PostgreSQL module of ours takes pg from here (sql-postgres.ts, migrate.ts).
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
