// Single sign-on options with Synapse's names: `oidc_providers` (issuer, discovery, client credentials,
// PKCE, scopes, the user_mapping_provider templates) and the `sso` section (client_whitelist).
// Spec: Client-Server API "Single Sign-On"; Synapse's "oidc_providers" configuration manual.
import { ConfigError } from "./errors.ts";
import type { Reader } from "./config.ts";
import { Reader as R } from "./config.ts";
import { templateProblem } from "../domain/sso/templates.ts";

export interface OidcProviderConfig {
  /** Synapse prefixes every id but "oidc" with "oidc-", so ids of configs moved from Synapse keep working. */
  idp_id: string;
  idp_name: string;
  idp_icon?: string;
  idp_brand?: string;
  issuer: string;
  discover: boolean;
  client_id: string;
  client_secret?: string;
  client_auth_method: "client_secret_basic" | "client_secret_post" | "none";
  pkce_method: "auto" | "always" | "never";
  scopes: string[];
  /** Endpoints given by hand when `discover: false`. */
  authorization_endpoint?: string;
  token_endpoint?: string;
  userinfo_endpoint?: string;
  jwks_uri?: string;
  user_profile_method: "auto" | "userinfo_endpoint";
  allow_existing_users: boolean;
  /** Synapse's option for testing: skip the checks of the provider's metadata (plain http is allowed). */
  skip_verification: boolean;
  user_mapping_provider: {
    subject_claim: string;
    localpart_template: string;
    display_name_template?: string;
    confirm_localpart: boolean;
  };
}

export interface SsoConfig {
  oidc_providers: OidcProviderConfig[];
  sso: { client_whitelist: string[] };
}

function strings(r: Reader, key: string, def: string[]): string[] {
  if (!r.has(key)) return def;
  return r.list(key).map((v, i) => {
    if (typeof v !== "string" || v.length === 0) throw new ConfigError(`${key}[${i}]`, "must be a non-empty string");
    return v;
  });
}

function oneOf<T extends string>(r: Reader, key: string, values: readonly T[], def: T): T {
  const v = r.string(key, def);
  if (!values.includes(v as T)) throw new ConfigError(key, `must be one of ${values.join(", ")}, not "${v}"`);
  return v as T;
}

function readProvider(item: unknown, i: number): OidcProviderConfig {
  if (typeof item !== "object" || item === null || Array.isArray(item)) throw new ConfigError(`oidc_providers[${i}]`, "must be a mapping");
  const p = new R(item as Record<string, unknown>, `oidc_providers[${i}].`);
  const rawId = p.string("idp_id", "oidc");
  if (!/^[A-Za-z0-9._~-]{1,250}$/.test(rawId)) throw new ConfigError(`oidc_providers[${i}].idp_id`, "must be 1-250 characters of A-Z a-z 0-9 . _ ~ -");
  const issuer = p.string("issuer");
  const url = (key: string) => {
    const v = p.optString(key);
    if (v !== undefined && !/^https?:\/\//.test(v)) throw new ConfigError(`oidc_providers[${i}].${key}`, "must be an http(s) URL");
    return v;
  };
  if (!/^https?:\/\//.test(issuer)) throw new ConfigError(`oidc_providers[${i}].issuer`, "must be an http(s) URL");
  const discover = p.bool("discover", true);
  const mapping = p.section("user_mapping_provider").section("config");
  const localpart_template = mapping.optString("localpart_template");
  if (localpart_template === undefined)
    throw new ConfigError(`oidc_providers[${i}].user_mapping_provider.config.localpart_template`, "is required (Weft has no page to pick a username)");
  const provider: OidcProviderConfig = {
    idp_id: rawId === "oidc" ? rawId : `oidc-${rawId}`,
    idp_name: p.string("idp_name", "OIDC"),
    idp_icon: p.optString("idp_icon"),
    idp_brand: p.optString("idp_brand"),
    issuer,
    discover,
    client_id: p.string("client_id"),
    client_secret: p.optString("client_secret"),
    client_auth_method: oneOf(p, "client_auth_method", ["client_secret_basic", "client_secret_post", "none"] as const, "client_secret_basic"),
    pkce_method: oneOf(p, "pkce_method", ["auto", "always", "never"] as const, "auto"),
    scopes: strings(p, "scopes", ["openid"]),
    authorization_endpoint: url("authorization_endpoint"),
    token_endpoint: url("token_endpoint"),
    userinfo_endpoint: url("userinfo_endpoint"),
    jwks_uri: url("jwks_uri"),
    user_profile_method: oneOf(p, "user_profile_method", ["auto", "userinfo_endpoint"] as const, "auto"),
    allow_existing_users: p.bool("allow_existing_users", false),
    skip_verification: p.bool("skip_verification", false),
    user_mapping_provider: {
      subject_claim: mapping.string("subject_claim", "sub"),
      localpart_template,
      display_name_template: mapping.optString("display_name_template"),
      confirm_localpart: mapping.bool("confirm_localpart", false),
    },
  };
  const m = provider.user_mapping_provider;
  for (const [key, tpl] of [["localpart_template", m.localpart_template], ["display_name_template", m.display_name_template]] as const) {
    const problem = tpl === undefined ? undefined : templateProblem(tpl);
    if (problem) throw new ConfigError(`oidc_providers[${i}].user_mapping_provider.config.${key}`, problem);
  }
  if (provider.user_mapping_provider.confirm_localpart)
    throw new ConfigError(`oidc_providers[${i}].user_mapping_provider.config.confirm_localpart`, "is not supported by Weft");
  if (provider.client_auth_method !== "none" && provider.client_secret === undefined)
    throw new ConfigError(`oidc_providers[${i}].client_secret`, `is required with client_auth_method ${provider.client_auth_method}`);
  if (!discover && (!provider.authorization_endpoint || !provider.token_endpoint))
    throw new ConfigError(`oidc_providers[${i}]`, "authorization_endpoint and token_endpoint are required when discover is false");
  if (!discover && provider.scopes.includes("openid") && !provider.jwks_uri)
    throw new ConfigError(`oidc_providers[${i}].jwks_uri`, "is required when discover is false and the openid scope is used");
  return provider;
}

export function readSsoConfig(r: Reader): SsoConfig {
  const providers = r.list("oidc_providers").map(readProvider);
  const ids = new Set<string>();
  for (const p of providers) {
    if (ids.has(p.idp_id)) throw new ConfigError("oidc_providers", `idp_id "${p.idp_id}" is used twice`);
    ids.add(p.idp_id);
  }
  const sso = r.section("sso");
  return { oidc_providers: providers, sso: { client_whitelist: strings(sso, "client_whitelist", []) } };
}
