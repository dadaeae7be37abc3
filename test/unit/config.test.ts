// homeserver.yaml parsing: defaults, Synapse-style durations and sizes, PostgreSQL settings, and that
// every invalid option is refused with a message naming it (app service registration files: appservice-config.test.ts).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig, parseConfig } from "../../src/config/config.ts";
import { readTlsFiles } from "../../src/config/federation.ts";
import { parseDuration, parseSize } from "../../src/config/units.ts";

const base = { server_name: "example.org" };
const parse = (extra: Record<string, unknown>, dir = "/srv/weft") => parseConfig({ ...base, ...extra }, dir);

/** The ConfigError `fn` throws (fails the test if it throws nothing or something else). */
function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

describe("config defaults", () => {
  it("fills in every default from a config with only server_name", () => {
    const c = parseConfig({ server_name: "example.org" }, "/srv/weft");
    expect(c.server_name).toBe("example.org");
    expect(c.listeners).toEqual([
      { port: 8008, bind_addresses: ["127.0.0.1"], type: "http", tls: false, x_forwarded: false, resources: ["client", "federation"] },
    ]);
    expect(c.public_baseurl).toBe("http://example.org:8008/");
    expect(c.database).toEqual({ provider: "sqlite", path: "/srv/weft/data/homeserver.db" });
    expect(c.signing_key_path).toBe("/srv/weft/example.org.signing.key");
    expect(c.key_refresh_interval).toBe(86_400_000);
    expect(c.enable_registration).toBe(false);
    expect(c.registration_requires_token).toBe(false);
    expect(c.registration_shared_secret).toBeUndefined();
    expect(c.allow_guest_access).toBe(false);
    expect(c.password_config.enabled).toBe(true);
    expect(c.password_config.scrypt_log_n).toBe(15);
    expect(c.password_config.policy.enabled).toBe(false);
    expect(c.refreshable_access_token_lifetime).toBe(300_000);
    expect(c.session_lifetime).toBeUndefined();
    expect(c.max_upload_size).toBe(50 * 1024 * 1024);
    expect(c.max_request_body_size).toBe(10 * 1024 * 1024);
    expect(c.caches).toEqual({ global_factor: 0.5, per_cache_factors: {} });
    expect(c.rc_message).toEqual({ per_second: 0.2, burst_count: 10 });
    expect(c.rc_login.failed_attempts).toEqual({ per_second: 0.17, burst_count: 3 });
    expect(c.default_room_version).toBe("11");
    expect(c.app_service_config_files).toEqual([]);
    expect(c.app_services).toEqual([]);
    expect(c.log_level).toBe("info");
  });

  it("carries request contexts into every log line at debug and trace, or when log_request_context says so", () => {
    expect(parse({}).log_request_context).toBe(false);
    expect(parse({ log_level: "debug" }).log_request_context).toBe(true);
    expect(parse({ log_level: "trace" }).log_request_context).toBe(true);
    expect(parse({ log_level: "info", log_request_context: true }).log_request_context).toBe(true);
    expect(parse({ log_level: "debug", log_request_context: false }).log_request_context).toBe(false);
    expect(configError(() => parse({ log_request_context: "yes" })).message).toContain("log_request_context");
  });

  it("derives public_baseurl from the server name's host and the first listener's port", () => {
    expect(parse({ server_name: "example.org:8448", listeners: [{ port: 9000 }] }).public_baseurl).toBe("http://example.org:9000/");
    expect(parse({ public_baseurl: "https://matrix.example.org" }).public_baseurl).toBe("https://matrix.example.org/");
  });

  it("resolves relative paths against the config's folder", () => {
    const c = parse({ signing_key_path: "keys/k.key", database: { name: "sqlite3", args: { database: "db/hs.db" } } }, "/etc/weft");
    expect(c.signing_key_path).toBe("/etc/weft/keys/k.key");
    expect(c.database).toEqual({ provider: "sqlite", path: "/etc/weft/db/hs.db" });
  });

  it("builds PostgreSQL URLs from Synapse's psycopg2 args, or takes args.url", () => {
    expect(parse({ database: { name: "psycopg2", args: { user: "weft", password: "p@ss", database: "hs", host: "db.local", port: 5433 } } }).database)
      .toEqual({ provider: "postgres", url: "postgresql://weft:p%40ss@db.local:5433/hs" });
    expect(parse({ database: { name: "psycopg2", args: { url: "postgresql://a:b@h/d" } } }).database)
      .toEqual({ provider: "postgres", url: "postgresql://a:b@h/d" });
    expect(parse({ database: { name: "psycopg2", args: { host: "/var/run/postgresql" } } }).database)
      .toEqual({ provider: "postgres", url: "postgresql://weft@localhost:5432/weft?host=%2Fvar%2Frun%2Fpostgresql" });
  });
});

