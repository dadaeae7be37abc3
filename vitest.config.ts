// Test runner configuration. One graphql instance (vitest could load two), decorator metadata through
// vite 8, and files run in parallel forks: every test starts its own servers on free ports; PostgreSQL
// comes from WEFT_TEST_PG_URL, the default URL, or a throwaway server started for the run.
import { createRequire } from "node:module";
import { defineConfig } from "vitest/config";

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: { alias: [{ find: /^graphql$/, replacement: require.resolve("graphql") }] },
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: ["test/helpers/setup.ts"],
    // A throwaway PostgreSQL when none is configured or answers (test/helpers/global-postgres.ts).
    globalSetup: ["test/helpers/global-postgres.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    maxWorkers: 2,
  },
});
