// The GraphQL face's limits over HTTP and graphql-ws: query text nested past the parser's safe depth,
// too many tokens, selections deeper than MAX_QUERY_DEPTH, operations costing more than MAX_QUERY_COST,
// and over-deep JSON bodies — each refused with extensions.errcode and no 5xx; ordinary queries pass.
// Every request error carries an errcode too (parse, validation, variables).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildWeftSchema } from "../../src/graphql/schema.ts";
import { MAX_QUERY_COST, MAX_QUERY_DEPTH, MAX_QUERY_TOKENS, operationCost } from "../../src/graphql/limits.ts";
import { parse } from "graphql";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { errcode, gql, REGISTER, wsClient, wsRun } from "./client.ts";

/**
 * A query selecting 8 + 3 × hops levels deep: viewer → rooms → edges → node → timeline → edges → node →
 * eventId is 8, and each hop through an event's relations (relations → edges → node) adds 3.
 */
function deepQuery(hops: number, wrap = (inner: string) => `{ viewer { ${inner} } }`): string {
  let inner = "eventId";
  for (let i = 0; i < hops; i++) inner = `relations(first: 2) { edges { node { ${inner} } } }`;
  return wrap(`rooms(first: 2) { edges { node { timeline(last: 2) { edges { node { ${inner} } } } } } }`);
}

describe("GraphQL limits", () => {
  let t: TestServer;
  let token: string;
  beforeAll(async () => {
    t = await startTestServer();
    token = (await gql(t, REGISTER, { input: { username: "lim", password: "lim-pw" } })).body.data.register.accessToken;
  });
  afterAll(async () => {
    await t?.close();
  });

  const expectRefused = (r: { status: number; body: any }, code: string, label: string) => {
    expect(r.status, label).toBeLessThan(500);
    expect(r.body.data ?? null, label).toBeNull();
    expect(errcode(r.body), `${label}: ${JSON.stringify(r.body).slice(0, 300)}`).toBe(code);
  };

  it("states the limits in the schema: introspection of the Query type tells them", async () => {
    const r = await gql(t, `{ __type(name: "Query") { description } }`);
    const doc = r.body.data.__type.description as string;
    for (const n of [MAX_QUERY_TOKENS, MAX_QUERY_DEPTH, MAX_QUERY_COST]) expect(doc).toContain(String(n));
    expect(doc).toMatch(/M_TOO_LARGE/);
    expect(doc).toMatch(/persistedQuery/);
  });

  it("refuses text nested past the parser's safe depth, over HTTP and WebSocket", async () => {
    for (const q of [`{ viewer ${"{ a ".repeat(20_000)}${"}".repeat(20_000)} }`, `{ room(roomId: ${"[".repeat(20_000)}${"]".repeat(20_000)}) { roomId } }`]) {
      expectRefused(await gql(t, q, undefined, token), "M_TOO_LARGE", "http");
      const c = wsClient(t, { authorization: `Bearer ${token}` });
      try {
        await expect(wsRun(c, q)).rejects.toSatisfy((errs: any) => Array.isArray(errs) && errs[0]?.extensions?.errcode === "M_TOO_LARGE");
      } finally {
        await c.dispose();
      }
    }
  });

  it("refuses documents with too many tokens", async () => {
    const q = `{ viewer { ${Array.from({ length: MAX_QUERY_TOKENS }, (_, i) => `a${i}: userId`).join(" ")} } }`;
    expectRefused(await gql(t, q, undefined, token), "M_BAD_JSON", "tokens");
  });

  it("refuses selections deeper than MAX_QUERY_DEPTH and accepts shallower ones", async () => {
    const hopsWithin = Math.floor((MAX_QUERY_DEPTH - 8) / 3);
    const ok = await gql(t, deepQuery(hopsWithin), undefined, token);
    expect(ok.body.errors, JSON.stringify(ok.body.errors)).toBeUndefined();
    expectRefused(await gql(t, deepQuery(hopsWithin + 1), undefined, token), "M_TOO_LARGE", "depth");
    // Through fragments too.
    const frag = deepQuery(hopsWithin + 1, (inner) => `query { viewer { ...A } } fragment A on Viewer { ${inner} }`);
    expectRefused(await gql(t, frag, undefined, token), "M_TOO_LARGE", "fragment depth");
  });

  it("refuses operations whose estimated cost is too high, counting variables", async () => {
    const q = `query ($n: Int) { viewer { rooms(first: $n) { edges { node { timeline(last: $n) { edges { node { eventId content sender type } } } } } } } }`;
    const schema = await buildWeftSchema();
    expect(operationCost(schema, parse(q), undefined, { n: 10 })).toBeLessThan(MAX_QUERY_COST);
    expect(operationCost(schema, parse(q), undefined, { n: 1000 })).toBeGreaterThan(MAX_QUERY_COST);
    const ok = await gql(t, q, { n: 10 }, token);
    expect(ok.body.errors, JSON.stringify(ok.body.errors)).toBeUndefined();
    expectRefused(await gql(t, q, { n: 1000 }, token), "M_TOO_LARGE", "cost");
    const aliases = `{ ${Array.from({ length: 200 }, (_, i) => `v${i}: viewer { rooms(first: 100) { edges { node { roomId name topic } } } }`).join(" ")} }`;
    expectRefused(await gql(t, aliases, undefined, token), "M_TOO_LARGE", "aliases");
    const c = wsClient(t, { authorization: `Bearer ${token}` });
    try {
      await expect(wsRun(c, q, { n: 1000 })).rejects.toSatisfy((errs: any) => errs[0]?.extensions?.errcode === "M_TOO_LARGE");
      const fine = await wsRun(c, q, { n: 5 });
      expect(fine.errors).toBeUndefined();
    } finally {
      await c.dispose();
    }
  });

  it("refuses a subscription over HTTP with an errcode (subscriptions are served over graphql-ws)", async () => {
    const r = await gql(t, `subscription { typing(roomId: "!x:weft.test") { userIds } }`, undefined, token);
    expect(r.status).toBe(400);
    expect(errcode(r.body)).toBe("M_UNRECOGNIZED");
  });

  it("gives every request error an errcode", async () => {
    expect(errcode((await gql(t, "{ viewer {", undefined, token)).body)).toBe("M_BAD_JSON");
    expect(errcode((await gql(t, "{ nope }", undefined, token)).body)).toBe("M_BAD_JSON");
    expect(errcode((await gql(t, "query ($x: Int!) { viewer { userId } }", { x: "s" }, token)).body)).toBe("M_BAD_JSON");
    const notJson = await t.call("POST", "/graphql", { raw: "{", headers: { "content-type": "application/json" } });
    expect(notJson.status).toBe(400);
    expect(errcode(notJson.json)).toBe("M_NOT_JSON");
    const deepBody = await t.call("POST", "/graphql", { raw: `{"query":"{ viewer { userId } }","extensions":${"[".repeat(5000)}${"]".repeat(5000)}}`, headers: { "content-type": "application/json" } });
    expect([deepBody.status, errcode(deepBody.json)]).toEqual([400, "M_BAD_JSON"]);
  });
});
