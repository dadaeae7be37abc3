// Persisted queries on both transports: Apollo's automatic persisted queries protocol (APQ: a request's
// `extensions.persistedQuery = {version: 1, sha256Hash}` stands for the query text registered under that
// hash; an unknown hash answers PersistedQueryNotFound, code PERSISTED_QUERY_NOT_FOUND, and the client
// sends hash and text once to register it) and an operator allow-list (`graphql.persisted_queries
// .only_registered`: only the operations of a manifest file run, whatever the request sends).
// Over HTTP Apollo Server runs the protocol with this module's cache (apolloPersistedQueries); over graphql-ws, which
// does not go through Apollo, `resolveWsQuery` does the same (the hash-only form sends `query: ""`, since
// graphql-ws requires a string). One bounded cache per process (Services.processState), shared by both
// transports: a query registered over HTTP runs by hash over a WebSocket.
import { createHash } from "node:crypto";
import { GraphQLError } from "graphql";
import type { Services } from "../domain/services.ts";
import type { PersistedQueryStore } from "../domain/process-state.ts";
import { LruCache } from "../domain/cache/lru.ts";
import type { GraphqlConfig } from "../config/graphql.ts";

export const PERSISTED_QUERIES_DOC =
  "Persisted queries: Apollo's automatic persisted queries (extensions.persistedQuery {version: 1, sha256Hash}) over GET, POST and " +
  "graphql-ws (there send query \"\" with the hash); an unknown hash answers PERSISTED_QUERY_NOT_FOUND, so send the hash with the query " +
  "text once. A server may accept registered operations only (code PERSISTED_QUERY_NOT_IN_LIST).";

export const sha256Hex = (text: string) => createHash("sha256").update(text).digest("hex");

function store(s: Services): PersistedQueryStore {
  let st = s.processState.persistedQueries;
  if (!st) {
    const c = s.config.graphql.persisted_queries;
    // Weighed by text length (UTF-16 units, about bytes): a few huge texts cannot evict many small ones.
    const cache = new LruCache<string, string>("graphql_persisted_queries", c.cache_size, { weigh: (v) => v.length + 64, maxWeight: c.cache_size * 4096 });
    st = s.processState.persistedQueries = { cache, registered: c.registered };
  }
  return st;
}

const config = (s: Services): GraphqlConfig["graphql"]["persisted_queries"] => s.config.graphql.persisted_queries;

/** The text registered under `hash` (the manifest's first), if any. */
export function lookupPersisted(s: Services, hash: string): string | undefined {
  const st = store(s);
  return st.registered.get(hash) ?? st.cache.get(hash);
}

/** Registers a text that passed validation under its hash (not in only_registered mode: the manifest is the list). */
export function rememberPersisted(s: Services, hash: string, text: string): void {
  if (config(s).only_registered) return;
  store(s).cache.set(hash, text);
}

/** In only_registered mode, the refusal of an operation whose text's hash is not in the manifest. */
export function checkRegistered(s: Services, hash: string | undefined): GraphQLError | undefined {
  if (!config(s).only_registered || (hash !== undefined && store(s).registered.has(hash))) return undefined;
  return new GraphQLError("This server runs registered operations only", { extensions: { code: "PERSISTED_QUERY_NOT_IN_LIST", errcode: "M_FORBIDDEN", http: { status: 403 } } });
}

/** Apollo Server's `persistedQueries` option: its KeyValueCache over this process's store (keys come prefixed "apq:"). */
export function apolloPersistedQueries(s: Services) {
  if (!config(s).enabled) return false as const;
  const hashOf = (key: string) => key.replace(/^apq:/, "");
  return {
    cache: {
      get: async (key: string) => lookupPersisted(s, hashOf(key)),
      set: async (key: string, value: string) => rememberPersisted(s, hashOf(key), value),
      delete: async (key: string) => store(s).cache.delete(hashOf(key)),
    },
  };
}

const apqError = (message: string, code: string) => new GraphQLError(message, { extensions: { code, errcode: "M_UNRECOGNIZED" } });

/**
 * The query a graphql-ws subscribe payload runs, by the same rules as Apollo's over HTTP: its text and
 * hash, whether it registers the text once valid, or the protocol's error.
 */
export function resolveWsQuery(s: Services, query: string, extensions: Record<string, unknown> | undefined): { query: string; hash: string; register: boolean } | GraphQLError {
  const pq = extensions?.persistedQuery as { version?: unknown; sha256Hash?: unknown } | undefined;
  if (pq === undefined || pq === null) return { query, hash: sha256Hex(query), register: false };
  if (!config(s).enabled) return apqError("PersistedQueryNotSupported", "PERSISTED_QUERY_NOT_SUPPORTED");
  if (typeof pq !== "object" || pq.version !== 1) return new GraphQLError("Unsupported persisted query version", { extensions: { code: "BAD_REQUEST", errcode: "M_BAD_JSON" } });
  if (typeof pq.sha256Hash !== "string") return new GraphQLError("persistedQuery.sha256Hash must be a string", { extensions: { code: "BAD_REQUEST", errcode: "M_BAD_JSON" } });
  if (query === "") {
    const found = lookupPersisted(s, pq.sha256Hash);
    return found === undefined ? apqError("PersistedQueryNotFound", "PERSISTED_QUERY_NOT_FOUND") : { query: found, hash: pq.sha256Hash, register: false };
  }
  if (sha256Hex(query) !== pq.sha256Hash) return new GraphQLError("provided sha does not match query", { extensions: { code: "BAD_REQUEST", errcode: "M_BAD_JSON" } });
  return { query, hash: pq.sha256Hash, register: true };
}
