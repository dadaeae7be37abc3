// Delegated authentication (MSC3861): the options that point Weft at an external OAuth 2.0 / OpenID
// server whose access tokens it accepts by token introspection (RFC 7662). Synapse's two forms:
// `experimental_features.msc3861` (issuer, client_id, client_auth_method, client_secret[_path], jwk,
// admin_token[_path], account_management_url, introspection_endpoint, issuer_metadata) and the newer
// `matrix_authentication_service` (enabled, endpoint, secret[_path]: Matrix Authentication Service).
// With either on, the options Synapse refuses beside it are refused here too, with its messages.
import { createPrivateKey } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { ConfigError } from "./errors.ts";
import type { Reader } from "./config.ts";

export type ClientAuthMethod = "client_secret_basic" | "client_secret_post" | "client_secret_jwt" | "private_key_jwt";
const AUTH_METHODS: readonly ClientAuthMethod[] = ["client_secret_basic", "client_secret_post", "client_secret_jwt", "private_key_jwt"];

export interface OAuthDelegationConfig {
  /** Which option turned it on: the MSC3861 section or the Matrix Authentication Service one. */
  kind: "msc3861" | "mas";
  /** The OAuth 2.0 / OpenID issuer (for MAS, its `endpoint`); metadata is discovered from it. */
  issuer: string;
  /** Where the metadata is fetched from (MAS: `endpoint`/.well-known/openid-configuration). */
  metadata_urls: string[];
  /** Metadata given in the config instead of discovered (Synapse's `issuer_metadata`). */
  issuer_metadata?: Record<string, unknown>;
  /** The introspection endpoint when the config names it (else the metadata's `introspection_endpoint`). */
  introspection_endpoint?: string;
  /** How Weft authenticates to the introspection endpoint: a client (MSC3861) or MAS's shared secret. */
  client: { method: ClientAuthMethod; client_id: string; client_secret?: string; jwk?: Record<string, unknown> } | { method: "bearer"; secret: string };
  /** A token that acts as a server admin (Synapse: the `__oidc_admin` requester). */
  admin_token?: string;
  /** The account management page (MSC2965); else the metadata's `account_management_uri`. */
  account_management_url?: string;
  /**
   * Weft's own: how long an introspection answer is reused (Synapse: 2 minutes, fixed), never beyond the
   * token's `exp`. `experimental_features.msc3861.introspection_cache_ttl` or
   * `matrix_authentication_service.introspection_cache_ttl`.
   */
  introspection_cache_ttl: number;
  /** Weft's own: how many introspection answers are kept (a cache factor applies, as to every cache). */
  introspection_cache_size: number;
}

export interface OAuthDelegationSection {
  /** Set when delegated authentication is on (either form). */
  oauth_delegation: OAuthDelegationConfig | undefined;
}

const DEFAULT_TTL = 2 * 60_000;

/** Whether the raw YAML turns delegation on: other sections' defaults follow it (as in Synapse). */
export function authDelegatedInRaw(raw: Record<string, unknown>): boolean {
  const on = (v: unknown) => typeof v === "object" && v !== null && (v as Record<string, unknown>).enabled === true;
  const x = raw.experimental_features;
  return on(raw.matrix_authentication_service) || (typeof x === "object" && x !== null && on((x as Record<string, unknown>).msc3861));
}

function httpUrl(r: Reader, key: string, name: string): string | undefined {
  const v = r.optString(key);
  if (v === undefined) return undefined;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new ConfigError(name, "must be an http(s) URL");
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new ConfigError(name, "must be an http(s) URL");
  return v;
}