describe("durations and sizes", () => {
  it("parses Synapse durations; a bare number is milliseconds", () => {
    expect(parseDuration("500ms")).toBe(500);
    expect(parseDuration("30s")).toBe(30_000);
    expect(parseDuration("5m")).toBe(300_000);
    expect(parseDuration("1h")).toBe(3_600_000);
    expect(parseDuration("7d")).toBe(604_800_000);
    expect(parseDuration("2w")).toBe(1_209_600_000);
    expect(parseDuration("1y")).toBe(31_536_000_000);
    expect(parseDuration("1.5h")).toBe(5_400_000);
    expect(parseDuration(1234)).toBe(1234);
    expect(parseDuration("1234")).toBe(1234);
    for (const bad of ["soon", "5 minutes", "-1s", -5, true, null, "1x"]) expect(parseDuration(bad)).toBeUndefined();
  });

  it("parses sizes with K/M/G/T suffixes; a bare number is bytes", () => {
    expect(parseSize("10K")).toBe(10 * 1024);
    expect(parseSize("50M")).toBe(50 * 1024 * 1024);
    expect(parseSize("1G")).toBe(1024 ** 3);
    expect(parseSize("2T")).toBe(2 * 1024 ** 4);
    expect(parseSize("512")).toBe(512);
    expect(parseSize(4096)).toBe(4096);
    expect(parseSize("10kb")).toBe(10 * 1024);
    for (const bad of ["big", "10X", -1, false, "M"]) expect(parseSize(bad)).toBeUndefined();
  });

  it("applies them to the options that take them", () => {
    const c = parse({
      session_lifetime: "1d",
      refresh_token_lifetime: 60_000,
      refreshable_access_token_lifetime: "10m",
      nonrefreshable_access_token_lifetime: "2h",
      key_refresh_interval: "1w",
      login_via_existing_session: { token_timeout: "30s" },
      max_upload_size: "10M",
      max_request_body_size: "100K",
      event_cache_size: "2K",
    });
    expect(c.session_lifetime).toBe(86_400_000);
    expect(c.refresh_token_lifetime).toBe(60_000);
    expect(c.refreshable_access_token_lifetime).toBe(600_000);
    expect(c.nonrefreshable_access_token_lifetime).toBe(7_200_000);
    expect(c.key_refresh_interval).toBe(604_800_000);
    expect(c.login_via_existing_session.token_timeout).toBe(30_000);
    expect(c.max_upload_size).toBe(10 * 1024 * 1024);
    expect(c.max_request_body_size).toBe(100 * 1024);
    expect(c.event_cache_size).toBe(2048);
  });
});

