// Persisted queries, on SQLite and PostgreSQL: Apollo's automatic persisted queries protocol over POST, GET
// and graphql-ws, behaving the same on each (hash unknown → PersistedQueryNotFound; hash + text registers;
// a wrong hash or version refused; a query registered on one transport runs by hash on another), the
// cache bounded by graphql.persisted_queries.cache_size, APQ switched off (PersistedQueryNotSupported),
// and the allow-list mode where only a manifest's operations run.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { gql, REGISTER, wsClient } from "./client.ts";

const sha = (q: string) => createHash("sha256").update(q).digest("hex");
const pq = (q: string) => ({ persistedQuery: { version: 1, sha256Hash: sha(q) } });

async function post(t: TestServer, body: Record<string, unknown>, token?: string) {
  const r = await t.call("POST", "/graphql", { body, token });
  return { status: r.status, body: r.json, cacheControl: r.headers.get("cache-control") };
}

async function get(t: TestServer, params: Record<string, unknown>, token?: string) {
  const q = new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, typeof v === "string" ? v : JSON.stringify(v)]));
  const r = await t.call("GET", `/graphql?${q}`, { token, headers: { "apollo-require-preflight": "true" } });
  return { status: r.status, body: r.json };
}

/** One graphql-ws operation; resolves with its result, or with the errors of a refused subscribe. */
function ws(t: TestServer, payload: { query: string; extensions?: Record<string, unknown>; variables?: Record<string, unknown> }, token?: string): Promise<{ data?: any; errors?: any[] }> {
  const client = wsClient(t, token ? { authorization: `Bearer ${token}` } : undefined);
  return new Promise((resolve, reject) => {
    let result: { data?: any; errors?: any[] } | undefined;
    client.subscribe<any>(payload as never, {
      next: (r) => { result = r as never; },
      error: (e) => (Array.isArray(e) ? resolve({ errors: e }) : reject(e)),
      complete: () => (result ? resolve(result) : reject(new Error("no result"))),
    });
  }).finally(() => client.dispose()) as never;
}

const firstCode = (r: { errors?: any[] }) => r.errors?.[0]?.extensions?.code;

