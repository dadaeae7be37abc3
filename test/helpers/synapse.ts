// Synapse as a live federation peer: starts the pinned matrix-synapse (scripts/install-synapse.sh puts it
// in a cached virtualenv, installing it on first use) on loopback with a TLS federation listener and a
// plain client listener on free ports, named `127.0.0.1:FEDPORT`, on SQLite in a temporary folder; waits
// until /health answers; registers users with the shared secret; stops it and deletes its folder.
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { createHmac } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { generateSigningKey, formatSigningKeyFile, type SigningKey } from "../../src/domain/signing-key.ts";
import { freePort, readJsonResponse, type JsonResponse } from "./server.ts";
import { testCertificate } from "./tls.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const SYNAPSE_VERSION = readFileSync(path.join(REPO, "scripts/synapse-version"), "utf8").trim();
const SHARED_SECRET = "synapse-test-shared-secret";

/** The virtualenv holding Synapse, installed now if missing (about half a minute, once per machine). */
export function synapseVenv(): string {
  const venv = process.env.WEFT_SYNAPSE_VENV ?? path.join(homedir(), ".cache/weft-ci", `synapse-venv-${SYNAPSE_VERSION}`);
  if (!existsSync(path.join(venv, "bin/python"))) {
    execFileSync("bash", [path.join(REPO, "scripts/install-synapse.sh")], { stdio: ["ignore", "ignore", "inherit"], timeout: 10 * 60_000 });
  }
  return venv;
}

const high = { per_second: 1000, burst_count: 1000 };

/**
 * The homeserver.yaml of a test Synapse. Each option is here for a reason:
 * - server_name `127.0.0.1:FEDPORT`: an IP literal needs no DNS and no .well-known (discovery step 1);
 * - a `tls: true` federation listener (peers must reach it over HTTPS) with the tests' self-signed
 *   certificate, and a plain client listener for the test's own client calls;
 * - federation_verify_certificates: false — every peer's certificate is self-signed;
 * - ip_range_blacklist: [] and ip_range_whitelist: loopback — Synapse refuses loopback peers otherwise;
 * - trusted_key_servers: [] (unless a test names a notary) — never ask matrix.org, fetch keys from the
 *   servers themselves; suppress_key_server_warning: true keeps its log quiet about it;
 * - report_stats: false — required, and no phoning home; enable_metrics: false;
 * - registration_shared_secret — the test registers users through the admin API;
 * - rc_* raised — tests send bursts Synapse's defaults would rate-limit;
 * - allow_public_rooms_over_federation: true and room_list_publication_rules allowing everyone — the
 *   directory interop test publishes a room and reads it over federation (Synapse denies both by default);
 * - macaroon_secret_key / form_secret fixed — otherwise derived or generated (and warned about);
 * - SQLite, media store, pid file and logs inside the temporary folder.
 */
function synapseConfig(dir: string, fedPort: number, clientPort: number, extra: Record<string, unknown>): Record<string, unknown> {
  const cert = testCertificate();
  return {
    server_name: `127.0.0.1:${fedPort}`,
    public_baseurl: `http://127.0.0.1:${clientPort}/`,
    pid_file: path.join(dir, "homeserver.pid"),
    listeners: [
      { port: fedPort, bind_addresses: ["127.0.0.1"], type: "http", tls: true, x_forwarded: false, resources: [{ names: ["federation"], compress: false }] },
      { port: clientPort, bind_addresses: ["127.0.0.1"], type: "http", tls: false, x_forwarded: false, resources: [{ names: ["client"], compress: false }] },
    ],
    tls_certificate_path: cert.certPath,
    tls_private_key_path: cert.keyPath,
    database: { name: "sqlite3", args: { database: path.join(dir, "homeserver.db") } },
    log_config: path.join(dir, "log.yaml"),
    media_store_path: path.join(dir, "media"),
    signing_key_path: path.join(dir, "signing.key"),
    report_stats: false,
    enable_metrics: false,
    trusted_key_servers: [],
    suppress_key_server_warning: true,
    federation_verify_certificates: false,
    ip_range_blacklist: [],
    ip_range_whitelist: ["127.0.0.0/8", "::1/128"],
    registration_shared_secret: SHARED_SECRET,
    macaroon_secret_key: "synapse-test-macaroon",
    form_secret: "synapse-test-form",
    allow_public_rooms_over_federation: true,
    room_list_publication_rules: [{ action: "allow" }],
    rc_message: high,
    rc_registration: high,
    rc_login: { address: high, account: high, failed_attempts: high },
    rc_joins: { local: high, remote: high },
    rc_joins_per_room: high,
    rc_invites: { per_room: high, per_user: high, per_issuer: high },
    rc_admin_redaction: high,
    rc_3pid_validation: high,
    rc_presence: { per_user: high },
    rc_delayed_event_mgmt: high,
    rc_room_creation: high,
    rc_reports: high,
    rc_federation: { window_size: 1000, sleep_limit: 1000, sleep_delay: 1, reject_limit: 1000, concurrent: 100 },
    ...extra,
  };
}

