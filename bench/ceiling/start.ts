// Starts bench/ceiling/server.ts (the send ceiling of this machine) in its own process on a fresh SQLite
// file, with the node flags Weft runs with, and stops it. Used by bench/send-vs-peer.ts.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort, SERVER_NODE_ARGS, waitForVersions } from "../homeserver.ts";

export interface CeilingServer {
  base: string;
  pid: number;
  stop(): Promise<void>;
}

export async function startCeiling(): Promise<CeilingServer> {
  const dir = mkdtempSync(path.join(tmpdir(), "weft-ceiling-"));
  const port = await freePort();
  const script = path.join(import.meta.dirname, "server.ts");
  const child = spawn(process.execPath, [...SERVER_NODE_ARGS, "--import", "tsx", script, path.join(dir, "ceiling.db"), String(port)], { stdio: ["ignore", "ignore", "inherit"] });
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitForVersions(`${base}`, child);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    base,
    pid: child.pid!,
    async stop() {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await new Promise((r) => child.once("exit", r));
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