/** `x` or `x_path` (a file holding it), never both; Synapse's rule for secrets. */
function secret(r: Reader, key: string, prefix: string, baseDir: string): string | undefined {
  const inline = r.optString(key);
  const file = r.optString(`${key}_path`);
  if (inline !== undefined && file !== undefined)
    throw new ConfigError(`${prefix}${key}`, `${prefix}${key} and ${prefix}${key}_path cannot both be set`);
  if (file === undefined) return inline;
  try {
    const text = readFileSync(path.resolve(baseDir, file), "utf8").trim();
    if (!text) throw new Error("the file is empty");
    return text;
  } catch (err) {
    throw new ConfigError(`${prefix}${key}_path`, `cannot read ${file}: ${(err as Error).message}`);
  }
}

/** RFC 8414 / OpenID discovery: where an issuer's metadata lives (the OpenID path first, as Synapse). */
export function discoveryUrls(issuer: string): string[] {
  const u = new URL(issuer);
  const p = u.pathname.replace(/\/$/, "");
  const origin = u.origin;
  // OpenID Connect Discovery appends to the issuer; RFC 8414 inserts the well-known segment before its path.
  return [`${origin}${p}/.well-known/openid-configuration`, `${origin}/.well-known/oauth-authorization-server${p}`];
}

function readMsc3861(m: Reader, baseDir: string): OAuthDelegationConfig | undefined {
  const P = "experimental_features.msc3861.";
  if (!m.bool("enabled", false)) {
    m.open();
    return undefined;
  }
  const issuer = httpUrl(m, "issuer", `${P}issuer`);
  if (!issuer) throw new ConfigError(`${P}issuer`, "is required when experimental_features.msc3861.enabled is true");
  const client_id = m.optString("client_id");
  if (!client_id) throw new ConfigError(`${P}client_id`, "is required when experimental_features.msc3861.enabled is true");
  const method = m.string("client_auth_method", "client_secret_post") as ClientAuthMethod;
  if (!AUTH_METHODS.includes(method)) throw new ConfigError(`${P}client_auth_method`, `must be one of ${AUTH_METHODS.join(", ")}, not "${method}"`);
  const client_secret = secret(m, "client_secret", P, baseDir);
  const jwkRaw = m.value("jwk");
  if (jwkRaw !== undefined && jwkRaw !== null && (typeof jwkRaw !== "object" || Array.isArray(jwkRaw)))
    throw new ConfigError(`${P}jwk`, "must be a JSON Web Key (a mapping)");
  const jwk = (jwkRaw ?? undefined) as Record<string, unknown> | undefined;
  if (jwk) {
    try {
      createPrivateKey({ key: jwk as never, format: "jwk" });
    } catch (err) {
      throw new ConfigError(`${P}jwk`, `is not a usable private JSON Web Key: ${(err as Error).message}`);
    }
  }
  if (method === "private_key_jwt" && !jwk)
    throw new ConfigError(`${P}client_auth_method`, "A JWKS must be provided when using the private_key_jwt client auth method");
  if (method !== "private_key_jwt" && client_secret === undefined)
    throw new ConfigError(`${P}client_auth_method`, `A client secret must be provided when using the ${method} client auth method`);
  const metadataRaw = m.value("issuer_metadata");
  if (metadataRaw !== undefined && metadataRaw !== null && (typeof metadataRaw !== "object" || Array.isArray(metadataRaw)))
    throw new ConfigError(`${P}issuer_metadata`, "must be a mapping");
  return {
    kind: "msc3861",
    issuer,
    metadata_urls: discoveryUrls(issuer),
    issuer_metadata: (metadataRaw ?? undefined) as Record<string, unknown> | undefined,
    introspection_endpoint: httpUrl(m, "introspection_endpoint", `${P}introspection_endpoint`),
    client: { method, client_id, client_secret, jwk },
    admin_token: secret(m, "admin_token", P, baseDir),
    account_management_url: httpUrl(m, "account_management_url", `${P}account_management_url`),
    introspection_cache_ttl: m.duration("introspection_cache_ttl", DEFAULT_TTL)!,
    introspection_cache_size: m.number("introspection_cache_size", 10_000, { min: 1, integer: true }),
  };
}

