// The homeserver configuration: homeserver.yaml read with Synapse's option names, defaults filled in,
// every option validated with a message that names it. The rest of Weft only sees `Config`.
import { readFileSync } from "node:fs";
import path from "node:path";
import YAML from "yaml";
import { parseDuration, parseSize } from "./units.ts";
import { ConfigError } from "./errors.ts";
import { loadAppServiceRegistrations, type AppServiceRegistration } from "./appservices.ts";
import { readFederationConfig, type FederationConfig } from "./federation.ts";
import { readMediaConfig, type MediaConfig } from "./media.ts";
import { readSsoConfig, type SsoConfig } from "./sso.ts";
import { readThreePidConfig, type ThreePidConfig } from "./email.ts";
import { readAccountsConfig, type AccountsConfig } from "./accounts.ts";
import { readServerNoticesConfig, type ServerNoticesConfig } from "./server-notices.ts";
import { readExperimentalConfig, type ExperimentalConfig } from "./experimental.ts";
import { readWorkersConfig, type WorkersConfig } from "./workers.ts";
import { readClientDiscoveryConfig, type ClientDiscoveryConfig } from "./client-discovery.ts";
import { readProfileConfig, type ProfileConfig } from "./profile.ts";
import { readGraphqlConfig, type GraphqlConfig } from "./graphql.ts";
import { authDelegatedInRaw, checkDelegationConflicts, readOAuthDelegationConfig, type OAuthDelegationSection } from "./oauth-delegation.ts";
import { readOAuthServerConfig, type OAuthServerConfig } from "./oauth-server.ts";

export { ConfigError };

export interface RateLimit {
  per_second: number;
  burst_count: number;
}

export interface Listener {
  port: number;
  bind_addresses: string[];
  /** http: the client and federation APIs; metrics: Prometheus metrics alone (needs enable_metrics). */
  type: "http" | "metrics";
  /** Serve HTTPS with tls_certificate_path / tls_private_key_path (Synapse's listener option). */
  tls: boolean;
  x_forwarded: boolean;
  resources: string[];
}

export type DatabaseConfig =
  | { provider: "sqlite"; path: string }
  | { provider: "postgres"; url: string };

export interface PasswordPolicy {
  enabled: boolean;
  minimum_length: number;
  require_digit: boolean;
  require_symbol: boolean;
  require_lowercase: boolean;
  require_uppercase: boolean;
}

export interface Config extends FederationConfig, MediaConfig, SsoConfig, ThreePidConfig, AccountsConfig, ServerNoticesConfig, ExperimentalConfig, ClientDiscoveryConfig, ProfileConfig, GraphqlConfig, OAuthDelegationSection, OAuthServerConfig, WorkersConfig {
  /** Where the file was read from; relative paths in it resolve against its folder. */
  configPath?: string;
  server_name: string;
  public_baseurl: string;
  listeners: Listener[];
  database: DatabaseConfig;
  signing_key_path: string;
  /** How long our published server keys are valid for (Synapse: key_refresh_interval). */
  key_refresh_interval: number;
  serve_server_wellknown: boolean;
  enable_registration: boolean;
  registration_requires_token: boolean;
  registration_shared_secret?: string;
  allow_guest_access: boolean;
  password_config: { enabled: boolean; localdb_enabled: boolean; policy: PasswordPolicy; scrypt_log_n: number };
  refreshable_access_token_lifetime: number;
  refresh_token_lifetime?: number;
  nonrefreshable_access_token_lifetime?: number;
  session_lifetime?: number;
  login_via_existing_session: { enabled: boolean; require_ui_auth: boolean; token_timeout: number };
  max_request_body_size: number;
  caches: { global_factor: number; per_cache_factors: Record<string, number> };
  event_cache_size: number;
  rc_login: { address: RateLimit; account: RateLimit; failed_attempts: RateLimit };
  rc_registration: RateLimit;
  rc_message: RateLimit;
  limit_profile_requests_to_users_who_share_rooms: boolean;
  enable_set_displayname: boolean;
  /** Synapse's option (MSC4267, spec v1.18 `m.forget_forced_upon_leave`): rooms are forgotten when a local user leaves, is kicked or banned. */
  forget_rooms_on_leave: boolean;
  enable_set_avatar_url: boolean;
  /** Synapse's user_directory section: whether POST /user_directory/search answers, and whom it searches. */
  user_directory: { enabled: boolean; search_all_users: boolean };
  default_room_version: string;
  /** GET /publicRooms without an access token (Synapse's option; default false). */
  allow_public_rooms_without_auth: boolean;
  use_presence: boolean;
  /** Synapse's option: which new rooms get m.room.encryption in their initial state. */
  encryption_enabled_by_default_for_room_type: "all" | "invite" | "off";
  app_service_config_files: string[];
  /** Parsed and validated registrations of app_service_config_files. */
  app_services: AppServiceRegistration[];
  /** Synapse's option: also send the hs_token as an `access_token` query parameter (deprecated). */
  use_appservice_legacy_authorization: boolean;
  /** Weft's own: how long a request to an application service may take (Synapse: 60 s, fixed). */
  app_service_request_timeout: number;
  log_level: string;
  /**
   * Weft's own: carry each request's context through its async calls, so that every log line written
   * while it is handled carries its reqId (observability/request-context.ts). Default: on at log_level
   * debug and trace, off otherwise (it costs CPU on every request).
   */
  log_request_context: boolean;
  /** Serve Prometheus metrics: on `type: metrics` listeners and on http listeners with the `metrics` resource. */
  enable_metrics: boolean;
  /** Problems that do not stop the server (unknown options): logged at start. */
  warnings: string[];
  /** Synapse's `push` section. */
  push: { enabled: boolean; include_content: boolean; group_unread_count_by_room: boolean };
}

