// Writes a new migration for both providers: the SQL taking the last migrated model
// (prisma/migrations/models.snapshot.prisma) to the current prisma/models.prisma.
// Usage: npm run migrations:new -- NAME   (PostgreSQL must be reachable at WEFT_PG_URL for its dialect.)
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import { diffDatamodels, loadSchemaEngine } from "../src/storage/schema-engine.ts";
// @ts-expect-error plain .mjs helper without types
import { providerSchemas } from "./prisma-generate.mjs";

const name = process.argv[2];
if (!name || !/^[a-z0-9_]+$/.test(name)) {
  console.error("usage: npm run migrations:new -- name_in_snake_case");
  process.exit(2);
}
const snapshotPath = "prisma/migrations/models.snapshot.prisma";
const models = readFileSync("prisma/models.prisma", "utf8");
const previous = existsSync(snapshotPath) ? readFileSync(snapshotPath, "utf8") : null;
if (previous === models) {
  console.log("prisma/models.prisma has not changed since the last migration");
  process.exit(0);
}
const schemas = providerSchemas() as { sqlite: string; postgres: string };
const withHeader = (provider: "sqlite" | "postgres", m: string | null) =>
  m === null ? null : schemas[provider].replace(models, m);
const stamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14);
const folder = `${stamp}_${name}`;
const pgUrl = process.env.WEFT_PG_URL ?? "postgresql://weft:weft@127.0.0.1:5432/weft";

for (const provider of ["sqlite", "postgres"] as const) {
  const factory = provider === "sqlite" ? new PrismaBetterSqlite3({ url: ":memory:" }) : new PrismaPg({ connectionString: pgUrl });
  const engine = await loadSchemaEngine(factory);
  const sql = await diffDatamodels(engine, withHeader(provider, previous), schemas[provider]);
  const dir = `prisma/migrations/${provider}/${folder}`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/migration.sql`, sql);
  console.log(`wrote ${dir}/migration.sql (${sql.length} bytes)`);
}
writeFileSync(snapshotPath, models);
process.exit(0);
