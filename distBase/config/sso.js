// Single sign-on options with Synapse's names: `oidc_providers` (issuer, discovery, client credentials,
// PKCE, scopes, the user_mapping_provider templates) and the `sso` section (client_whitelist).
// Spec: Client-Server API "Single Sign-On"; Synapse's "oidc_providers" configuration manual.
import { ConfigError } from "./errors.js";
import { Reader as R } from "./config.js";
import { templateProblem } from "../domain/sso/templates.js";
function strings(r, key, def) {
    if (!r.has(key))
        return def;
    return r.list(key).map((v, i) => {
        if (typeof v !== "string" || v.length === 0)
            throw new ConfigError(`${key}[${i}]`, "must be a non-empty string");
        return v;
    });
}
function oneOf(r, key, values, def) {
    const v = r.string(key, def);
    if (!values.includes(v))
        throw new ConfigError(key, `must be one of ${values.join(", ")}, not "${v}"`);
    return v;
}
function readProvider(item, i) {
    if (typeof item !== "object" || item === null || Array.isArray(item))
        throw new ConfigError(`oidc_providers[${i}]`, "must be a mapping");
    const p = new R(item, `oidc_providers[${i}].`);
    const rawId = p.string("idp_id", "oidc");
    if (!/^[A-Za-z0-9._~-]{1,250}$/.test(rawId))
        throw new ConfigError(`oidc_providers[${i}].idp_id`, "must be 1-250 characters of A-Z a-z 0-9 . _ ~ -");
    const issuer = p.string("issuer");
    const url = (key) => {
        const v = p.optString(key);
        if (v !== undefined && !/^https?:\/\//.test(v))
            throw new ConfigError(`oidc_providers[${i}].${key}`, "must be an http(s) URL");
        return v;
    };
    if (!/^https?:\/\//.test(issuer))
        throw new ConfigError(`oidc_providers[${i}].issuer`, "must be an http(s) URL");
    const discover = p.bool("discover", true);
    const mapping = p.section("user_mapping_provider").section("config");
    const localpart_template = mapping.optString("localpart_template");
    if (localpart_template === undefined)
        throw new ConfigError(`oidc_providers[${i}].user_mapping_provider.config.localpart_template`, "is required (Weft has no page to pick a username)");
    const provider = {
        idp_id: rawId === "oidc" ? rawId : `oidc-${rawId}`,
        idp_name: p.string("idp_name", "OIDC"),
        idp_icon: p.optString("idp_icon"),
        idp_brand: p.optString("idp_brand"),
        issuer,
        discover,
        client_id: p.string("client_id"),
        client_secret: p.optString("client_secret"),
        client_auth_method: oneOf(p, "client_auth_method", ["client_secret_basic", "client_secret_post", "none"], "client_secret_basic"),
        pkce_method: oneOf(p, "pkce_method", ["auto", "always", "never"], "auto"),
        scopes: strings(p, "scopes", ["openid"]),
        authorization_endpoint: url("authorization_endpoint"),
        token_endpoint: url("token_endpoint"),
        userinfo_endpoint: url("userinfo_endpoint"),
        jwks_uri: url("jwks_uri"),
        user_profile_method: oneOf(p, "user_profile_method", ["auto", "userinfo_endpoint"], "auto"),
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
    for (const [key, tpl] of [["localpart_template", m.localpart_template], ["display_name_template", m.display_name_template]]) {
        const problem = tpl === undefined ? undefined : templateProblem(tpl);
        if (problem)
            throw new ConfigError(`oidc_providers[${i}].user_mapping_provider.config.${key}`, problem);
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
export function readSsoConfig(r) {
    const providers = r.list("oidc_providers").map(readProvider);
    const ids = new Set();
    for (const p of providers) {
        if (ids.has(p.idp_id))
            throw new ConfigError("oidc_providers", `idp_id "${p.idp_id}" is used twice`);
        ids.add(p.idp_id);
    }
    const sso = r.section("sso");
    return { oidc_providers: providers, sso: { client_whitelist: strings(sso, "client_whitelist", []) } };
}