describe.each(backends())("automatic persisted queries on %s", (backend) => {
  let t: TestServer;
  let token: string;
  beforeAll(async () => {
    t = await startTestServer({ backend, config: { graphql: { persisted_queries: { cache_size: 3 } } } });
    token = (await gql(t, REGISTER, { input: { username: "pat", password: "pat-pw" } })).body.data.register.accessToken;
  });
  afterAll(async () => { await t?.close(); });

  it("POST: an unknown hash is PersistedQueryNotFound; hash and text register it; then the hash alone runs", async () => {
    const q = "query Me { viewer { userId } }";
    const miss = await post(t, { extensions: pq(q) }, token);
    expect([miss.status, miss.body.errors?.[0]?.message, firstCode(miss.body)]).toEqual([200, "PersistedQueryNotFound", "PERSISTED_QUERY_NOT_FOUND"]);
    expect(miss.cacheControl).toBe("private, no-cache, must-revalidate");
    const register = await post(t, { query: q, extensions: pq(q) }, token);
    expect(register.body).toEqual({ data: { viewer: { userId: "@pat:weft.test" } } });
    const hit = await post(t, { extensions: pq(q) }, token);
    expect(hit.body).toEqual({ data: { viewer: { userId: "@pat:weft.test" } } });
  });

  it("GET: the same protocol in the query string", async () => {
    const q = "query MeAgain { viewer { userId isGuest } }";
    const miss = await get(t, { extensions: pq(q) }, token);
    expect(firstCode(miss.body)).toBe("PERSISTED_QUERY_NOT_FOUND");
    expect((await get(t, { query: q, extensions: pq(q) }, token)).body.data.viewer).toEqual({ userId: "@pat:weft.test", isGuest: false });
    expect((await get(t, { extensions: pq(q) }, token)).body.data.viewer).toEqual({ userId: "@pat:weft.test", isGuest: false });
  });

  it("graphql-ws: the same protocol (query \"\" with the hash), sharing the cache with HTTP", async () => {
    const q = "query OverWs { viewer { userId } }";
    const miss = await ws(t, { query: "", extensions: pq(q) }, token);
    expect([miss.errors?.[0]?.message, firstCode(miss)]).toEqual(["PersistedQueryNotFound", "PERSISTED_QUERY_NOT_FOUND"]);
    expect((await ws(t, { query: q, extensions: pq(q) }, token)).data).toEqual({ viewer: { userId: "@pat:weft.test" } });
    expect((await ws(t, { query: "", extensions: pq(q) }, token)).data).toEqual({ viewer: { userId: "@pat:weft.test" } });
    // Registered over the WebSocket, run by hash over HTTP; and the other way round.
    expect((await post(t, { extensions: pq(q) }, token)).body.data).toEqual({ viewer: { userId: "@pat:weft.test" } });
    const h = "query OverHttp { viewer { isGuest } }";
    await post(t, { query: h, extensions: pq(h) }, token);
    expect((await ws(t, { query: "", extensions: pq(h) }, token)).data).toEqual({ viewer: { isGuest: false } });
  });

  it("refuses a hash that is not the text's, and an unknown version, on every transport; an invalid text is not registered", async () => {
    const q = "{ viewer { userId } }";
    const wrong = { persistedQuery: { version: 1, sha256Hash: sha("something else") } };
    const bad = await post(t, { query: q, extensions: wrong }, token);
    expect([bad.status, bad.body.errors?.[0]?.message]).toEqual([400, "provided sha does not match query"]);
    expect((await ws(t, { query: q, extensions: wrong }, token)).errors?.[0]?.message).toBe("provided sha does not match query");
    const v2 = { persistedQuery: { version: 2, sha256Hash: sha(q) } };
    expect((await post(t, { query: q, extensions: v2 }, token)).body.errors?.[0]?.message).toBe("Unsupported persisted query version");
    expect((await ws(t, { query: q, extensions: v2 }, token)).errors?.[0]?.message).toBe("Unsupported persisted query version");
    const invalid = "{ viewer { noSuchField } }";
    expect(firstCode((await post(t, { query: invalid, extensions: pq(invalid) }, token)).body)).toBe("GRAPHQL_VALIDATION_FAILED");
    expect(firstCode((await post(t, { extensions: pq(invalid) }, token)).body)).toBe("PERSISTED_QUERY_NOT_FOUND");
    expect(firstCode(await ws(t, { query: invalid, extensions: pq(invalid) }, token))).toBe("GRAPHQL_VALIDATION_FAILED");
    expect(firstCode(await ws(t, { query: "", extensions: pq(invalid) }, token))).toBe("PERSISTED_QUERY_NOT_FOUND");
  });

  it("keeps at most cache_size texts (least recently used evicted)", async () => {
    const texts = [0, 1, 2, 3].map((i) => `query Bounded${i} { viewer { userId } }`);
    for (const q of texts) expect((await post(t, { query: q, extensions: pq(q) }, token)).body.errors).toBeUndefined();
    expect(t.hs.services.processState.persistedQueries!.cache.size).toBe(3);
    expect(firstCode((await post(t, { extensions: pq(texts[0]!) }, token)).body)).toBe("PERSISTED_QUERY_NOT_FOUND");
    for (const q of texts.slice(1)) expect((await post(t, { extensions: pq(q) }, token)).body.errors).toBeUndefined();
  });
});

