// The peer homeserver of bench/send-vs-peer.ts: matrix-server-node, installed outside this repository by
// bench/peer/install.sh (its own Node 22), started in its own process on a fresh SQLite file or PostgreSQL
// database with its rate limits off, as the comparison ran it. Users register with m.login.dummy.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { createPgDatabase, dropPgDatabase, freePort, json, waitForVersions, type Backend } from "../homeserver.ts";

export interface PeerServer {
  base: string;
  register(username: string): Promise<string>;
  stop(): Promise<void>;
  pid: number;
}

/** Installs (once; idempotent) and returns the peer's directory: `node/` (Node 22) and `src/` (the server). */
export function installPeer(): string {
  const script = path.join(import.meta.dirname, "install.sh");
  const r = spawnSync("bash", [script], { stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" });
  if (r.status !== 0) throw new Error(`bench/peer/install.sh failed (exit ${r.status})`);
  return r.stdout.trim().split("\n").pop() || (process.env.WEFT_PEER_DIR ?? path.join(homedir(), ".cache", "weft-peer"));
}

export async function startPeer(dir: string, backend: Backend): Promise<PeerServer> {
  const data = mkdtempSync(path.join(tmpdir(), "weft-peer-"));
  const port = await freePort();
  let dbName: string | undefined;
  const env: Record<string, string> = { PORT: String(port), SERVER_NAME: "peer.local", DISABLE_RATE_LIMIT: "1" };
  if (backend === "postgres") {
    const db = await createPgDatabase("weft_peer");
    dbName = db.name;
    Object.assign(env, { STORAGE: "postgres", DATABASE_URL: db.url });
  } else Object.assign(env, { STORAGE: "sqlite", DATABASE_PATH: path.join(data, "matrix.db") });
  const child = spawn(path.join(dir, "node", "bin", "node"), ["src/index.ts"], {
    cwd: path.join(dir, "src"),
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, ...env },
  });
  const base = `http://127.0.0.1:${port}`;
  await waitForVersions(base, child);
  const register = async (username: string): Promise<string> =>
    (await json(`${base}/_matrix/client/v3/register`, { method: "POST", body: JSON.stringify({ username, password: "password1", auth: { type: "m.login.dummy" } }) })).access_token;
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    }
    rmSync(data, { recursive: true, force: true });
    if (dbName) await dropPgDatabase(dbName);
  };
  return { base, register, stop, pid: child.pid! };
}