type Raw = Record<string, unknown>;

/**
 * Reads one typed option from the raw YAML, with its dotted name for error messages. Readers remember the
 * keys they were asked about, so the options nobody read can be named afterwards (`unknownOptions`).
 */
export class Reader {
  private readonly asked = new Set<string>();
  /** Whether keys nobody asked about are fine here (a free-form mapping, or one read conditionally). */
  private isOpen = false;
  constructor(private readonly raw: Raw, private readonly prefix = "", private readonly readers: Reader[] = []) {
    readers.push(this);
  }
  private name(key: string) { return this.prefix + key; }
  private get(key: string) {
    this.asked.add(key);
    return this.raw[key];
  }
  /** A reader for a mapping found inside this one (a list item), checked for unknown keys with the rest. */
  child(raw: Raw, prefix: string): Reader { return new Reader(raw, prefix, this.readers); }
  /** Marks this mapping's keys as not checked (free-form, or read only in some cases). */
  open(): this { this.isOpen = true; return this; }
  has(key: string) { const v = this.get(key); return v !== undefined && v !== null; }
  value(key: string) { return this.get(key); }
  /** The keys of every mapping read through this reader or its sections that no one asked about. */
  unknownOptions(): { name: string; known: string[] }[] {
    return this.readers.flatMap((r) =>
      r.isOpen ? [] : Object.keys(r.raw).filter((k) => !r.asked.has(k)).map((k) => ({ name: r.name(k), known: [...r.asked].map((a) => r.name(a)) })),
    );
  }
  string(key: string, def?: string): string {
    const v = this.get(key);
    if (v === undefined || v === null) {
      if (def === undefined) throw new ConfigError(this.name(key), "is required");
      return def;
    }
    if (typeof v !== "string" || v.length === 0) throw new ConfigError(this.name(key), "must be a non-empty string");
    return v;
  }
  optString(key: string): string | undefined {
    return this.has(key) ? this.string(key) : undefined;
  }
  bool(key: string, def: boolean): boolean {
    const v = this.get(key);
    if (v === undefined || v === null) return def;
    if (typeof v !== "boolean") throw new ConfigError(this.name(key), "must be true or false");
    return v;
  }
  number(key: string, def: number, { min = -Infinity, max = Infinity, integer = false } = {}): number {
    const v = this.get(key);
    if (v === undefined || v === null) return def;
    if (typeof v !== "number" || !Number.isFinite(v) || v < min || v > max || (integer && !Number.isInteger(v)))
      throw new ConfigError(this.name(key), `must be a${integer ? "n integer" : " number"} between ${min} and ${max}`);
    return v;
  }
  duration(key: string, def?: number): number | undefined {
    const v = this.get(key);
    if (v === undefined || v === null) return def;
    const ms = parseDuration(v);
    if (ms === undefined) throw new ConfigError(this.name(key), `must be a duration such as "5m", "1h" or milliseconds, not ${JSON.stringify(v)}`);
    return ms;
  }
  size(key: string, def: number): number {
    const v = this.get(key);
    if (v === undefined || v === null) return def;
    const n = parseSize(v);
    if (n === undefined) throw new ConfigError(this.name(key), `must be a size such as "50M" or a number of bytes, not ${JSON.stringify(v)}`);
    return n;
  }
  section(key: string): Reader {
    const v = this.get(key);
    if (v === undefined || v === null) return new Reader({}, this.name(key) + ".", this.readers);
    if (typeof v !== "object" || Array.isArray(v)) throw new ConfigError(this.name(key), "must be a mapping");
    return new Reader(v as Raw, this.name(key) + ".", this.readers);
  }
  list(key: string): unknown[] {
    const v = this.get(key);
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) throw new ConfigError(this.name(key), "must be a list");
    return v;
  }
  rateLimit(key: string, def: RateLimit): RateLimit {
    const s = this.section(key);
    return {
      per_second: s.number("per_second", def.per_second, { min: 0 }),
      burst_count: s.number("burst_count", def.burst_count, { min: 0 }),
    };
  }
}