describe("invalid options are named in the error", () => {
  const cases: [string, Record<string, unknown>][] = [
    ["server_name", { server_name: undefined }],
    ["server_name", { server_name: "not a server name" }],
    ["server_name", { server_name: 42 }],
    ["public_baseurl", { public_baseurl: "ftp://example.org/" }],
    ["public_baseurl", { public_baseurl: "not a url" }],
    ["listeners", { listeners: "8008" }],
    ["listeners[0]", { listeners: ["8008"] }],
    ["listeners[0].port", { listeners: [{ port: 70000 }] }],
    ["listeners[0].port", { listeners: [{ port: "8008" }] }],
    ["listeners[0].type", { listeners: [{ type: "manhole" }] }],
    ["listeners", { listeners: [{ type: "metrics", port: 9000 }] }],
    ["listeners[0].bind_addresses[0]", { listeners: [{ bind_addresses: [1] }] }],
    ["listeners[1].x_forwarded", { listeners: [{ port: 1 }, { port: 2, x_forwarded: "yes" }] }],
    ["database", { database: "sqlite" }],
    ["database.name", { database: { name: "mysql" } }],
    ["database.args.port", { database: { name: "psycopg2", args: { port: "x" } } }],
    ["database.args.database", { database: { name: "sqlite3", args: { database: "" } } }],
    ["signing_key_path", { signing_key_path: 5 }],
    ["key_refresh_interval", { key_refresh_interval: "often" }],
    ["enable_registration", { enable_registration: "yes" }],
    ["registration_requires_token", { registration_requires_token: 1 }],
    ["registration_shared_secret", { registration_shared_secret: 123 }],
    ["allow_guest_access", { allow_guest_access: "no" }],
    ["password_config", { password_config: [] }],
    ["password_config.enabled", { password_config: { enabled: "true" } }],
    ["password_config.scrypt_log_n", { password_config: { scrypt_log_n: 30 } }],
    ["password_config.policy.minimum_length", { password_config: { policy: { minimum_length: -1 } } }],
    ["password_config.policy.require_digit", { password_config: { policy: { require_digit: "yes" } } }],
    ["refreshable_access_token_lifetime", { refreshable_access_token_lifetime: "later" }],
    ["refresh_token_lifetime", { refresh_token_lifetime: -5 }],
    ["nonrefreshable_access_token_lifetime", { nonrefreshable_access_token_lifetime: "1 hour" }],
    ["session_lifetime", { session_lifetime: "forever" }],
    ["login_via_existing_session.token_timeout", { login_via_existing_session: { token_timeout: "x" } }],
    ["max_upload_size", { max_upload_size: "huge" }],
    ["max_request_body_size", { max_request_body_size: "-1" }],
    ["caches.global_factor", { caches: { global_factor: -1 } }],
    ["caches.per_cache_factors.get_users", { caches: { per_cache_factors: { get_users: "x" } } }],
    ["event_cache_size", { event_cache_size: "lots" }],
    ["rc_login.address.per_second", { rc_login: { address: { per_second: "fast" } } }],
    ["rc_login.failed_attempts.burst_count", { rc_login: { failed_attempts: { burst_count: -1 } } }],
    ["rc_registration.burst_count", { rc_registration: { burst_count: "many" } }],
    ["rc_message", { rc_message: 5 }],
    ["limit_profile_requests_to_users_who_share_rooms", { limit_profile_requests_to_users_who_share_rooms: "yes" }],
    ["enable_set_displayname", { enable_set_displayname: 0 }],
    ["default_room_version", { default_room_version: 11 }],
    ["use_presence", { use_presence: "on" }],
    ["presence.enabled", { presence: { enabled: "no" } }],
    ["app_service_config_files", { app_service_config_files: "as.yaml" }],
    ["app_service_config_files[0]", { app_service_config_files: [7] }],
    ["log_level", { log_level: "loud" }],
  ];

  it.each(cases)("%s", (option, patch) => {
    const err = configError(() => parseConfig({ ...base, ...patch }, "/srv/weft"));
    expect(err.message).toContain(`'${option}'`);
  });

  it("reads presence.enabled (Synapse's newer name) before use_presence", () => {
    expect(parseConfig({ ...base }).use_presence).toBe(true);
    expect(parseConfig({ ...base, presence: { enabled: false } }).use_presence).toBe(false);
    expect(parseConfig({ ...base, use_presence: false }).use_presence).toBe(false);
    expect(parseConfig({ ...base, use_presence: false, presence: { enabled: true } }).use_presence).toBe(true);
  });

  it("reads Synapse's server_notices section: off when absent, its defaults, \"\" as unset", () => {
    expect(parse({}).server_notices).toBeUndefined();
    expect(parse({ server_notices: { system_mxid_localpart: "_server", system_mxid_display_name: "Server Alert", system_mxid_avatar_url: "" } }).server_notices).toEqual({
      system_mxid: "@_server:example.org",
      system_mxid_display_name: "Server Alert",
      system_mxid_avatar_url: undefined,
      room_name: "Server Notices",
      room_avatar_url: undefined,
      room_topic: undefined,
      auto_join: false,
    });
    expect(parse({ server_notices: { system_mxid_localpart: "notices", room_name: "Alerts", auto_join: true } }).server_notices).toMatchObject({ room_name: "Alerts", auto_join: true });
    expect(configError(() => parse({ server_notices: { room_name: "x" } })).message).toContain("'server_notices.system_mxid_localpart'");
    expect(configError(() => parse({ server_notices: { system_mxid_localpart: "a:b" } })).message).toContain("'server_notices.system_mxid_localpart'");
    expect(configError(() => parse({ server_notices: { system_mxid_localpart: "n", room_topic: 3 } })).message).toContain("'server_notices.room_topic'");
    expect(parse({ server_notices: { system_mxid_localpart: "n", unknown_thing: 1 } }).warnings.join()).toContain("server_notices.unknown_thing");
  });

  it("refuses a config that is not a mapping", () => {
    expect(configError(() => parseConfig(["server_name"])).message).toContain("(top level)");
    expect(configError(() => parseConfig(null)).message).toContain("(top level)");
  });
});

describe("loadConfig", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), "weft-config-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("reads YAML and resolves paths against the file's folder", () => {
    const file = path.join(dir, "homeserver.yaml");
    writeFileSync(file, "server_name: example.org\nsigning_key_path: k.key\nmax_upload_size: 1M\n");
    const c = loadConfig(file);
    expect(c.configPath).toBe(file);
    expect(c.signing_key_path).toBe(path.join(dir, "k.key"));
    expect(c.max_upload_size).toBe(1024 * 1024);
  });

  it("names the file when it is missing or not YAML", () => {
    expect(configError(() => loadConfig(path.join(dir, "missing.yaml"))).message).toMatch(/'--config'.*missing\.yaml/);
    const bad = path.join(dir, "bad.yaml");
    writeFileSync(bad, "server_name: [unclosed\n");
    expect(configError(() => loadConfig(bad)).message).toContain("is not valid YAML");
  });
});