describe("persisted queries switched off", () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer({ config: { graphql: { persisted_queries: { enabled: false } } } }); });
  afterAll(async () => { await t?.close(); });

  it("answers PersistedQueryNotSupported over HTTP and graphql-ws; plain queries run", async () => {
    const q = "{ loginFlows { type } }";
    const r = await post(t, { query: q, extensions: pq(q) });
    expect([r.body.errors?.[0]?.message, firstCode(r.body)]).toEqual(["PersistedQueryNotSupported", "PERSISTED_QUERY_NOT_SUPPORTED"]);
    const w = await ws(t, { query: q, extensions: pq(q) });
    expect([w.errors?.[0]?.message, firstCode(w)]).toEqual(["PersistedQueryNotSupported", "PERSISTED_QUERY_NOT_SUPPORTED"]);
    expect((await post(t, { query: q })).body.errors).toBeUndefined();
  });
});

describe.each(backends())("registered operations only on %s", (backend) => {
  let t: TestServer;
  let token: string;
  const allowed = "query Flows { loginFlows { type } }";
  const registerOp = "mutation ($input: RegisterInput!) { register(input: $input) { accessToken } }";
  beforeAll(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "weft-pq-"));
    const manifest = path.join(dir, "manifest.json");
    // Apollo's manifest format; graphql-codegen's {hash: text} map is read too (persisted-queries.ts).
    writeFileSync(manifest, JSON.stringify({ format: "apollo-persisted-query-manifest", version: 1, operations: [allowed, registerOp].map((body) => ({ id: sha(body), body, name: "x", type: "query" })) }));
    t = await startTestServer({ backend, config: { graphql: { persisted_queries: { only_registered: true, manifest } } } });
    token = (await post(t, { query: registerOp, variables: { input: { username: "reg", password: "reg-pw" } } })).body.data.register.accessToken;
  });
  afterAll(async () => { await t?.close(); });

  it("runs the manifest's operations by hash or by text, on both transports", async () => {
    expect((await post(t, { extensions: pq(allowed) })).body.data.loginFlows.length).toBeGreaterThan(0);
    expect((await post(t, { query: allowed })).body.data.loginFlows.length).toBeGreaterThan(0);
    expect((await get(t, { extensions: pq(allowed) })).body.data.loginFlows.length).toBeGreaterThan(0);
    expect((await ws(t, { query: "", extensions: pq(allowed) })).data.loginFlows.length).toBeGreaterThan(0);
  });

  it("refuses any other operation with PERSISTED_QUERY_NOT_IN_LIST, and registers nothing", async () => {
    const other = "{ viewer { userId } }";
    const r = await post(t, { query: other }, token);
    expect([r.status, firstCode(r.body), r.body.errors?.[0]?.extensions?.errcode, r.body.data]).toEqual([403, "PERSISTED_QUERY_NOT_IN_LIST", "M_FORBIDDEN", undefined]);
    expect(firstCode((await post(t, { query: other, extensions: pq(other) }, token)).body)).toBe("PERSISTED_QUERY_NOT_IN_LIST");
    expect(firstCode((await post(t, { extensions: pq(other) }, token)).body)).toBe("PERSISTED_QUERY_NOT_FOUND");
    expect(firstCode(await ws(t, { query: other }, token))).toBe("PERSISTED_QUERY_NOT_IN_LIST");
    expect(firstCode(await ws(t, { query: other, extensions: pq(other) }, token))).toBe("PERSISTED_QUERY_NOT_IN_LIST");
    expect(firstCode(await ws(t, { query: "", extensions: pq(other) }, token))).toBe("PERSISTED_QUERY_NOT_FOUND");
  });

  it("refuses to start with a manifest whose ids are not the texts' hashes", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "weft-pq-"));
    const manifest = path.join(dir, "bad.json");
    writeFileSync(manifest, JSON.stringify({ [sha("x")]: "query Y { viewer { userId } }" }));
    await expect(startTestServer({ backend: "sqlite", config: { graphql: { persisted_queries: { only_registered: true, manifest } } } })).rejects.toThrow(/not the SHA-256 of its text/);
  });
});