const LOG_CONFIG = (file: string) => `version: 1
formatters:
  precise: {format: '%(asctime)s - %(name)s - %(lineno)d - %(levelname)s - %(request)s - %(message)s'}
filters:
  context: {(): synapse.logging.context.LoggingContextFilter, request: ""}
handlers:
  file: {class: logging.FileHandler, formatter: precise, filename: ${JSON.stringify(file)}, filters: [context]}
root: {level: INFO, handlers: [file]}
disable_existing_loggers: false
`;

export interface SynapseServer {
  serverName: string;
  /** https://127.0.0.1:FEDPORT (the federation listener). */
  federationUrl: string;
  /** http://127.0.0.1:CLIENTPORT (the client listener). */
  clientUrl: string;
  signingKey: SigningKey;
  dir: string;
  /** Milliseconds from spawn to the first healthy answer. */
  startupMs: number;
  /** A client API call: status and JSON. */
  call(method: string, p: string, opts?: { body?: unknown; token?: string }): Promise<JsonResponse>;
  /** Registers a user through the shared-secret admin API (a server admin with `admin`); returns its session. */
  register(localpart: string, password?: string, opts?: { admin?: boolean }): Promise<{ user_id: string; access_token: string; device_id: string }>;
  /** The last lines of Synapse's log (for failure messages). */
  logTail(lines?: number): string;
  close(): Promise<void>;
}

export interface StartSynapseOptions {
  /**
   * Extra homeserver.yaml options (merged over the test defaults, top level), e.g. `app_service_config_files`
   * with files from appservice.ts's writeRegistration (user namespaces without a server part: the server
   * name is known only once Synapse runs).
   */
  config?: Record<string, unknown>;
  /** How long to wait for /health (default 90 s). */
  readyTimeoutMs?: number;
}

export async function startSynapse(opts: StartSynapseOptions = {}): Promise<SynapseServer> {
  const venv = synapseVenv();
  const dir = mkdtempSync(path.join(tmpdir(), "weft-synapse-"));
  const [fedPort, clientPort] = [await freePort(), await freePort()];
  const signingKey = generateSigningKey();
  writeFileSync(path.join(dir, "signing.key"), formatSigningKeyFile([signingKey]));
  const logFile = path.join(dir, "homeserver.log");
  writeFileSync(path.join(dir, "log.yaml"), LOG_CONFIG(logFile));
  // JSON is YAML: the config is written as JSON.
  writeFileSync(path.join(dir, "homeserver.yaml"), JSON.stringify(synapseConfig(dir, fedPort, clientPort, opts.config ?? {}), null, 2));

  const started = Date.now();
  const proc: ChildProcess = spawn(path.join(venv, "bin/python"), ["-m", "synapse.app.homeserver", "-c", path.join(dir, "homeserver.yaml")], {
    cwd: dir,
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
  });
  let stderr = "";
  proc.stderr!.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-20_000);
  });
  let exited: number | null | undefined;
  const exit = new Promise<void>((resolve) => proc.once("exit", (code) => ((exited = code), resolve())));

  const clientUrl = `http://127.0.0.1:${clientPort}`;
  const logTail = (lines = 40) => {
    try {
      return readFileSync(logFile, "utf8").split("\n").slice(-lines).join("\n");
    } catch {
      return "(no log)";
    }
  };
  const close = async () => {
    if (exited === undefined) {
      proc.kill("SIGTERM");
      const killer = setTimeout(() => proc.kill("SIGKILL"), 15_000);
      await exit;
      clearTimeout(killer);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  // Ready when /health answers; fail at once if the process dies first.
  const deadline = started + (opts.readyTimeoutMs ?? 90_000);
  for (;;) {
    if (exited !== undefined) {
      const msg = `Synapse exited (${exited}) before it was ready:\n${stderr}\n${logTail()}`;
      await close();
      throw new Error(msg);
    }
    try {
      const res = await fetch(`${clientUrl}/health`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      const msg = `Synapse was not ready within ${opts.readyTimeoutMs ?? 90_000} ms:\n${logTail()}`;
      await close();
      throw new Error(msg);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const startupMs = Date.now() - started;

  const call: SynapseServer["call"] = async (method, p, o = {}) => {
    const headers: Record<string, string> = {};
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    if (o.body !== undefined) headers["content-type"] = "application/json";
    return readJsonResponse(await fetch(clientUrl + p, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) }));
  };

  return {
    serverName: `127.0.0.1:${fedPort}`,
    federationUrl: `https://127.0.0.1:${fedPort}`,
    clientUrl,
    signingKey,
    dir,
    startupMs,
    call,
    async register(localpart, password = "password", opts = {}) {
      const admin = opts.admin === true;
      const { json: { nonce } } = await call("GET", "/_synapse/admin/v1/register");
      const mac = createHmac("sha1", SHARED_SECRET).update(`${nonce}\0${localpart}\0${password}\0${admin ? "admin" : "notadmin"}`).digest("hex");
      const res = await call("POST", "/_synapse/admin/v1/register", { body: { nonce, username: localpart, password, admin, mac } });
      if (res.status !== 200) throw new Error(`Synapse registration of ${localpart} failed: ${res.status} ${JSON.stringify(res.json)}`);
      return res.json;
    },
    logTail,
    close,
  };
}
