// schema.graphql is generated and committed: this fails when it no longer matches the resolvers.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { buildWeftSchema, printWeftSchema } from "../../src/graphql/schema.ts";

describe("schema.graphql", () => {
  it("matches what the resolvers produce", async () => {
    const committed = readFileSync(new URL("../../schema.graphql", import.meta.url), "utf8");
    const current = printWeftSchema(await buildWeftSchema());
    expect(current, "schema.graphql is out of date: run `npm run schema:graphql` and commit it").toBe(committed);
  });
});