describe("federation options (Synapse's names and defaults)", () => {
  const key = "Noi6WqcDj0QmPxCNQqgezwTlBKrfqehY1u2FyWP9uYw";

  it("defaults: certificates checked, Synapse's blacklist, matrix.org as notary, no TLS, no server .well-known", () => {
    const c = parse({});
    expect(c.federation_verify_certificates).toBe(true);
    expect(c.federation_certificate_verification_whitelist).toEqual([]);
    expect(c.ip_range_blacklist.map((r) => r.text)).toContain("127.0.0.0/8");
    expect(c.ip_range_blacklist.map((r) => r.text)).toContain("fc00::/7");
    expect(c.ip_range_whitelist).toEqual([]);
    expect(c.trusted_key_servers).toEqual([{ server_name: "matrix.org", verify_keys: undefined, accept_keys_insecurely: false }]);
    expect(c.serve_server_wellknown).toBe(false);
    expect(c.allow_profile_lookup_over_federation).toBe(true);
    expect(c.listeners[0]!.tls).toBe(false);
  });

  it("a tls listener needs both PEM paths (resolved against the config folder) and makes the default public_baseurl https", () => {
    const listeners = [{ port: 8448, tls: true }];
    expect(configError(() => parse({ listeners })).message).toContain("tls_certificate_path");
    expect(configError(() => parse({ listeners, tls_certificate_path: "c.pem" })).message).toContain("tls_private_key_path");
    const c = parse({ listeners, tls_certificate_path: "c.pem", tls_private_key_path: "/k/k.pem" });
    expect(c.tls_certificate_path).toBe("/srv/weft/c.pem");
    expect(c.tls_private_key_path).toBe("/k/k.pem");
    expect(c.public_baseurl).toBe("https://example.org:8448/");
  });

  it("an unreadable certificate or key is a ConfigError naming the option", () => {
    const c = parse({ listeners: [{ port: 8448, tls: true }], tls_certificate_path: "/nonexistent/c.pem", tls_private_key_path: "/nonexistent/k.pem" });
    expect(configError(() => readTlsFiles(c)).message).toContain("tls_certificate_path");
  });

  it("an IPv6 literal server name gives a bracketed default public_baseurl", () => {
    expect(parseConfig({ server_name: "[::1]:8448" }, "/x").public_baseurl).toBe("http://[::1]:8008/");
    expect(parseConfig({ server_name: "127.0.0.1:8448" }, "/x").public_baseurl).toBe("http://127.0.0.1:8008/");
  });

  it("parses IP ranges and names a bad one", () => {
    const c = parse({ ip_range_whitelist: ["127.0.0.0/8", "::1"], ip_range_blacklist: [] });
    expect(c.ip_range_whitelist.map((r) => [r.text, r.prefix])).toEqual([["127.0.0.0/8", 8], ["::1", 128]]);
    expect(c.ip_range_blacklist).toEqual([]);
    expect(configError(() => parse({ ip_range_whitelist: ["10.0.0.0/33"] })).message).toContain("ip_range_whitelist[0]");
    expect(configError(() => parse({ ip_range_blacklist: ["nope"] })).message).toContain("ip_range_blacklist[0]");
  });

  it("trusted_key_servers: verify_keys checked; without certificate checks a notary needs keys or accept_keys_insecurely", () => {
    expect(parse({ trusted_key_servers: [] }).trusted_key_servers).toEqual([]);
    const c = parse({ trusted_key_servers: [{ server_name: "notary.example", verify_keys: { "ed25519:k": key } }] });
    expect(c.trusted_key_servers[0]!.verify_keys).toEqual({ "ed25519:k": key });
    expect(configError(() => parse({ trusted_key_servers: [{ server_name: "n.example", verify_keys: { "rsa:k": key } }] })).message).toContain("unsupported signing algorithm");
    expect(configError(() => parse({ trusted_key_servers: [{ server_name: "n.example", verify_keys: { "ed25519:k": "short" } }] })).message).toContain("verify_keys.ed25519:k");
    expect(configError(() => parse({ trusted_key_servers: [{ verify_keys: {} }] })).message).toContain("trusted_key_servers[0].server_name");
    expect(configError(() => parse({ federation_verify_certificates: false })).message).toContain("trusted_key_servers[0]");
    expect(parse({ federation_verify_certificates: false, trusted_key_servers: [{ server_name: "matrix.org", accept_keys_insecurely: true }] }).trusted_key_servers[0]!.accept_keys_insecurely).toBe(true);
  });
});