const SERVER_NAME = /^(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]{1,255})(?::\d{1,5})?$/;

function readListeners(r: Reader): Listener[] {
  const raw = r.list("listeners");
  const list = raw.length ? raw : [{ port: 8008, bind_addresses: ["127.0.0.1"], type: "http", resources: [{ names: ["client", "federation"] }] }];
  return list.map((item, i) => {
    if (typeof item !== "object" || item === null) throw new ConfigError(`listeners[${i}]`, "must be a mapping");
    const l = r.child(item as Raw, `listeners[${i}].`);
    const type = l.string("type", "http");
    if (type !== "http" && type !== "metrics") throw new ConfigError(`listeners[${i}].type`, `must be "http" or "metrics", not "${type}"`);
    const bind = l.list("bind_addresses").map((a, j) => {
      if (typeof a !== "string") throw new ConfigError(`listeners[${i}].bind_addresses[${j}]`, "must be a string");
      return a;
    });
    const resources = l.list("resources").flatMap((res) => {
      const names = (res as Raw | null)?.names;
      return Array.isArray(names) ? names.map(String) : [];
    });
    l.value("compress"); // Synapse's per-resource and listener options that change nothing here
    return {
      port: l.number("port", 8008, { min: 0, max: 65535, integer: true }),
      bind_addresses: bind.length ? bind : ["127.0.0.1"],
      type,
      tls: l.bool("tls", false),
      x_forwarded: l.bool("x_forwarded", false),
      resources: resources.length ? resources : ["client", "federation"],
    };
  });
}

/** The listeners that serve the client and federation APIs (the first one is the main server). */
export function httpListeners(config: Pick<Config, "listeners">): Listener[] {
  return config.listeners.filter((l) => l.type === "http");
}

function readDatabase(r: Reader, baseDir: string): DatabaseConfig {
  const db = r.section("database");
  const name = db.string("name", "sqlite3");
  db.value("allow_unsafe_locale"); // Synapse's, meaningless here
  const args = db.section("args").open(); // which keys apply depends on the database (and Synapse's cp_min ...)
  if (name === "sqlite3" || name === "sqlite") {
    return { provider: "sqlite", path: path.resolve(baseDir, args.string("database", "data/homeserver.db")) };
  }
  if (name === "psycopg2" || name === "postgres" || name === "postgresql") {
    const url = args.optString("url");
    if (url) return { provider: "postgres", url };
    const user = encodeURIComponent(args.string("user", "weft"));
    const password = args.optString("password");
    const host = args.string("host", "localhost");
    const port = args.number("port", 5432, { min: 1, max: 65535, integer: true });
    const database = encodeURIComponent(args.string("database", "weft"));
    const auth = password ? `${user}:${encodeURIComponent(password)}` : user;
    const hostPart = host.startsWith("/") ? `localhost:${port}` : `${host}:${port}`;
    const socket = host.startsWith("/") ? `?host=${encodeURIComponent(host)}` : "";
    return { provider: "postgres", url: `postgresql://${auth}@${hostPart}/${database}${socket}` };
  }
  throw new ConfigError("database.name", `must be "sqlite3" or "psycopg2", not "${name}"`);
}

