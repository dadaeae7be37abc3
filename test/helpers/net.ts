// Small network probes the test helpers share (server.ts, and global-postgres.ts which must stay light:
// it runs before any test server code is loaded).
import { createServer } from "node:net";
import pg from "pg";

/** A port free on 127.0.0.1 right now (for configs that must name their port before the server starts). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Whether a PostgreSQL server accepts a connection at `url` (within 2 s). */
export async function postgresAnswers(url: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await c.connect();
    await c.end();
    return true;
  } catch {
    return false;
  }
}
