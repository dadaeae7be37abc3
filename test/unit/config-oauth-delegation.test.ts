// Delegated authentication's options (MSC3861): `experimental_features.msc3861` and
// `matrix_authentication_service` parsed with Synapse's names and defaults, the defaults they change
// (passwords and 3PID changes off), and the contradictory options refused with Synapse's messages.
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../../src/config/config.ts";

const msc3861 = { enabled: true, issuer: "https://auth.example.org/", client_id: "weft", client_secret: "s3cret" };
const parse = (extra: Record<string, unknown>, dir = "/srv/weft") => parseConfig({ server_name: "example.org", ...extra }, dir);
const withMsc3861 = (m: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
  parse({ experimental_features: { msc3861: { ...msc3861, ...m } }, ...extra });

function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("expected a ConfigError");
}

describe("delegated authentication config (MSC3861)", () => {
  it("is off by default, and off when enabled is false", () => {
    expect(parse({}).oauth_delegation).toBeUndefined();
    const c = parse({ experimental_features: { msc3861: { enabled: false, issuer: "anything" } } });
    expect(c.oauth_delegation).toBeUndefined();
    expect(c.warnings).toEqual([]);
  });

  it("reads experimental_features.msc3861 with Synapse's defaults", () => {
    const c = withMsc3861({ admin_token: "admin", account_management_url: "https://auth.example.org/account" });
    expect(c.oauth_delegation).toMatchObject({
      kind: "msc3861",
      issuer: "https://auth.example.org/",
      metadata_urls: ["https://auth.example.org/.well-known/openid-configuration", "https://auth.example.org/.well-known/oauth-authorization-server"],
      client: { method: "client_secret_post", client_id: "weft", client_secret: "s3cret" },
      admin_token: "admin",
      account_management_url: "https://auth.example.org/account",
      introspection_cache_ttl: 120_000,
    });
    expect(c.warnings).toEqual([]);
    // The defaults Synapse changes under delegation.
    expect(c.password_config.enabled).toBe(false);
    expect(c.enable_3pid_changes).toBe(false);
  });

  it("puts RFC 8414's well-known segment before an issuer's path", () => {
    const c = withMsc3861({ issuer: "https://example.org/auth" });
    expect(c.oauth_delegation!.metadata_urls).toEqual(["https://example.org/auth/.well-known/openid-configuration", "https://example.org/.well-known/oauth-authorization-server/auth"]);
  });

  it("reads secrets from files (client_secret_path, admin_token_path), never both forms", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "weft-cfg-"));
    try {
      writeFileSync(path.join(dir, "secret"), "from-file\n");
      const c = parse({ experimental_features: { msc3861: { ...msc3861, client_secret: undefined, client_secret_path: "secret", admin_token_path: "secret" } } }, dir);
      expect(c.oauth_delegation!.client).toMatchObject({ client_secret: "from-file" });
      expect(c.oauth_delegation!.admin_token).toBe("from-file");
      expect(configError(() => withMsc3861({ client_secret_path: path.join(dir, "secret") }))).toMatch(/client_secret and .*client_secret_path cannot both be set/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses what cannot work: no issuer, no client_id, unknown method, missing secret or key, a bad key", () => {
    expect(configError(() => withMsc3861({ issuer: undefined }))).toMatch(/msc3861\.issuer.*required/);
    expect(configError(() => withMsc3861({ issuer: "ftp://x" }))).toMatch(/must be an http\(s\) URL/);
    expect(configError(() => withMsc3861({ client_id: undefined }))).toMatch(/client_id.*required/);
    expect(configError(() => withMsc3861({ client_auth_method: "tls_client_auth" }))).toMatch(/must be one of client_secret_basic/);
    expect(configError(() => withMsc3861({ client_secret: undefined }))).toMatch(/A client secret must be provided when using the client_secret_post client auth method/);
    expect(configError(() => withMsc3861({ client_auth_method: "private_key_jwt" }))).toMatch(/A JWKS must be provided/);
    expect(configError(() => withMsc3861({ client_auth_method: "private_key_jwt", jwk: { kty: "EC", crv: "P-256", x: "bad" } }))).toMatch(/msc3861\.jwk.*not a usable private JSON Web Key/);
    const jwk = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "jwk" });
    expect(withMsc3861({ client_auth_method: "private_key_jwt", client_secret: undefined, jwk }).oauth_delegation!.client.method).toBe("private_key_jwt");
  });

  it("refuses the options Synapse refuses beside delegation, naming them", () => {
    expect(configError(() => withMsc3861({}, { enable_registration: true }))).toMatch(/'enable_registration': Registration cannot be enabled when OAuth delegation is enabled/);
    expect(configError(() => withMsc3861({}, { oauth_server: { enabled: true } }))).toMatch(/'oauth_server.enabled': Weft's own OAuth server cannot be enabled when OAuth delegation is enabled/);
    expect(configError(() => withMsc3861({}, { password_config: { enabled: true } }))).toMatch(/Password auth cannot be enabled/);
    expect(configError(() => withMsc3861({}, { enable_3pid_changes: true }))).toMatch(/enable_3pid_changes cannot be enabled/);
    expect(configError(() => withMsc3861({}, { session_lifetime: "1d" }))).toMatch(/session_lifetime cannot be set/);
    expect(configError(() => withMsc3861({}, { refresh_token_lifetime: "1d" }))).toMatch(/refresh_token_lifetime cannot be set/);
    expect(configError(() => withMsc3861({}, { login_via_existing_session: { enabled: true } }))).toMatch(/Login via existing session cannot be enabled/);
    const oidc = [{ issuer: "https://idp.example/", client_id: "c", client_secret: "s", user_mapping_provider: { config: { localpart_template: "{{ user.sub }}" } } }];
    expect(configError(() => withMsc3861({}, { oidc_providers: oidc }))).toMatch(/SSO cannot be enabled when OAuth delegation is enabled/);
  });

  it("reads matrix_authentication_service (endpoint, secret), refusing it without a secret or beside msc3861", () => {
    const c = parse({ matrix_authentication_service: { enabled: true, endpoint: "http://mas:8080/", secret: "shared" } });
    expect(c.oauth_delegation).toMatchObject({
      kind: "mas",
      metadata_urls: ["http://mas:8080/.well-known/openid-configuration"],
      introspection_endpoint: "http://mas:8080/oauth2/introspect",
      client: { method: "bearer", secret: "shared" },
    });
    expect(c.password_config.enabled).toBe(false);
    expect(configError(() => parse({ matrix_authentication_service: { enabled: true } }))).toMatch(/You must set a `secret` or `secret_path`/);
    expect(configError(() => parse({ matrix_authentication_service: { enabled: true, secret: "s" }, experimental_features: { msc3861 } }))).toMatch(/use one of the two/);
  });

  it("warns of unknown keys inside msc3861, and keeps the other experimental features' checks", () => {
    const c = withMsc3861({ clent_id: "typo" });
    expect(c.warnings.join("\n")).toMatch(/experimental_features\.msc3861\.clent_id/);
    const other = parse({ experimental_features: { msc3861, msc9999_enabled: true } });
    expect(other.warnings.join("\n")).toMatch(/experimental_features\.msc9999_enabled/);
  });
});