/** Builds and validates a Config from parsed YAML. `baseDir` resolves relative paths. */
export function parseConfig(raw: unknown, baseDir = process.cwd()): Config {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new ConfigError("(top level)", "must be a mapping");
  const r = new Reader(raw as Raw);
  const server_name = r.string("server_name");
  if (!SERVER_NAME.test(server_name)) throw new ConfigError("server_name", `"${server_name}" is not a valid server name`);
  const listeners = readListeners(r);
  const main = httpListeners({ listeners })[0];
  if (!main) throw new ConfigError("listeners", `needs a listener of type "http" (the client and federation APIs)`);
  const host = server_name.startsWith("[") ? server_name.slice(0, server_name.indexOf("]") + 1) : server_name.split(":")[0];
  const defaultBase = `${main.tls ? "https" : "http"}://${host}:${main.port}/`;
  const public_baseurl = r.string("public_baseurl", defaultBase);
  try {
    const u = new URL(public_baseurl);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error();
  } catch {
    throw new ConfigError("public_baseurl", `"${public_baseurl}" is not an http(s) URL`);
  }
  // Delegated authentication (MSC3861) turns the defaults of passwords and 3PID changes off, as in Synapse.
  const authDelegated = authDelegatedInRaw(raw as Raw);
  const pw = r.section("password_config");
  const policy = pw.section("policy");
  const caches = r.section("caches");
  const factors = caches.section("per_cache_factors").open();
  const per_cache_factors: Record<string, number> = {};
  for (const [k, v] of Object.entries((caches.value("per_cache_factors") as Raw | undefined) ?? {})) {
    void v;
    per_cache_factors[k] = factors.number(k, 1, { min: 0 });
  }
  const rcLogin = r.section("rc_login");
  const lves = r.section("login_via_existing_session");
  const appFiles = r.list("app_service_config_files").map((f, i) => {
    if (typeof f !== "string") throw new ConfigError(`app_service_config_files[${i}]`, "must be a file path");
    return path.resolve(baseDir, f);
  });
  const userDirectory = r.section("user_directory");
  const logLevel = r.string("log_level", "info");
  const push = r.section("push");
  const encryptionDefault = r.string("encryption_enabled_by_default_for_room_type", "off");
  if (encryptionDefault !== "all" && encryptionDefault !== "invite" && encryptionDefault !== "off")
    throw new ConfigError("encryption_enabled_by_default_for_room_type", `must be "all", "invite" or "off", not "${encryptionDefault}"`);
  if (!["fatal", "error", "warn", "info", "debug", "trace", "silent"].includes(logLevel))
    throw new ConfigError("log_level", `must be one of fatal, error, warn, info, debug, trace, silent`);

  const config: Config = {
    server_name,
    public_baseurl: public_baseurl.endsWith("/") ? public_baseurl : public_baseurl + "/",
    listeners,
    database: readDatabase(r, baseDir),
    signing_key_path: path.resolve(baseDir, r.string("signing_key_path", `${server_name.replace(/[^A-Za-z0-9.-]/g, "_")}.signing.key`)),
    key_refresh_interval: r.duration("key_refresh_interval", 86_400_000)!,
    serve_server_wellknown: r.bool("serve_server_wellknown", false),
    enable_registration: r.bool("enable_registration", false),
    registration_requires_token: r.bool("registration_requires_token", false),
    registration_shared_secret: r.optString("registration_shared_secret"),
    allow_guest_access: r.bool("allow_guest_access", false),
    password_config: {
      enabled: pw.bool("enabled", !authDelegated),
      localdb_enabled: pw.bool("localdb_enabled", true),
      scrypt_log_n: pw.number("scrypt_log_n", 15, { min: 4, max: 20, integer: true }),
      policy: {
        enabled: policy.bool("enabled", false),
        minimum_length: policy.number("minimum_length", 0, { min: 0, integer: true }),
        require_digit: policy.bool("require_digit", false),
        require_symbol: policy.bool("require_symbol", false),
        require_lowercase: policy.bool("require_lowercase", false),
        require_uppercase: policy.bool("require_uppercase", false),
      },
    },
    refreshable_access_token_lifetime: r.duration("refreshable_access_token_lifetime", 5 * 60_000)!,
    refresh_token_lifetime: r.duration("refresh_token_lifetime"),
    nonrefreshable_access_token_lifetime: r.duration("nonrefreshable_access_token_lifetime"),
    session_lifetime: r.duration("session_lifetime"),
    login_via_existing_session: {
      enabled: lves.bool("enabled", false),
      require_ui_auth: lves.bool("require_ui_auth", true),
      token_timeout: lves.duration("token_timeout", 5 * 60_000)!,
    },
    ...readMediaConfig(r, baseDir),
    ...readAccountsConfig(r),
    ...readExperimentalConfig(r),
    ...readClientDiscoveryConfig(r),
    max_request_body_size: r.size("max_request_body_size", 10 * 1024 * 1024),
    caches: { global_factor: caches.number("global_factor", 0.5, { min: 0 }), per_cache_factors },
    event_cache_size: r.size("event_cache_size", 10 * 1024),
    rc_login: {
      address: rcLogin.rateLimit("address", { per_second: 0.003, burst_count: 5 }),
      account: rcLogin.rateLimit("account", { per_second: 0.003, burst_count: 5 }),
      failed_attempts: rcLogin.rateLimit("failed_attempts", { per_second: 0.17, burst_count: 3 }),
    },
    rc_registration: r.rateLimit("rc_registration", { per_second: 0.17, burst_count: 3 }),
    rc_message: r.rateLimit("rc_message", { per_second: 0.2, burst_count: 10 }),
    limit_profile_requests_to_users_who_share_rooms: r.bool("limit_profile_requests_to_users_who_share_rooms", false),
    enable_set_displayname: r.bool("enable_set_displayname", true),
    forget_rooms_on_leave: r.bool("forget_rooms_on_leave", false),
    enable_set_avatar_url: r.bool("enable_set_avatar_url", true),
    ...readProfileConfig(r),
    ...readGraphqlConfig(r, baseDir),
    user_directory: { enabled: userDirectory.bool("enabled", true), search_all_users: userDirectory.bool("search_all_users", false) },
    default_room_version: r.string("default_room_version", "11"),
    allow_public_rooms_without_auth: r.bool("allow_public_rooms_without_auth", false),
    // Synapse's `presence.enabled` (newer) or `use_presence` (older name).
    use_presence: r.section("presence").bool("enabled", r.bool("use_presence", true)),
    encryption_enabled_by_default_for_room_type: encryptionDefault,
    app_service_config_files: appFiles,
    app_services: [],
    use_appservice_legacy_authorization: r.bool("use_appservice_legacy_authorization", false),
    app_service_request_timeout: r.duration("app_service_request_timeout", 60_000)!,
    log_level: logLevel,
    log_request_context: r.bool("log_request_context", logLevel === "debug" || logLevel === "trace"),
    enable_metrics: r.bool("enable_metrics", false),
    warnings: [],
    ...readFederationConfig(r, baseDir, listeners.some((l) => l.tls)),
    ...readSsoConfig(r),
    ...readThreePidConfig(r, authDelegated),
    ...readOAuthDelegationConfig(r, baseDir),
    ...readOAuthServerConfig(r, baseDir),
    ...readServerNoticesConfig(r, server_name),
    ...readWorkersConfig(r, baseDir),
    push: {
      enabled: push.bool("enabled", true),
      include_content: push.bool("include_content", true),
      group_unread_count_by_room: push.bool("group_unread_count_by_room", true),
    },
  };
  checkDelegationConflicts(config);
  checkClusterDatabase(config);
  config.app_services = loadAppServiceRegistrations(appFiles, server_name);
  for (const name of IGNORED_SYNAPSE_OPTIONS) r.value(name);
  config.warnings = r.unknownOptions().map(({ name, known }) => unknownOptionWarning(name, known));
  return config;
}

