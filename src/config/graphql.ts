// The GraphQL face's options (Weft's own; Synapse has no GraphQL): `graphql.persisted_queries` — Apollo's
// automatic persisted queries on or off, how many query texts the process keeps by hash, and an operator
// allow-list mode where only the operations of a manifest file run (src/graphql/persisted-queries.ts).
// The manifest is read and checked here, at start-up: a bad one stops the server with its reason.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { ConfigError } from "./errors.ts";
import type { Reader } from "./config.ts";

export interface GraphqlConfig {
  graphql: {
    persisted_queries: {
      /** Automatic persisted queries accepted (default true). */
      enabled: boolean;
      /** Query texts kept by hash (least recently used evicted). */
      cache_size: number;
      /** Only the manifest's operations run (an allow-list); others are refused with PERSISTED_QUERY_NOT_IN_LIST. */
      only_registered: boolean;
      /** The manifest's operations by SHA-256 of their text (empty without `manifest`). */
      registered: ReadonlyMap<string, string>;
    };
  };
}

const sha256Hex = (text: string) => createHash("sha256").update(text).digest("hex");

/**
 * Reads an operation manifest: Apollo's persisted query manifest (`{format: "apollo-persisted-query-manifest",
 * operations: [{id, body}]}`) or graphql-codegen's persisted documents (`{"sha256:<hex>": "<text>"}`, the prefix optional). Each
 * id must be the SHA-256 of its text (what clients send as sha256Hash).
 */
export function readManifest(file: string, name = "graphql.persisted_queries.manifest"): Map<string, string> {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new ConfigError(name, `cannot read ${file}: ${(err as Error).message}`);
  }
  const ops = json && typeof json === "object" ? (json as { operations?: unknown }).operations : undefined;
  const entries: [unknown, unknown][] = Array.isArray(ops)
    ? ops.map((o: { id?: unknown; body?: unknown }) => [o?.id, o?.body])
    : Object.entries((json ?? {}) as Record<string, unknown>).map(([id, body]): [unknown, unknown] => [id.replace(/^sha256:/, ""), body]);
  const out = new Map<string, string>();
  for (const [id, body] of entries) {
    if (typeof id !== "string" || typeof body !== "string") throw new ConfigError(name, `${file}: every operation needs a string id and body`);
    if (sha256Hex(body) !== id) throw new ConfigError(name, `${file}: operation ${id} is not the SHA-256 of its text`);
    out.set(id, body);
  }
  return out;
}

export function readGraphqlConfig(r: Reader, baseDir: string): GraphqlConfig {
  const pq = r.section("graphql").section("persisted_queries");
  const manifest = pq.optString("manifest");
  const only = pq.bool("only_registered", false);
  if (only && !manifest) throw new ConfigError("graphql.persisted_queries.only_registered", "needs graphql.persisted_queries.manifest (the operations to allow)");
  return {
    graphql: {
      persisted_queries: {
        enabled: pq.bool("enabled", true),
        cache_size: pq.number("cache_size", 1000, { min: 1, max: 1_000_000, integer: true }),
        only_registered: only,
        registered: manifest ? readManifest(path.resolve(baseDir, manifest)) : new Map(),
      },
    },
  };
}
