// The REST → GraphQL coverage table (src/graphql/coverage.ts, issue 39): every client-server REST
// operation the server registers has a row — a GraphQL counterpart or a written reason —, every row is a
// route the running server serves, every counterpart names fields the schema has, and
// docs/graphql-coverage.md is the table as rendered. The routes are read from the registration helpers
// (ROUTE_GROUPS, the list main.ts registers) with a test server's services, with the experimental
// features that add client routes turned on, and each is checked against the running server's router.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Fastify from "fastify";
import { isObjectType, type GraphQLSchema } from "graphql";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { ROUTE_GROUPS } from "../../src/compat/routes.ts";
import { buildWeftSchema } from "../../src/graphql/schema.ts";
import { REST_TO_GRAPHQL, isNotYet, renderCoverage } from "../../src/graphql/coverage.ts";

/** The canonical prefixes of the client-server API (their aliases are rewritten to them: path-aliases.ts). */
const CLIENT_PREFIXES = ["/_matrix/client/", "/_matrix/media/"];
/** Experimental features that register client routes only when on. */
const ROUTE_FEATURES = { msc4108_enabled: true, msc4306_enabled: true, msc3391_enabled: true };

describe.each(backends())("REST → GraphQL coverage (%s)", (backend) => {
  let t: TestServer;
  let schema: GraphQLSchema;
  let operations: string[];

  beforeAll(async () => {
    t = await startTestServer({ backend, config: { experimental_features: ROUTE_FEATURES } });
    schema = await buildWeftSchema();
    const recorder = Fastify();
    const seen = new Set<string>();
    recorder.addHook("onRoute", (r) => {
      for (const m of [r.method].flat()) if (m !== "HEAD" && CLIENT_PREFIXES.some((p) => r.url.startsWith(p))) seen.add(`${m} ${r.url}`);
    });
    for (const group of ROUTE_GROUPS) group(recorder as never, t.hs.services);
    await recorder.ready();
    await recorder.close();
    operations = [...seen].sort();
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it("enumerates the client routes the running server serves", () => {
    // Sanity: the enumeration found the REST face (a broken recorder would pass every check below).
    expect(operations.length).toBeGreaterThan(150);
    for (const key of ["POST /_matrix/client/v3/login", "GET /_matrix/client/v3/sync", "PUT /_matrix/client/v3/rooms/:roomId/send/:eventType/:txnId"]) expect(operations).toContain(key);
    for (const key of operations) {
      const [method, url] = key.split(" ") as [string, string];
      expect(t.hs.app.hasRoute({ method: method as "GET", url }), key).toBe(true);
    }
  });

  it("has a row for every registered client operation, and no row for an unregistered one", () => {
    const missing = operations.filter((k) => !(k in REST_TO_GRAPHQL));
    expect(missing, "REST client operations with no row in src/graphql/coverage.ts").toEqual([]);
    const stale = Object.keys(REST_TO_GRAPHQL).filter((k) => !operations.includes(k));
    expect(stale, "rows of src/graphql/coverage.ts naming no registered route").toEqual([]);
  });

  it("names only fields the schema has, and gives a reason where it names none", () => {
    const bad: string[] = [];
    for (const [key, c] of Object.entries(REST_TO_GRAPHQL)) {
      if ("none" in c) {
        if (c.none.trim().length < 7) bad.push(`${key}: no reason`);
        continue;
      }
      if (c.graphql.length === 0) bad.push(`${key}: no field`);
      const root = c.graphql[0]?.split(".")[0];
      if (!["Query", "Mutation", "Subscription"].includes(root ?? "")) bad.push(`${key}: ${c.graphql[0]} is not a root field`);
      for (const coordinate of c.graphql) {
        const [typeName, field] = coordinate.split(".") as [string, string | undefined];
        const type = schema.getType(typeName);
        if (!type || !isObjectType(type) || !field || !(field in type.getFields())) bad.push(`${key}: ${coordinate} is not in the schema`);
      }
    }
    expect(bad).toEqual([]);
  });

  it("is what docs/graphql-coverage.md shows", () => {
    const committed = readFileSync(new URL("../../docs/graphql-coverage.md", import.meta.url), "utf8");
    expect(renderCoverage(), "docs/graphql-coverage.md is out of date: run `npm run coverage:graphql` and commit it").toBe(committed);
    const notYet = Object.values(REST_TO_GRAPHQL).filter(isNotYet).length;
    expect(committed).toContain(`${notYet} not yet`);
  });
});
