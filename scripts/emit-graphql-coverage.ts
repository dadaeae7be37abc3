// Writes docs/graphql-coverage.md from the coverage table src/graphql/coverage.ts (`npm run coverage:graphql`).
// test/graphql/coverage.test.ts fails when the committed file no longer matches the table.
import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { renderCoverage } from "../src/graphql/coverage.ts";

const target = fileURLToPath(new URL("../docs/graphql-coverage.md", import.meta.url));
mkdirSync(fileURLToPath(new URL("../docs/", import.meta.url)), { recursive: true });
writeFileSync(target, renderCoverage());
console.log(`wrote ${target}`);