/** Several processes share one database only on PostgreSQL: SQLite is one file one process writes. */
function checkClusterDatabase(config: Config): void {
  if (config.database.provider !== "sqlite") return;
  if (config.redis.enabled)
    throw new ConfigError("redis.enabled", "needs PostgreSQL: several Weft processes share one PostgreSQL database (database.name: psycopg2); SQLite serves a single process");
  if (Object.keys(config.instance_map).length > 1 || config.worker_name !== "master")
    throw new ConfigError("instance_map", "several Weft processes need PostgreSQL (database.name: psycopg2); SQLite serves a single process");
}

/** Synapse options a copied homeserver.yaml may hold that mean nothing to Weft: accepted without a warning. */
const IGNORED_SYNAPSE_OPTIONS = ["pid_file", "log_config", "report_stats", "macaroon_secret_key", "form_secret"];

/** "unknown option X (did you mean Y?)": the nearest known name at the same level, if one is close. */
function unknownOptionWarning(name: string, known: string[]): string {
  const leaf = (n: string) => n.slice(n.lastIndexOf(".") + 1);
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of known) {
    const d = editDistance(leaf(name).toLowerCase(), leaf(k).toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  const close = best !== undefined && bestDistance <= Math.max(2, Math.floor(leaf(name).length / 3));
  return `unknown option "${name}" ignored${close ? ` (did you mean "${best}"?)` : ""}`;
}

/** Levenshtein distance (insertions, deletions, substitutions). */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}

/** Reads and validates homeserver.yaml. Relative paths in it resolve against its folder. */
export function loadConfig(file: string): Config {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError("--config", `cannot read ${file}: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = YAML.parse(text);
  } catch (err) {
    throw new ConfigError("(file)", `${file} is not valid YAML: ${(err as Error).message}`);
  }
  const config = parseConfig(raw, path.dirname(path.resolve(file)));
  config.configPath = path.resolve(file);
  return config;
}
