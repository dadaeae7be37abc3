// Durability of acknowledged sends (issue 17's guarantee behind the group commit): a server process
// killed with SIGKILL right after answering a burst of concurrent sends has every answered event after a
// restart, once each, and a retried transaction id still answers with its first event; the search index
// (written after the commit) then finds each once. The server runs
// as operators run it (`weft start`, its own process), on SQLite and PostgreSQL.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import YAML from "yaml";
import { afterEach, describe, expect, it } from "vitest";
import { generateConfig } from "../../src/config/generate.ts";
import { sharedSecretMac } from "../../src/domain/admin/shared-secret-registration.ts";
import { backends, freePort, makePgDatabase } from "../helpers/server.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const CLI = path.join(ROOT, "src/cli.ts");

interface Running {
  child: ChildProcess;
  exited: Promise<NodeJS.Signals | null>;
}

function start(configPath: string): Running {
  // node itself runs the server (tsx as its loader): the process a signal reaches is the server. Through
  // the tsx launcher, a SIGKILL would kill the launcher and leave the server running.
  const child = spawn(process.execPath, ["--import", "tsx", CLI, "start", "-c", configPath], { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"] });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once("exit", (_code, signal) => resolve(signal)));
  return { child, exited };
}

async function waitForVersions(base: string, r: Running): Promise<void> {
  let gone = false;
  void r.exited.then(() => (gone = true));
  for (const deadline = Date.now() + 90_000; Date.now() < deadline; ) {
    if (gone) throw new Error("the server exited before answering");
    try {
      if ((await fetch(`${base}/_matrix/client/versions`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error("the server did not answer /versions");
}

async function call(base: string, method: string, url: string, token: string | undefined, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe.each(backends())("acknowledged sends survive SIGKILL on %s", (backend) => {
  it("every answered event is there after a restart, once, and its transaction id still answers with it", { timeout: 240_000 }, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "weft-sigkill-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    let databaseUrl: string | undefined;
    if (backend === "postgres") {
      const db = await makePgDatabase();
      cleanups.push(() => db.drop());
      databaseUrl = db.url;
    }
    const port = await freePort();
    const generated = await generateConfig({ serverName: "sigkill.test", configPath: path.join(dir, "homeserver.yaml"), port, databaseUrl });
    const cfg = YAML.parse(readFileSync(generated.configPath, "utf8"));
    Object.assign(cfg, { rc_message: { per_second: 1e6, burst_count: 1e6 }, rc_registration: { per_second: 1e6, burst_count: 1e6 }, log_level: "warn", password_config: { scrypt_log_n: 4 } });
    writeFileSync(generated.configPath, YAML.stringify(cfg));
    const base = `http://127.0.0.1:${port}`;

    let server = start(generated.configPath);
    cleanups.push(() => void (server.child.exitCode === null && server.child.signalCode === null && server.child.kill("SIGKILL")));
    await waitForVersions(base, server);
    const { json: nonce } = await call(base, "GET", "/_synapse/admin/v1/register", undefined);
    const mac = sharedSecretMac(generated.registrationSharedSecret, { nonce: nonce.nonce, username: "alice", password: "pw", admin: false });
    const { json: reg } = await call(base, "POST", "/_synapse/admin/v1/register", undefined, { nonce: nonce.nonce, username: "alice", password: "pw", admin: false, mac });
    const token: string = reg.access_token;
    const { json: room } = await call(base, "POST", "/_matrix/client/v3/createRoom", token, { preset: "private_chat" });
    const roomId: string = room.room_id;
    const sendPath = (txn: string) => `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/send/m.room.message/${txn}`;

    // Bursts of concurrent sends (group commits of several messages), killed right after the last answer.
    const answered = new Map<string, string>();
    for (let burst = 0; burst < 6; burst++) {
      await Promise.all(
        Array.from({ length: 10 }, async (_, i) => {
          const txn = `t${burst}-${i}`;
          const r = await call(base, "PUT", sendPath(txn), token, { msgtype: "m.text", body: `message ${txn}` });
          expect(r.status).toBe(200);
          answered.set(txn, r.json.event_id);
        }),
      );
    }
    server.child.kill("SIGKILL");
    expect(await server.exited).toBe("SIGKILL");
    // The server itself is gone (no process left behind answering on its port).
    expect(() => process.kill(server.child.pid!, 0)).toThrow(/ESRCH/);
    await expect(fetch(`${base}/_matrix/client/versions`)).rejects.toThrow();

    server = start(generated.configPath);
    await waitForVersions(base, server);
    for (const [txn, eventId] of answered) {
      const e = await call(base, "GET", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/event/${encodeURIComponent(eventId)}`, token);
      expect(e.status, txn).toBe(200);
      expect(e.json.content.body).toBe(`message ${txn}`);
      const again = await call(base, "PUT", sendPath(txn), token, { msgtype: "m.text", body: `message ${txn}` });
      expect(again.json.event_id, txn).toBe(eventId);
    }
    const page = await call(base, "GET", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/messages?dir=b&limit=200`, token);
    const messages = page.json.chunk.filter((e: { type: string }) => e.type === "m.room.message").map((e: { event_id: string }) => e.event_id);
    expect(messages.length).toBe(answered.size);
    expect(new Set(messages)).toEqual(new Set(answered.values()));
    // The search index, written after the commits (src/domain/search/index-consumer.ts) and killed with
    // the process mid-way, holds every answered message once after the restart.
    const found = await call(base, "POST", "/_matrix/client/v3/search", token, {
      search_categories: { room_events: { search_term: "message", order_by: "recent", filter: { limit: 100 } } },
    });
    expect(found.status).toBe(200);
    const hits = found.json.search_categories.room_events;
    expect(hits.count).toBe(answered.size);
    const hitIds = hits.results.map((r: { result: { event_id: string } }) => r.result.event_id);
    expect(hitIds.length).toBe(answered.size);
    expect(new Set(hitIds)).toEqual(new Set(answered.values()));
    server.child.kill("SIGTERM");
    await server.exited;
  });
});
