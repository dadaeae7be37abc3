// The `weft` command line end to end, as real processes: --help of every command, generate-config into
// a temp folder, start it on a free port, register-user with the generated shared secret, log in over
// HTTP, SIGTERM and a clean exit 0; a config with an invalid option exits 1 naming it.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { freePort } from "./helpers/server.ts";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "..");
const CLI = path.join(ROOT, "src/cli.ts");

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Starts `node --import tsx src/cli.ts ...args` with stdin closed (not a terminal): node itself is the
 * child, so a signal reaches the server (the tsx launcher would leave it running after a SIGKILL).
 */
function spawnCli(args: string[], env: Record<string, string> = {}): ChildProcess & { output: () => { stdout: string; stderr: string }; done: Promise<Run> } {
  const child = spawn(process.execPath, ["--import", "tsx", CLI, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<Run>((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
  return Object.assign(child, { output: () => ({ stdout, stderr }), done });
}

const runCli = (args: string[], env?: Record<string, string>) => spawnCli(args, env).done;


/** Polls until `url` answers 200, the process exits, or `timeoutMs` passes. */
async function waitForHttp(url: string, proc: ReturnType<typeof spawnCli>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void proc.done.then(() => (exited = true));
  while (Date.now() < deadline) {
    if (exited) throw new Error(`the server exited before answering:\n${proc.output().stderr}`);
    try {
      const res = await fetch(url);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms:\n${proc.output().stderr}`);
}

describe("weft --help", () => {
  it("prints the commands", async () => {
    const r = await runCli(["--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Usage: weft <command>");
    for (const cmd of ["generate-config", "start", "register-user", "media-upload"]) expect(r.stdout).toContain(cmd);
  });

  it.each([
    ["generate-config", ["--server-name", "--config", "--data-dir", "--port", "--database-url"]],
    ["start", ["--config", "--auto", "WEFT_CONFIG"]],
    ["register-user", ["--user", "--password", "--admin", "--no-admin", "--config", "--shared-secret", "--user-type", "SERVER_URL"]],
    ["media-upload", ["--config", "--delete-local"]],
  ])("%s --help lists its options", async (cmd, options) => {
    const r = await runCli([cmd, "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Usage: weft ${cmd}`);
    for (const o of options) expect(r.stdout).toContain(o);
  });

  it("refuses unknown commands and options with exit status 2", async () => {
    const unknown = await runCli(["frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
    const badOption = await runCli(["start", "--frobnicate"]);
    expect(badOption.code).toBe(2);
    expect(badOption.stderr).toContain("--frobnicate");
  });
});

describe("generate-config, start, register-user", () => {
  let dir: string;
  let port: number;
  let configPath: string;
  let server: ReturnType<typeof spawnCli> | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "weft-cli-"));
    port = await freePort();
    configPath = path.join(dir, "homeserver.yaml");
  });
  afterAll(async () => {
    if (server && server.exitCode === null && server.signalCode === null) {
      server.kill("SIGKILL");
      await server.done;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it("generate-config writes a commented config and a signing key, and never overwrites", async () => {
    const r = await runCli(["generate-config", "--server-name", "localhost", "--config", configPath, "--port", String(port)]);
    expect(r.code, r.stderr).toBe(0);
    const text = readFileSync(configPath, "utf8");
    expect(text).toMatch(/^# /m);
    expect(text).toContain('server_name: "localhost"');
    expect(text).toContain(`public_baseurl: "http://localhost:${port}/"`);
    expect(text).toContain(`- port: ${port}`);
    expect(text).toContain('database: "data/homeserver.db"');
    expect(text).toContain('signing_key_path: "data/localhost.signing.key"');
    expect(text).toMatch(/registration_shared_secret: "[A-Za-z0-9_-]{32,}"/);
    expect(readFileSync(path.join(dir, "data/localhost.signing.key"), "utf8")).toMatch(/^ed25519 a_[A-Za-z]{4} [A-Za-z0-9+/]{43}\n$/);

    const again = await runCli(["generate-config", "--server-name", "other", "--config", configPath]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already exists");
    expect(readFileSync(configPath, "utf8")).toBe(text);
  });

  it("generate-config refuses bad options", async () => {
    const missing = await runCli(["generate-config", "--config", path.join(dir, "x.yaml")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--server-name");
    const badName = await runCli(["generate-config", "--server-name", "bad name", "--config", path.join(dir, "x.yaml")]);
    expect(badName.code).toBe(1);
    expect(badName.stderr).toContain("--server-name");
    const badDb = await runCli(["generate-config", "--server-name", "a.b", "--config", path.join(dir, "x.yaml"), "--database-url", "mysql://x"]);
    expect(badDb.code).toBe(1);
    expect(badDb.stderr).toContain("--database-url");
    expect(existsSync(path.join(dir, "x.yaml"))).toBe(false);
  });

  it("start serves the config until SIGTERM; register-user creates a user who can log in", async () => {
    server = spawnCli(["start"], { WEFT_CONFIG: configPath });
    const base = `http://127.0.0.1:${port}`;
    await waitForHttp(`${base}/_matrix/client/versions`, server);

    // The server URL comes from the config's public_baseurl (http://localhost:PORT/).
    const reg = await runCli(["register-user", "-c", configPath, "-u", "alice", "-p", "wonderland", "--admin"]);
    expect(reg.code, reg.stderr).toBe(0);
    expect(reg.stdout.trim()).toBe("@alice:localhost");

    const shared = readFileSync(configPath, "utf8").match(/registration_shared_secret: "([^"]+)"/)![1]!;
    // Never led by "-", which `-k SECRET` would read as an option (base64url secrets did, 1 run in 64).
    expect(shared).toMatch(/^[0-9a-f]{64}$/);
    const bob = await runCli(["register-user", "-k", shared, "-u", "bob", "-p", "builder", "--no-admin", base]);
    expect(bob.code, bob.stderr).toBe(0);
    expect(bob.stdout.trim()).toBe("@bob:localhost");

    const taken = await runCli(["register-user", "-c", configPath, "-u", "bob", "-p", "x", "--no-admin", base]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain("M_USER_IN_USE");
    const existsOk = await runCli(["register-user", "-c", configPath, "-u", "bob", "-p", "x", "--no-admin", "--exists-ok", base]);
    expect(existsOk.code, existsOk.stderr).toBe(0);

    const noUser = await runCli(["register-user", "-c", configPath, "-p", "x", base]);
    expect(noUser.code).toBe(1);
    expect(noUser.stderr).toContain("-u USER is required");
    const noPassword = await runCli(["register-user", "-c", configPath, "-u", "carol", base]);
    expect(noPassword.code).toBe(1);
    expect(noPassword.stderr).toContain("-p PASSWORD");
    const wrongSecret = await runCli(["register-user", "-k", "not-the-secret", "-u", "mallory", "-p", "x", "--no-admin", base]);
    expect(wrongSecret.code).toBe(1);
    expect(wrongSecret.stderr).toContain("HMAC incorrect");

    const login = await fetch(`${base}/_matrix/client/v3/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ type: "m.login.password", identifier: { type: "m.id.user", user: "alice" }, password: "wonderland" }),
    });
    const session = (await login.json()) as { user_id: string; access_token: string };
    expect(login.status).toBe(200);
    expect(session.user_id).toBe("@alice:localhost");

    // --admin made alice a server admin; bob is not one.
    const asAlice = await fetch(`${base}/_synapse/admin/v1/registration_tokens`, { headers: { authorization: `Bearer ${session.access_token}` } });
    expect(asAlice.status).toBe(200);

    server.kill("SIGTERM");
    const end = await server.done;
    expect(end.code, end.stderr).toBe(0);
    expect(end.signal).toBeNull();
  }, 120_000);

  it("start exits 1 naming the invalid option, without a stack trace", async () => {
    const bad = path.join(dir, "bad.yaml");
    writeFileSync(bad, `server_name: localhost\nlisteners:\n  - port: ${port}\nmax_upload_size: enormous\n`);
    const r = await runCli(["start", "--config", bad]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("max_upload_size");
    expect(r.stderr).not.toMatch(/^\s+at /m);

    const missing = await runCli(["start", "--config", path.join(dir, "nope.yaml")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("nope.yaml");
  });
});
