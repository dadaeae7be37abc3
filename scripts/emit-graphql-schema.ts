// Writes schema.graphql from the resolvers (`npm run schema:graphql`). The file is committed and reviewed;
// test/graphql/schema.test.ts fails when it no longer matches what the resolvers produce.
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { buildWeftSchema, printWeftSchema } from "../src/graphql/schema.ts";

const target = fileURLToPath(new URL("../schema.graphql", import.meta.url));
writeFileSync(target, printWeftSchema(await buildWeftSchema()));
console.log(`wrote ${target}`);