function readMas(m: Reader, baseDir: string): OAuthDelegationConfig | undefined {
  const P = "matrix_authentication_service.";
  if (!m.bool("enabled", false)) {
    m.open();
    return undefined;
  }
  const endpoint = (httpUrl(m, "endpoint", `${P}endpoint`) ?? "http://localhost:8080").replace(/\/+$/, "");
  m.value("force_http2"); // Synapse's transport option; undici negotiates on its own
  const shared = secret(m, "secret", P, baseDir);
  if (shared === undefined)
    throw new ConfigError(`${P}secret`, "You must set a `secret` or `secret_path` when enabling the Matrix Authentication Service integration.");
  return {
    kind: "mas",
    issuer: endpoint + "/",
    metadata_urls: [`${endpoint}/.well-known/openid-configuration`],
    introspection_endpoint: `${endpoint}/oauth2/introspect`,
    client: { method: "bearer", secret: shared },
    introspection_cache_ttl: m.duration("introspection_cache_ttl", DEFAULT_TTL)!,
    introspection_cache_size: m.number("introspection_cache_size", 10_000, { min: 1, integer: true }),
  };
}

/**
 * Reads both forms. The other keys of `experimental_features` belong to experimental.ts (which leaves
 * `msc3861` to this reader), so that mapping is opened here and only `msc3861` inside it is checked.
 */
export function readOAuthDelegationConfig(r: Reader, baseDir: string): OAuthDelegationSection {
  const msc3861 = readMsc3861(r.section("experimental_features").open().section("msc3861"), baseDir);
  const mas = readMas(r.section("matrix_authentication_service"), baseDir);
  if (msc3861 && mas)
    throw new ConfigError("matrix_authentication_service.enabled", "cannot be set with experimental_features.msc3861.enabled: use one of the two");
  return { oauth_delegation: msc3861 ?? mas };
}

/** What the config around delegation must not turn on (Synapse's check_config_conflicts). */
export interface DelegationConflictView {
  oauth_delegation: OAuthDelegationConfig | undefined;
  password_config: { enabled: boolean };
  enable_registration: boolean;
  oidc_providers: unknown[];
  login_via_existing_session: { enabled: boolean };
  oauth_server?: { enabled: boolean };
  refresh_token_lifetime?: number;
  nonrefreshable_access_token_lifetime?: number;
  session_lifetime?: number;
  enable_3pid_changes: boolean;
}

export function checkDelegationConflicts(c: DelegationConflictView): void {
  if (!c.oauth_delegation) return;
  if (c.password_config.enabled) throw new ConfigError("password_config.enabled", "Password auth cannot be enabled when OAuth delegation is enabled");
  if (c.enable_registration) throw new ConfigError("enable_registration", "Registration cannot be enabled when OAuth delegation is enabled");
  if (c.oidc_providers.length > 0) throw new ConfigError("oidc_providers", "SSO cannot be enabled when OAuth delegation is enabled");
  if (c.login_via_existing_session.enabled)
    throw new ConfigError("login_via_existing_session.enabled", "Login via existing session cannot be enabled when OAuth delegation is enabled");
  if (c.refresh_token_lifetime) throw new ConfigError("refresh_token_lifetime", "refresh_token_lifetime cannot be set when OAuth delegation is enabled");
  if (c.nonrefreshable_access_token_lifetime)
    throw new ConfigError("nonrefreshable_access_token_lifetime", "nonrefreshable_access_token_lifetime cannot be set when OAuth delegation is enabled");
  if (c.session_lifetime) throw new ConfigError("session_lifetime", "session_lifetime cannot be set when OAuth delegation is enabled");
  if (c.enable_3pid_changes) throw new ConfigError("enable_3pid_changes", "enable_3pid_changes cannot be enabled when OAuth delegation is enabled");
  // One authorization server: Weft's own (oauth_server) or the delegated one, never both.
  if (c.oauth_server?.enabled) throw new ConfigError("oauth_server.enabled", "Weft's own OAuth server cannot be enabled when OAuth delegation is enabled");
}
