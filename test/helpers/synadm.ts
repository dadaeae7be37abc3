// synadm (the admin-API command line tool, from PyPI) driven against a test server: the pinned version
// from scripts/synadm-version in a cached virtualenv (scripts/install-synadm.sh installs it on first use),
// configured by a file in a temporary folder, run non-interactively with JSON output.
import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const SYNADM_VERSION = readFileSync(path.join(REPO, "scripts/synadm-version"), "utf8").trim();

/** The virtualenv holding synadm, installed now if missing (a few seconds, once per machine). */
export function synadmVenv(): string {
  const venv = process.env.WEFT_SYNADM_VENV ?? path.join(homedir(), ".cache/weft-ci", `synadm-venv-${SYNADM_VERSION}`);
  if (!existsSync(path.join(venv, "bin/python")))
    execFileSync("bash", [path.join(REPO, "scripts/install-synadm.sh")], { stdio: ["ignore", "ignore", "inherit"], timeout: 5 * 60_000 });
  return venv;
}

export interface SynadmResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Synadm {
  /** Runs `synadm --batch -o json <args>`; resolves with its exit code and output. */
  run(...args: string[]): Promise<SynadmResult>;
  close(): void;
}

export function synadmFor(o: { baseUrl: string; serverName: string; userId: string; token: string }): Synadm {
  const venv = synadmVenv();
  const dir = mkdtempSync(path.join(tmpdir(), "weft-synadm-"));
  const config = path.join(dir, "synadm.yaml");
  // JSON is YAML: the config file synadm would write after `synadm config`.
  writeFileSync(config, JSON.stringify({
    user: o.userId, token: o.token, base_url: o.baseUrl, admin_path: "/_synapse/admin", matrix_path: "/_matrix",
    timeout: 30, protocol: "http", format: "json", homeserver: o.serverName, ssl_verify: false,
  }));
  return {
    run: (...args) =>
      new Promise((resolve) => {
        execFile(path.join(venv, "bin/python"), ["-m", "synadm", "--batch", "-o", "json", "-c", config, ...args], { timeout: 60_000, env: { ...process.env, HOME: dir } }, (err, stdout, stderr) => {
          const code = err ? (typeof (err as { code?: unknown }).code === "number" ? (err as { code: number }).code : 1) : 0;
          resolve({ code, stdout, stderr });
        });
      }),
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}
