// Loading the pg driver (src/storage/pg-driver.ts) must not load Node's built-in fetch (its undici and
// llhttp wasm, ~6 MB in every idle PostgreSQL server): pg probes for Cloudflare Workers at load, by
// `navigator.userAgent` where Node has a `navigator` (21 and later), else with `new Response()`. Checked in
// a fresh node process, by the internal modules it loaded.
// A QueryConfig (made for one call) reaches pg's Query uncopied; any other config is still copied.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { QueryConfig } from "../../src/storage/pg-driver.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** Runs `code` (an ES module) in a fresh node with tsx; answers whether Node's fetch (undici) got loaded. */
function loadsFetch(code: string): boolean {
  const probe = `${code}\nconsole.log(JSON.stringify({ undici: process.moduleLoadList.some((m) => m.includes("undici")) }));`;
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", probe], { cwd: ROOT, encoding: "utf8" });
  expect(r.status, r.stderr).toBe(0);
  return (JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { undici: boolean }).undici;
}

describe("the pg driver", () => {
  it("loads without Node's built-in fetch", () => {
    expect(loadsFetch(`const { pg } = await import("./src/storage/pg-driver.ts"); if (typeof pg.Pool !== "function") throw new Error("no pg");`)).toBe(false);
  });
  it("(control) the probe sees Node's fetch once something touches it", () => {
    expect(loadsFetch(`new Response(null);`)).toBe(true);
  });
});

describe("query configs", () => {
  const require = createRequire(import.meta.url);
  const Query = require("pg/lib/query.js") as new (config: unknown, values?: unknown, callback?: unknown) => Record<string, unknown>;
  const types = { getTypeParser: () => (v: string) => v };

  it("a QueryConfig goes into pg's Query as it is: every field read, no copy made", () => {
    const config = new QueryConfig("SELECT $1::int AS x", "weft_test", [1], types);
    const utils = require("pg/lib/utils.js") as { normalizeQueryConfig(c: unknown, v?: unknown, cb?: unknown): unknown };
    expect(utils.normalizeQueryConfig(config)).toBe(config);
    const q = new Query(config);
    expect([q.text, q.name, q.values, q.types, q.portal]).toEqual(["SELECT $1::int AS x", "weft_test", [1], types, ""]);
    // A callback given beside it (pg-pool's query) lands on the config, as pg's own copy would carry it.
    const cb = () => {};
    expect((new Query(config, undefined, cb) as { callback: unknown }).callback).toBe(cb);
  });

  it("any other config is copied as before: the caller's object is left alone", () => {
    const plain = { text: "SELECT 1", values: [] as unknown[] };
    const cb = () => {};
    const q = new Query(plain, cb);
    expect(q.callback).toBe(cb);
    expect("callback" in plain).toBe(false);
  });
});
