// Weft's own OAuth 2.0 server (spec v1.15+ "OAuth 2.0 API") over HTTP on SQLite and PostgreSQL, driven by
// openid-client as a generic OAuth client and a form-following agent (test/helpers/oauth-agent.ts):
// GET /auth_metadata (RFC 8414, checked against the spec's OpenAPI), dynamic client registration (RFC 7591,
// MSC2966's URI rules and errors), and the authorisation endpoint (MSC2964: login and consent pages,
// PKCE S256 only, state, query and fragment response modes, exact redirect URIs, loopback on any port,
// CSRF, single-use hashed codes), the token endpoint (code exchange with PKCE, refresh rotation, the
// refusals of RFC 6749), revocation (RFC 7009) and the device authorisation grant (RFC 8628), the tokens
// used on /whoami and /sync.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as oidc from "openid-client";
import { fetch as undiciFetch } from "undici";
import { createHash, createPublicKey, verify } from "node:crypto";
import { backends, startTestServer, TestClock, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { OAuthAgent, readForm } from "../helpers/oauth-agent.ts";
import { hashToken } from "../../src/domain/accounts/tokens.ts";
import { crossSigningKeys } from "../helpers/e2ee.ts";
import { purgeExpiredOAuthRows } from "../../src/domain/oauth/housekeeping.ts";
import { capturedLog, type CapturedLog } from "../helpers/captured-log.ts";

const META = "/_matrix/client/v1/auth_metadata";
const WEB_CLIENT = {
  client_name: "Test web client",
  client_uri: "https://client.example.org/",
  redirect_uris: ["https://app.client.example.org/callback"],
  tos_uri: "https://client.example.org/tos",
  policy_uri: "https://client.example.org/policy",
  response_types: ["code"],
  grant_types: ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:token-exchange"],
  token_endpoint_auth_method: "none",
  application_type: "web",
};

describe.each(backends())("the OAuth 2.0 server on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let log: CapturedLog;
  const clock = new TestClock();

  beforeAll(async () => {
    log = capturedLog();
    t = await startTestServer({ backend, clock, log: log.logger, config: { oauth_server: { enabled: true, rc_client_registration: { per_second: 1000, burst_count: 1000 }, rc_authorization: { per_second: 1000, burst_count: 1000 }, rc_token: { per_second: 1000, burst_count: 1000 } } } });
    alice = await registerUser(t, "alice");
  });
  afterAll(async () => {
    await t?.close();
  });

  /**
   * Runs `act`, then expects exactly one refusal line (issue 38: "refused and logged"): warn level, the
   * kind in `oauth_refusal`, the fields given, the client IP; and none of `secrets` anywhere in the log.
   */
  const refused = async <T>(kind: string | undefined, fields: Record<string, unknown>, secrets: (string | undefined)[], act: () => Promise<T>): Promise<T> => {
    const from = log.lines.length;
    const out = await act();
    const lines = log.lines.slice(from).filter((l) => l.oauth_refusal !== undefined);
    expect(lines.map((l) => l.oauth_refusal)).toEqual(kind === undefined ? [] : [kind]);
    if (kind !== undefined) {
      expect(lines[0]).toMatchObject({ level: 40, ...fields });
      expect(typeof lines[0]!.msg).toBe("string");
      expect(lines[0]!.ip).toMatch(/^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/);
    }
    const all = JSON.stringify(log.lines);
    for (const secret of secrets) {
      expect(secret).toBeTruthy();
      expect(all).not.toContain(secret!);
      expect(all).not.toContain(hashToken(secret!));
    }
    return out;
  };

  const register = (body: unknown) => t.call("POST", "/_weft/oauth2/register", { body });
  /**
   * Registers through openid-client, which discovers the server by RFC 8414 (its
   * /.well-known/oauth-authorization-server, the same document as /auth_metadata) and checks the issuer.
   */
  const oauthClient = async (metadata: Partial<oidc.ClientMetadata> = WEB_CLIENT) =>
    oidc.dynamicClientRegistration(new URL(t.config.public_baseurl), metadata, oidc.None(), { algorithm: "oauth2", execute: [oidc.allowInsecureRequests] });
  const authorizationUrl = async (config: oidc.Configuration, extra: Record<string, string> = {}) => {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: (config.clientMetadata().redirect_uris as string[])[0]!,
      scope: "urn:matrix:client:api:* urn:matrix:client:device:OAUTHDEV01",
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state,
      response_mode: "query",
      ...extra,
    });
    return { url: url.href, verifier, state };
  };
  /** Opens the authorisation URL, signs in as alice, and returns the consent page. */
  const toConsent = async (agent: OAuthAgent, url: string) => {
    const login = await agent.open(url);
    expect(login.status).toBe(200);
    return agent.submit(login, "login", { username: "alice", password: "password" });
  };

  it("GET /auth_metadata answers the RFC 8414 metadata the spec requires (its OpenAPI), on the stable and unstable paths", async () => {
    const res = await t.call("GET", META);
    expect(res.status).toBe(200);
    expectMatchesSpec(res, "GET", META);
    const base = t.config.public_baseurl;
    expect(res.json).toMatchObject({
      issuer: base,
      authorization_endpoint: `${base}_weft/oauth2/authorize`,
      token_endpoint: `${base}_weft/oauth2/token`,
      registration_endpoint: `${base}_weft/oauth2/register`,
      revocation_endpoint: `${base}_weft/oauth2/revoke`,
      response_types_supported: ["code"],
      response_modes_supported: ["query", "fragment"],
      code_challenge_methods_supported: ["S256"],
      prompt_values_supported: ["create"], // enable_registration (the tests' default), no e-mail required
    });
    expect(res.json.grant_types_supported).toEqual(["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"]);
    expect(res.json.device_authorization_endpoint).toBe(`${base}_weft/oauth2/device`);
    expect(res.json.account_management_uri).toBe(`${base}_weft/oauth2/account`);
    expect(res.json.account_management_actions_supported).toEqual(["org.matrix.profile", "org.matrix.devices_list", "org.matrix.device_view", "org.matrix.device_delete", "org.matrix.account_deactivate", "org.matrix.cross_signing_reset"]);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const unstable = await t.call("GET", "/_matrix/client/unstable/org.matrix.msc2965/auth_metadata");
    expect(unstable.json).toEqual(res.json);
    expect((await t.call("GET", "/.well-known/oauth-authorization-server")).json).toEqual(res.json);
  });

  it("registers a web client through openid-client: 201 with a client_id and the metadata it understood", async () => {
    const config = await oauthClient();
    const registered = config.clientMetadata();
    expect(typeof registered.client_id).toBe("string");
    expect(registered).toMatchObject({ client_name: "Test web client", redirect_uris: WEB_CLIENT.redirect_uris, token_endpoint_auth_method: "none", application_type: "web" });
    // The token-exchange grant is not supported, so it is not registered (as the spec's example).
    expect(registered.grant_types).toEqual(["authorization_code", "refresh_token"]);
    const deviceOnly = await register({ client_uri: "https://tv.example.com/", grant_types: ["urn:ietf:params:oauth:grant-type:device_code", "refresh_token"] });
    expect([deviceOnly.status, deviceOnly.json.redirect_uris]).toEqual([201, []]);
    const res = await register({ ...WEB_CLIENT, "client_name#fr": "Client de test" });
    expect(res.status).toBe(201);
    expect(res.json["client_name#fr"]).toBeUndefined();
    expect(res.headers.get("cache-control")).toBe("no-store");
    // Web clients register with JSON: the preflight is answered with the CORS headers.
    const preflight = await undiciFetch(new URL("/_weft/oauth2/register", t.baseUrl), { method: "OPTIONS", headers: { origin: "https://app.client.example.org", "access-control-request-method": "POST", "access-control-request-headers": "content-type" } });
    expect(preflight.status).toBeLessThan(300);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("Content-Type");
  });

  it("registers native clients: a private-use scheme of the reversed client host, loopback URIs without a port, claimed https", async () => {
    const res = await register({
      client_uri: "https://example.com/",
      application_type: "native",
      redirect_uris: ["com.example.app:/callback", "com.example:/", "com.example:callback", "http://localhost/callback", "http://127.0.0.1/callback", "http://[::1]/callback", "https://example.com/native"],
    });
    expect(res.status).toBe(201);
    expect(res.json.redirect_uris).toHaveLength(7);
  });

  it("refuses registrations that break the rules with invalid_client_metadata or invalid_redirect_uri", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ redirect_uris: ["https://example.com/cb"] }, "invalid_client_metadata"], // no client_uri
      [{ client_uri: "http://example.com/", redirect_uris: ["https://example.com/cb"] }, "invalid_client_metadata"],
      [{ client_uri: "https://user:pw@example.com/", redirect_uris: ["https://example.com/cb"] }, "invalid_client_metadata"],
      [{ client_uri: "https://example.com/", redirect_uris: ["https://example.com/cb"], token_endpoint_auth_method: "client_secret_basic" }, "invalid_client_metadata"],
      [{ client_uri: "https://example.com/", redirect_uris: ["https://example.com/cb"], application_type: "desktop" }, "invalid_client_metadata"],
      [{ client_uri: "https://example.com/", redirect_uris: ["https://example.com/cb"], logo_uri: "https://elsewhere.org/logo.png" }, "invalid_client_metadata"],
      [{ client_uri: "https://example.com/", redirect_uris: ["https://example.com/cb"], tos_uri: "http://example.com/tos" }, "invalid_client_metadata"],
      [{ client_uri: "https://example.com/" }, "invalid_redirect_uri"], // the code grant needs a redirect URI
      [{ client_uri: "https://example.com/", redirect_uris: ["https://example.com/callback#fragment"] }, "invalid_redirect_uri"],
      [{ client_uri: "https://example.com/", redirect_uris: ["http://example.com/callback"] }, "invalid_redirect_uri"],
      [{ client_uri: "https://example.com/", redirect_uris: ["http://localhost/"] }, "invalid_redirect_uri"],
      [{ client_uri: "https://example.com/", redirect_uris: ["https://app.com/callback"] }, "invalid_redirect_uri"],
      [{ client_uri: "https://example.com/", application_type: "native", redirect_uris: ["example:/callback"] }, "invalid_redirect_uri"],
      [{ client_uri: "https://example.com/", application_type: "native", redirect_uris: ["com.example.app://callback"] }, "invalid_redirect_uri"],
      [{ client_uri: "https://example.com/", application_type: "native", redirect_uris: ["https://localhost/callback"] }, "invalid_redirect_uri"],
      [{ client_uri: "https://example.com/", application_type: "native", redirect_uris: ["http://localhost:1234/callback"] }, "invalid_redirect_uri"],
      [{ client_uri: "https://example.com/", redirect_uris: "https://example.com/cb" }, "invalid_redirect_uri"],
    ];
    for (const [body, error] of cases) {
      const res = await register(body);
      expect([res.status, res.json.error, JSON.stringify(body)]).toEqual([400, error, JSON.stringify(body)]);
      expect(typeof res.json.error_description).toBe("string");
    }
    const notJson = await t.call("POST", "/_weft/oauth2/register", { raw: "{not json", headers: { "content-type": "application/json" } });
    expect(notJson.status).toBe(400);
  });

  it("the code grant: login page with labelled fields, consent page naming client and scopes, the code back with state (query mode), stored hashed", async () => {
    const config = await oauthClient();
    const { url, state } = await authorizationUrl(config);
    const agent = new OAuthAgent();
    const login = await agent.open(url);
    expect(login.status).toBe(200);
    const loginForm = readForm(login.text, login.url)!;
    expect(loginForm.labelled).toEqual({ username: "Username", password: "Password" });
    expect(login.text).not.toContain("<script");
    expect(agent.cookie("weft_oauth_csrf")).toBe(loginForm.hidden.csrf);

    const wrong = await refused(undefined, {}, ["not the password"], () => agent.submit(login, "login", { username: "alice", password: "not the password" }));
    expect(wrong.status).toBe(403);
    expect(wrong.text).toContain('role="alert"');
    expect(wrong.location).toBeUndefined();

    const consent = await agent.submit(wrong, "login", { username: "alice", password: "password" });
    expect(consent.status).toBe(200);
    expect(consent.text).toContain('<span id="client-name">Test web client</span>');
    expect(consent.text).toContain(alice.user_id);
    expect(consent.text).toContain("urn:matrix:client:api:*");
    expect(consent.text).toContain("urn:matrix:client:device:OAUTHDEV01");
    expect(consent.text).toContain('href="https://client.example.org/tos"');

    const done = await agent.submit(consent, "consent");
    expect(done.status).toBe(303);
    const back = new URL(done.location!);
    expect(back.origin + back.pathname).toBe("https://app.client.example.org/callback");
    expect(back.searchParams.get("state")).toBe(state);
    const code = back.searchParams.get("code")!;
    expect(code.length).toBeGreaterThanOrEqual(32);
    const sql = t.hs.services.storage.sql;
    const rows = await sql.all<{ code_hash: string; device_id: string; user_id: string }>("SELECT code_hash, device_id, user_id FROM oauth_authorization_codes", []);
    expect(rows.map((r) => r.code_hash)).toContain(hashToken(code));
    expect(rows.some((r) => r.code_hash === code)).toBe(false);
    expect(rows.find((r) => r.code_hash === hashToken(code))).toMatchObject({ device_id: "OAUTHDEV01", user_id: alice.user_id });

    // The same browser is still signed in: the next authorisation goes straight to the consent page.
    const again = await agent.open((await authorizationUrl(config)).url);
    expect(readForm(again.text, again.url)!.buttons).toEqual(["consent", "deny", "switch"]);
  });

  it("fragment response mode puts code and state in the fragment; a native client's loopback URI is accepted on any port", async () => {
    const config = await oauthClient();
    const { url, state } = await authorizationUrl(config, { response_mode: "fragment" });
    const agent = new OAuthAgent();
    const done = await agent.submit(await toConsent(agent, url), "consent");
    const back = new URL(done.location!);
    expect(back.search).toBe("");
    const fragment = new URLSearchParams(back.hash.slice(1));
    expect(fragment.get("state")).toBe(state);
    expect(fragment.get("code")).toBeTruthy();

    const native = await oauthClient({ client_uri: "https://example.com/", application_type: "native", redirect_uris: ["http://127.0.0.1/callback", "com.example.app:/cb"], token_endpoint_auth_method: "none" });
    const loop = await authorizationUrl(native, { redirect_uri: "http://127.0.0.1:49152/callback" });
    const loopDone = await agent.submit(await agent.open(loop.url), "consent");
    expect(loopDone.location!.startsWith("http://127.0.0.1:49152/callback?")).toBe(true);
    const scheme = await authorizationUrl(native, { redirect_uri: "com.example.app:/cb" });
    const schemeDone = await agent.submit(await agent.open(scheme.url), "consent");
    expect(schemeDone.location!.startsWith("com.example.app:/cb?")).toBe(true);
    // A port is accepted only on the loopback URIs of native clients.
    const web = await oauthClient();
    const webPort = await agent.open((await authorizationUrl(web, { redirect_uri: "https://app.client.example.org:8443/callback" })).url);
    expect([webPort.status, webPort.location]).toEqual([400, undefined]);
  });

  it("errors before the redirect URI is trusted are shown, never redirected: unknown client, redirect URI mismatch", async () => {
    const config = await oauthClient();
    const agent = new OAuthAgent();
    const { url } = await authorizationUrl(config);
    const mismatch = new URL(url);
    mismatch.searchParams.set("redirect_uri", "https://app.client.example.org/other");
    const clientId = config.clientMetadata().client_id;
    const res = await refused("redirect_uri_mismatch", { client_id: clientId, endpoint: "authorize" }, [], () => agent.open(mismatch.href));
    expect([res.status, res.location]).toEqual([400, undefined]);
    expect(res.text).toContain("invalid_request");
    const prefix = new URL(url);
    prefix.searchParams.set("redirect_uri", "https://app.client.example.org/callback/extra");
    expect((await refused("redirect_uri_mismatch", { client_id: clientId }, [], () => agent.open(prefix.href))).status).toBe(400);
    const unknown = new URL(url);
    unknown.searchParams.set("client_id", "no-such-client");
    const res2 = await refused("invalid_client", { client_id: "no-such-client" }, [], () => agent.open(unknown.href));
    expect([res2.status, res2.location]).toEqual([400, undefined]);
    expect(res2.text).toContain("invalid_client");
  });

  it("errors after it go back to the client with state: PKCE missing or plain, unsupported response type, bad scopes; denial is access_denied", async () => {
    const config = await oauthClient();
    const agent = new OAuthAgent();
    const errorOf = async (change: (u: URL) => void, refusal?: string) => {
      const { url, state } = await authorizationUrl(config);
      const u = new URL(url);
      change(u);
      const res = await refused(refusal, { client_id: config.clientMetadata().client_id }, [], () => agent.open(u.href));
      expect(res.status).toBe(303);
      const back = new URL(res.location!);
      expect(back.searchParams.get("state")).toBe(state);
      expect(back.searchParams.get("code")).toBeNull();
      return back.searchParams.get("error");
    };
    expect(await errorOf((u) => { u.searchParams.delete("code_challenge"); u.searchParams.delete("code_challenge_method"); }, "pkce_missing")).toBe("invalid_request");
    expect(await errorOf((u) => u.searchParams.set("code_challenge_method", "plain"), "pkce_plain")).toBe("invalid_request");
    expect(await errorOf((u) => u.searchParams.delete("code_challenge_method"), "pkce_missing")).toBe("invalid_request");
    expect(await errorOf((u) => u.searchParams.set("response_type", "token"))).toBe("unsupported_response_type");
    expect(await errorOf((u) => u.searchParams.set("scope", "urn:matrix:client:device:ABC"))).toBe("invalid_scope");
    expect(await errorOf((u) => u.searchParams.set("scope", "urn:matrix:client:api:*"))).toBe("invalid_scope");
    expect(await errorOf((u) => u.searchParams.set("scope", "urn:matrix:client:api:* urn:matrix:client:device:A urn:matrix:client:device:B"))).toBe("invalid_scope");
    expect(await errorOf((u) => u.searchParams.set("scope", "urn:matrix:client:api:* urn:matrix:client:device:A admin"))).toBe("invalid_scope");
    // MSC2967's unstable scope names are accepted alike.
    const { url: unstableUrl } = await authorizationUrl(config, { scope: "urn:matrix:org.matrix.msc2967.client:api:* urn:matrix:org.matrix.msc2967.client:device:UNSTABLE1" });
    const consent = await toConsent(agent, unstableUrl);
    expect(consent.text).toContain("urn:matrix:org.matrix.msc2967.client:device:UNSTABLE1");
    const denied = await agent.submit(consent, "deny");
    expect(new URL(denied.location!).searchParams.get("error")).toBe("access_denied");
  });

  it("the forms need the CSRF token of the cookie: missing or wrong, the consent is refused and no code is made", async () => {
    const config = await oauthClient();
    const { url } = await authorizationUrl(config);
    const agent = new OAuthAgent();
    const consent = await toConsent(agent, url);
    const count = async () => Number((await t.hs.services.storage.sql.get<{ n: number | string }>("SELECT COUNT(*) AS n FROM oauth_authorization_codes", []))!.n);
    const before = await count();
    const clientId = config.clientMetadata().client_id;
    const csrf = agent.cookie("weft_oauth_csrf");
    const missing = await refused("csrf_mismatch", { client_id: clientId, endpoint: "authorize" }, [csrf], () => agent.submit(consent, "consent", {}, { drop: ["csrf"] }));
    expect([missing.status, missing.location]).toEqual([403, undefined]);
    const wrong = await refused("csrf_mismatch", { client_id: clientId }, [csrf, "x".repeat(32)], () => agent.submit(consent, "consent", {}, { override: { csrf: "x".repeat(32) } }));
    expect([wrong.status, wrong.location]).toEqual([403, undefined]);
    // A form posted from another site carries no cookie (SameSite) — the same refusal.
    const form = readForm(consent.text, consent.url)!;
    const crossSite = await refused("csrf_mismatch", { client_id: clientId }, [csrf], () => undiciFetch(form.action, { method: "POST", body: new URLSearchParams({ ...form.hidden, action: "consent" }), redirect: "manual" }));
    expect(crossSite.status).toBe(403);
    expect(await count()).toBe(before);
    // A login form without the token is refused too (login CSRF).
    const fresh = new OAuthAgent();
    const login = await fresh.open(url);
    const noToken = await refused("csrf_mismatch", { client_id: clientId }, ["password", fresh.cookie("weft_oauth_csrf")], () => fresh.submit(login, "login", { username: "alice", password: "password" }, { drop: ["csrf"] }));
    expect(noToken.status).toBe(403);
    expect((await refused(undefined, {}, [], () => agent.submit(consent, "consent"))).status).toBe(303);
    expect(await count()).toBe(before + 1);
  });

  /** A whole authorisation as alice in a fresh browser: the callback URL with the code, and the PKCE verifier. */
  const authorize = async (config: oidc.Configuration, extra: Record<string, string> = {}) => {
    const a = await authorizationUrl(config, extra);
    const agent = new OAuthAgent();
    const done = await agent.submit(await toConsent(agent, a.url), "consent");
    expect(done.status).toBe(303);
    const callback = new URL(done.location!);
    return { ...a, callback, code: callback.searchParams.get("code")! };
  };
  const tokenPost = async (form: Record<string, string>, path = "/_weft/oauth2/token") => {
    const res = await undiciFetch(new URL(path, t.baseUrl), { method: "POST", body: new URLSearchParams(form) });
    return { status: res.status, json: (await res.json()) as Record<string, any> };
  };
  const whoami = (token: string) => t.call("GET", "/_matrix/client/v3/account/whoami", { token });
  const aliceDevices = async () => ((await t.call("GET", "/_matrix/client/v3/devices", { token: alice.access_token })).json.devices as { device_id: string; display_name?: string }[]).map((d) => d.device_id);

  it("openid-client exchanges the code (PKCE), refreshes and revokes: the tokens are Weft's, on /whoami and /sync, and revocation deletes the device", async () => {
    const config = await oauthClient();
    const { callback, verifier, state } = await authorize(config, { scope: "urn:matrix:client:api:* urn:matrix:client:device:FLOWDEV001" });
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
    expect(tokens.token_type.toLowerCase()).toBe("bearer");
    expect(tokens.scope).toBe("urn:matrix:client:api:* urn:matrix:client:device:FLOWDEV001");
    expect(tokens.expires_in).toBeGreaterThan(0);
    expect(typeof tokens.refresh_token).toBe("string");
    const me = await whoami(tokens.access_token);
    expect(me.json).toMatchObject({ user_id: alice.user_id, device_id: "FLOWDEV001" });
    const sync = await t.call("GET", "/_matrix/client/v3/sync?timeout=0", { token: tokens.access_token });
    expect(sync.status).toBe(200);
    expect(typeof sync.json.next_batch).toBe("string");
    expect(await aliceDevices()).toContain("FLOWDEV001");

    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(refreshed.scope).toBe(tokens.scope);
    expect((await whoami(refreshed.access_token)).json.device_id).toBe("FLOWDEV001");

    await oidc.tokenRevocation(config, refreshed.refresh_token!, { token_type_hint: "refresh_token" });
    const after = await whoami(refreshed.access_token);
    expect([after.status, after.json.errcode]).toEqual([401, "M_UNKNOWN_TOKEN"]);
    expect(await aliceDevices()).not.toContain("FLOWDEV001");
    // Revoking again, or an unknown token, is answered 200 alike (RFC 7009 §2.2).
    await oidc.tokenRevocation(config, refreshed.refresh_token!);
    // Revoking the access token ends the session too.
    const second = await authorize(config, { scope: "urn:matrix:client:api:* urn:matrix:client:device:FLOWDEV002" });
    const t2 = await oidc.authorizationCodeGrant(config, second.callback, { pkceCodeVerifier: second.verifier, expectedState: second.state });
    await oidc.tokenRevocation(config, t2.access_token, { token_type_hint: "access_token" });
    expect((await whoami(t2.access_token)).status).toBe(401);
    expect(await aliceDevices()).not.toContain("FLOWDEV002");
  });

  it("the token endpoint refuses: wrong or missing PKCE verifier, code reuse (which ends the session), redirect mismatch, another client's code", async () => {
    const config = await oauthClient();
    const other = await oauthClient();
    const clientId = config.clientMetadata().client_id;
    const redirect = WEB_CLIENT.redirect_uris[0]!;
    const exchange = (code: string, extra: Record<string, string> = {}) =>
      tokenPost({ grant_type: "authorization_code", code, redirect_uri: redirect, client_id: clientId, ...extra });

    const a = await authorize(config);
    const badVerifier = oidc.randomPKCECodeVerifier();
    const wrongVerifier = await refused("pkce_mismatch", { client_id: clientId, user_id: alice.user_id, endpoint: "token" }, [a.code, badVerifier, a.verifier], () => exchange(a.code, { code_verifier: badVerifier }));
    expect([wrongVerifier.status, wrongVerifier.json.error]).toEqual([400, "invalid_grant"]);
    const b = await authorize(config);
    const noVerifier = await refused("pkce_missing", { client_id: clientId }, [b.code], () => exchange(b.code));
    expect([noVerifier.status, noVerifier.json.error]).toEqual([400, "invalid_request"]);
    const c = await authorize(config);
    const mismatch = await refused("redirect_uri_mismatch", { client_id: clientId, user_id: alice.user_id }, [c.code, c.verifier], () => exchange(c.code, { code_verifier: c.verifier, redirect_uri: "https://app.client.example.org/other" }));
    expect([mismatch.status, mismatch.json.error]).toEqual([400, "invalid_grant"]);
    const d = await authorize(config);
    const stolen = await refused("code_other_client", { client_id: other.clientMetadata().client_id, grant_client_id: clientId, user_id: alice.user_id }, [d.code, d.verifier], () => exchange(d.code, { code_verifier: d.verifier, client_id: other.clientMetadata().client_id }));
    expect([stolen.status, stolen.json.error]).toEqual([400, "invalid_grant"]);

    const e = await authorize(config, { scope: "urn:matrix:client:api:* urn:matrix:client:device:REUSEDEV01" });
    const first = await refused(undefined, {}, [], () => exchange(e.code, { code_verifier: e.verifier }));
    expect(first.status).toBe(200);
    expect((await whoami(first.json.access_token)).status).toBe(200);
    const again = await refused("code_reused", { client_id: clientId, user_id: alice.user_id }, [e.code, e.verifier, first.json.access_token, first.json.refresh_token], () => exchange(e.code, { code_verifier: e.verifier }));
    expect([again.status, again.json.error]).toEqual([400, "invalid_grant"]);
    expect((await whoami(first.json.access_token)).status).toBe(401);
    expect(await aliceDevices()).not.toContain("REUSEDEV01");
    expect((await exchange("no-such-code", { code_verifier: e.verifier })).json.error).toBe("invalid_grant");
  });

  it("refresh is refused for another client and for more scope; bad requests get RFC 6749 errors, never a 500", async () => {
    const config = await oauthClient();
    const other = await oauthClient();
    const a = await authorize(config);
    const tokens = await oidc.authorizationCodeGrant(config, a.callback, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    const refreshAsToken = (clientId: string, refreshToken: string) => tokenPost({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId });
    const refreshAs = (clientId: string, extra: Record<string, string> = {}) =>
      tokenPost({ grant_type: "refresh_token", refresh_token: tokens.refresh_token!, client_id: clientId, ...extra });
    const cross = await refused("cross_client_refresh", { client_id: other.clientMetadata().client_id, grant_client_id: config.clientMetadata().client_id, user_id: alice.user_id }, [tokens.refresh_token, tokens.access_token], () => refreshAs(other.clientMetadata().client_id));
    expect([cross.status, cross.json.error]).toEqual([400, "invalid_grant"]);
    const escalate = await refused("scope_escalation", { client_id: config.clientMetadata().client_id, user_id: alice.user_id }, [tokens.refresh_token], () => refreshAs(config.clientMetadata().client_id, { scope: `${tokens.scope} urn:matrix:client:device:OTHERDEV` }));
    expect([escalate.status, escalate.json.error]).toEqual([400, "invalid_scope"]);
    const narrower = await refreshAs(config.clientMetadata().client_id, { scope: "urn:matrix:client:api:*" });
    expect(narrower.status).toBe(200);
    // A legacy /login refresh token is no OAuth grant.
    const legacy = await t.call("POST", "/_matrix/client/v3/login", { body: { type: "m.login.password", identifier: { type: "m.id.user", user: "alice" }, password: "password", refresh_token: true } });
    const legacyRefresh = await tokenPost({ grant_type: "refresh_token", refresh_token: legacy.json.refresh_token, client_id: config.clientMetadata().client_id });
    expect([legacyRefresh.status, legacyRefresh.json.error]).toEqual([400, "invalid_grant"]);
    // Revocation needs no client_id and revokes any token, another client's or a legacy one (spec: so
    // secret scanners can revoke leaked tokens).
    const legacyRevoke = await tokenPost({ token: legacy.json.access_token }, "/_weft/oauth2/revoke");
    expect(legacyRevoke.status).toBe(200);
    expect((await whoami(legacy.json.access_token)).status).toBe(401);
    const b = await authorize(config, { scope: "urn:matrix:client:api:* urn:matrix:client:device:CROSSREV01" });
    const bt = await oidc.authorizationCodeGrant(config, b.callback, { pkceCodeVerifier: b.verifier, expectedState: b.state });
    expect((await tokenPost({ token: bt.refresh_token!, client_id: other.clientMetadata().client_id }, "/_weft/oauth2/revoke")).status).toBe(200);
    expect((await whoami(bt.access_token)).status).toBe(401);
    expect((await tokenPost({ token: "x", token_type_hint: "id_token" }, "/_weft/oauth2/revoke")).json.error).toBe("invalid_request");

    // A replayed refresh token (its successor already used) ends the session.
    const c = await authorize(config, { scope: "urn:matrix:client:api:* urn:matrix:client:device:REPLAYDEV1" });
    const ct = await oidc.authorizationCodeGrant(config, c.callback, { pkceCodeVerifier: c.verifier, expectedState: c.state });
    const rotated = await oidc.refreshTokenGrant(config, ct.refresh_token!);
    const retry = await oidc.refreshTokenGrant(config, ct.refresh_token!); // the answer was lost: a retry still works
    expect((await whoami(retry.access_token)).status).toBe(200);
    expect(rotated.refresh_token).not.toBe(retry.refresh_token);
    const replay = await refused("refresh_token_replayed", { client_id: config.clientMetadata().client_id, user_id: alice.user_id }, [ct.refresh_token, rotated.refresh_token, retry.refresh_token, retry.access_token], () => refreshAsToken(config.clientMetadata().client_id, ct.refresh_token!));
    expect([replay.status, replay.json.error]).toEqual([400, "invalid_grant"]);
    expect((await whoami(retry.access_token)).status).toBe(401);
    expect(await aliceDevices()).not.toContain("REPLAYDEV1");

    expect((await tokenPost({ grant_type: "password", client_id: config.clientMetadata().client_id })).json.error).toBe("unsupported_grant_type");
    expect((await tokenPost({ client_id: config.clientMetadata().client_id })).json.error).toBe("invalid_request");
    const noClient = await refused("invalid_client", { endpoint: "token" }, [], () => tokenPost({ grant_type: "authorization_code", code: "x" }));
    expect([noClient.status, noClient.json.error]).toEqual([401, "invalid_client"]);
    const unknownClient = await refused("invalid_client", { client_id: "nobody" }, [], () => tokenPost({ grant_type: "refresh_token", refresh_token: "x", client_id: "nobody" }));
    expect([unknownClient.status, unknownClient.json.error]).toEqual([401, "invalid_client"]);
    const json = await t.call("POST", "/_weft/oauth2/token", { body: { grant_type: "refresh_token" } });
    expect([json.status, json.json.error]).toEqual([400, "invalid_request"]);
    const deviceOnly = await oauthClient({ ...WEB_CLIENT, grant_types: ["authorization_code"] });
    const d = await authorize(deviceOnly);
    const dt = await oidc.authorizationCodeGrant(deviceOnly, d.callback, { pkceCodeVerifier: d.verifier, expectedState: d.state });
    const unregistered = await tokenPost({ grant_type: "refresh_token", refresh_token: dt.refresh_token!, client_id: deviceOnly.clientMetadata().client_id });
    expect([unregistered.status, unregistered.json.error]).toEqual([400, "unauthorized_client"]);
  });

  it("prompt=create shows the registration page: the account is made with the password rules, then the consent page and a working session", async () => {
    const config = await oauthClient();
    const a = await authorizationUrl(config, { prompt: "create", scope: "urn:matrix:client:api:* urn:matrix:client:device:CAROLDEV01" });
    const agent = new OAuthAgent();
    const page = await agent.open(a.url);
    expect(page.status).toBe(200);
    expect(readForm(page.text, page.url)!.labelled).toEqual({ username: "Username", password: "Password", confirm: "Confirm the password" });
    const differ = await agent.submit(page, "register", { username: "carol", password: "carol-password", confirm: "other" });
    expect([differ.status, differ.text.includes('role="alert"')]).toEqual([400, true]);
    const taken = await agent.submit(page, "register", { username: "alice", password: "pw-of-the-thief", confirm: "pw-of-the-thief" });
    expect([taken.status, taken.text.includes("User ID already taken")]).toEqual([400, true]);
    const consent = await agent.submit(page, "register", { username: "Carol", password: "carol-password", confirm: "carol-password" });
    expect(consent.status).toBe(200);
    const carolId = `@carol:${t.config.server_name}`;
    expect(consent.text).toContain(carolId);
    const done = await agent.submit(consent, "consent");
    const tokens = await oidc.authorizationCodeGrant(config, new URL(done.location!), { pkceCodeVerifier: a.verifier, expectedState: a.state });
    expect((await whoami(tokens.access_token)).json).toMatchObject({ user_id: carolId, device_id: "CAROLDEV01" });
    const legacy = await t.call("POST", "/_matrix/client/v3/login", { body: { type: "m.login.password", identifier: { type: "m.id.user", user: "carol" }, password: "carol-password" } });
    expect(legacy.status).toBe(200);
    // The login page links to the registration page, and back.
    const login = await new OAuthAgent().open((await authorizationUrl(config)).url);
    expect(readForm(login.text, login.url)!.buttons).toEqual(["login", "show_register", "deny"]);
  });

  it("OAuth-aware legacy clients (MSC3824): /login offers m.login.sso with oauth_aware_preferred, served by the pages, ending in a loginToken", async () => {
    const flows = await t.call("GET", "/_matrix/client/v3/login");
    expectMatchesSpec(flows, "GET", "/_matrix/client/v3/login");
    expect(flows.json.flows).toContainEqual({ type: "m.login.sso", oauth_aware_preferred: true });
    expect(flows.json.flows).toContainEqual({ type: "m.login.password" });
    const client = "https://legacy.example.org/done?x=1";
    const noFollow = (path: string) => undiciFetch(new URL(path, t.baseUrl), { redirect: "manual" });
    const start = await noFollow(`/_matrix/client/v3/login/sso/redirect?redirectUrl=${encodeURIComponent(client)}&action=login`);
    expect(start.status).toBe(302);
    const pageUrl = new URL(start.headers.get("location")!);
    expect(pageUrl.origin + pageUrl.pathname).toBe(`${t.config.public_baseurl}_weft/oauth2/sso`);
    const agent = new OAuthAgent();
    const login = await agent.open(pageUrl.href);
    expect(login.text).toContain("legacy.example.org");
    const next = await agent.submit(login, "login", { username: "alice", password: "password" });
    expect(next.status).toBe(200); // not in sso.client_whitelist: a confirmation first
    const href = /<a id="continue" href="([^"]+)">/.exec(next.text)![1]!.replace(/&#38;/g, "&");
    const back = new URL(href);
    expect(back.origin + back.pathname).toBe("https://legacy.example.org/done");
    expect(back.searchParams.get("x")).toBe("1");
    const loggedIn = await t.call("POST", "/_matrix/client/v3/login", { body: { type: "m.login.token", token: back.searchParams.get("loginToken") } });
    expect([loggedIn.status, loggedIn.json.user_id]).toEqual([200, alice.user_id]);
    const reused = await t.call("POST", "/_matrix/client/v3/login", { body: { type: "m.login.token", token: back.searchParams.get("loginToken") } });
    expect(reused.status).toBe(403);
    // action=register opens the registration page; a missing redirectUrl is refused.
    const reg = await noFollow(`/_matrix/client/v3/login/sso/redirect?redirectUrl=${encodeURIComponent(client)}&action=register`);
    const regPage = await new OAuthAgent().open(reg.headers.get("location")!);
    expect(readForm(regPage.text, regPage.url)!.buttons).toEqual(["register", "show_login"]);
    expect((await noFollow("/_matrix/client/v3/login/sso/redirect")).status).toBe(400);
    // Without the CSRF token, no login token is made.
    const noCsrf = await refused("csrf_mismatch", { endpoint: "sso" }, ["password", agent.cookie("weft_oauth_csrf")], () => agent.submit(login, "login", { username: "alice", password: "password" }, { drop: ["csrf"] }));
    expect(noCsrf.status).toBe(403);
  });

  it("an expired code is refused (oauth_server.authorization_code_lifetime, 10 minutes); the hourly clean-up drops it", async () => {
    const config = await oauthClient();
    const a = await authorize(config);
    clock.advance(10 * 60_000 + 1);
    const res = await refused("code_expired", { client_id: config.clientMetadata().client_id, user_id: alice.user_id }, [a.code, a.verifier], () =>
      tokenPost({ grant_type: "authorization_code", code: a.code, redirect_uri: WEB_CLIENT.redirect_uris[0]!, client_id: config.clientMetadata().client_id, code_verifier: a.verifier }));
    expect([res.status, res.json.error]).toEqual([400, "invalid_grant"]);
    const codes = async () => Number((await t.hs.services.storage.sql.get<{ n: number | string }>("SELECT COUNT(*) AS n FROM oauth_authorization_codes WHERE code_hash = ?", [hashToken(a.code)]))!.n);
    expect(await codes()).toBe(1);
    expect(await purgeExpiredOAuthRows(t.hs.services)).toBeGreaterThan(0);
    expect(await codes()).toBe(0);
  });

  it("OpenID Connect: openid-client discovers /.well-known/openid-configuration; scope openid gives an ES256 ID token (nonce, at_hash) signed by jwks_uri's key, and userinfo", async () => {
    const config = await oidc.dynamicClientRegistration(new URL(t.config.public_baseurl), WEB_CLIENT, oidc.None(), { algorithm: "oidc", execute: [oidc.allowInsecureRequests] });
    const meta = config.serverMetadata();
    expect(meta).toMatchObject({
      jwks_uri: `${t.config.public_baseurl}_weft/oauth2/keys.json`,
      userinfo_endpoint: `${t.config.public_baseurl}_weft/oauth2/userinfo`,
      id_token_signing_alg_values_supported: ["ES256"],
      subject_types_supported: ["public"],
    });
    expect(meta.scopes_supported).toContain("openid");
    const nonce = oidc.randomNonce();
    const a = await authorize(config, { scope: "openid urn:matrix:client:api:* urn:matrix:client:device:OIDCDEV001", nonce });
    // openid-client checks the ID token's iss, aud, exp, iat and nonce.
    const tokens = await oidc.authorizationCodeGrant(config, a.callback, { pkceCodeVerifier: a.verifier, expectedState: a.state, expectedNonce: nonce, idTokenExpected: true });
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ iss: t.config.public_baseurl, sub: alice.user_id, aud: config.clientMetadata().client_id, nonce });
    expect(claims.exp - claims.iat).toBe(3600);
    // The signature verifies with the published key; at_hash is the left half of the access token's SHA-256.
    const [header, payload, signature] = tokens.id_token!.split(".") as [string, string, string];
    const jose = JSON.parse(Buffer.from(header, "base64url").toString());
    const keys = (await t.call("GET", "/_weft/oauth2/keys.json")).json.keys as Record<string, string>[];
    const jwk = keys.find((k) => k.kid === jose.kid)!;
    expect([jose.alg, jwk.kty, jwk.crv, jwk.use, "d" in jwk]).toEqual(["ES256", "EC", "P-256", "sig", false]);
    const key = createPublicKey({ key: jwk as never, format: "jwk" });
    expect(verify("sha256", Buffer.from(`${header}.${payload}`), { key, dsaEncoding: "ieee-p1363" }, Buffer.from(signature, "base64url"))).toBe(true);
    expect(verify("sha256", Buffer.from(`${header}.${payload}x`), { key, dsaEncoding: "ieee-p1363" }, Buffer.from(signature, "base64url"))).toBe(false);
    expect(claims.at_hash).toBe(createHash("sha256").update(tokens.access_token).digest().subarray(0, 16).toString("base64url"));
    // The key stays the same across a restart (derived from the server's signing key).
    await t.restart();
    expect((await t.call("GET", "/_weft/oauth2/keys.json")).json.keys).toEqual(keys);

    expect(await oidc.fetchUserInfo(config, tokens.access_token, alice.user_id)).toMatchObject({ sub: alice.user_id, preferred_username: "alice" });
    // A token granted without openid may not read userinfo; neither may no token.
    const plain = await authorize(config, { scope: "urn:matrix:client:api:* urn:matrix:client:device:OIDCDEV002" });
    const plainTokens = await oidc.authorizationCodeGrant(config, plain.callback, { pkceCodeVerifier: plain.verifier, expectedState: plain.state });
    expect(plainTokens.id_token).toBeUndefined();
    const refused = await t.call("GET", "/_weft/oauth2/userinfo", { token: plainTokens.access_token });
    expect([refused.status, refused.json.error]).toEqual([403, "insufficient_scope"]);
    expect((await t.call("GET", "/_weft/oauth2/userinfo")).status).toBe(401);
    // An over-long nonce is refused at the authorisation endpoint.
    const long = await authorizationUrl(config, { nonce: "n".repeat(513) });
    const page = await new OAuthAgent().open(long.url);
    expect(new URL(page.location!).searchParams.get("error")).toBe("invalid_request");
  });

  describe("account management (account_management_uri)", () => {
    const ACCOUNT = () => `${t.config.public_baseurl}_weft/oauth2/account`;
    /** Tokens of a new OAuth session of alice on `deviceId`. */
    const oauthSession = async (deviceId: string) => {
      const config = await oauthClient();
      const a = await authorize(config, { scope: `urn:matrix:client:api:* urn:matrix:client:device:${deviceId}` });
      return oidc.authorizationCodeGrant(config, a.callback, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    };

    it("lists the devices after signing in, and signs one out after a confirmation (org.matrix.device_delete)", async () => {
      const tokens = await oauthSession("ACCTDEV001");
      const agent = new OAuthAgent();
      const login = await agent.open(`${ACCOUNT()}?action=org.matrix.devices_list`);
      expect(readForm(login.text, login.url)!.buttons).toEqual(["login"]);
      const signedIn = await agent.submit(login, "login", { username: "alice", password: "password" });
      expect(signedIn.status).toBe(303);
      const list = await agent.open(signedIn.location!);
      expect(list.text).toContain('id="device-ACCTDEV001"');
      expect(list.text).toContain(alice.user_id);

      const confirm = await agent.open(`${ACCOUNT()}?action=org.matrix.device_delete&device_id=ACCTDEV001`);
      expect(confirm.text).toContain("ACCTDEV001");
      const noCsrf = await refused("csrf_mismatch", { endpoint: "account" }, [agent.cookie("weft_oauth_csrf"), tokens.access_token], () => agent.submit(confirm, "delete_device", {}, { drop: ["csrf"] }));
      expect(noCsrf.status).toBe(403);
      expect((await whoami(tokens.access_token)).status).toBe(200);
      const done = await agent.submit(confirm, "delete_device");
      expect(done.text).toContain("The device ACCTDEV001 was signed out.");
      expect((await whoami(tokens.access_token)).status).toBe(401);
      expect(await aliceDevices()).not.toContain("ACCTDEV001");
      // Another user's device id (or none) is not found, never deleted.
      const other = await agent.submit(confirm, "delete_device", {}, { override: { device_id: "NOSUCHDEVICE" } });
      expect(other.status).toBe(404);
    });

    it("org.matrix.account_deactivate asks for the password again, then deactivates the account and ends its sessions", async () => {
      const dave = await registerUser(t, "dave");
      const agent = new OAuthAgent();
      const login = await agent.open(`${ACCOUNT()}?action=org.matrix.account_deactivate`);
      const signedIn = await agent.submit(login, "login", { username: "dave", password: "password" });
      const page = await agent.open(signedIn.location!);
      expect(readForm(page.text, page.url)!.labelled).toEqual({ password: "Your password" });
      const wrong = await agent.submit(page, "deactivate", { password: "not it" });
      expect([wrong.status, wrong.text.includes('role="alert"')]).toEqual([403, true]);
      expect((await whoami(dave.access_token)).status).toBe(200);
      const done = await agent.submit(page, "deactivate", { password: "password" });
      expect(done.text).toContain("Account deactivated");
      expect((await whoami(dave.access_token)).status).toBe(401);
      const again = await t.call("POST", "/_matrix/client/v3/login", { body: { type: "m.login.password", identifier: { type: "m.id.user", user: "dave" }, password: "password" } });
      expect(again.status).toBe(403);
    });

    it("m.oauth: replacing cross-signing keys from an OAuth session asks for the account page's approval, then succeeds", async () => {
      const tokens = await oauthSession("XSIGNDEV01");
      const upload = (body: Record<string, unknown>) => t.call("POST", "/_matrix/client/v3/keys/device_signing/upload", { token: tokens.access_token, body });
      expect((await upload(crossSigningKeys(alice.user_id).body)).status).toBe(200); // the first keys need no UIA
      const second = crossSigningKeys(alice.user_id).body;
      const asked = await upload(second);
      expect(asked.status).toBe(401);
      expect(asked.json.flows).toContainEqual({ stages: ["m.oauth"] });
      const url = asked.json.params["m.oauth"].url as string;
      expect(url).toBe(`${ACCOUNT()}?action=org.matrix.cross_signing_reset&uia_session=${asked.json.session}`);
      // Retrying with the session alone before the approval: still 401.
      expect((await upload({ ...second, auth: { session: asked.json.session } })).status).toBe(401);

      const agent = new OAuthAgent();
      const login = await agent.open(url);
      const signedIn = await agent.submit(login, "login", { username: "alice", password: "password" });
      const approval = await agent.open(signedIn.location!);
      expect(approval.text).toContain("reset the cross-signing keys on your account");
      const approved = await agent.submit(approval, "approve_uia", { password: "password" });
      expect(approved.text).toContain("Request approved");
      expect((await upload({ ...second, auth: { type: "m.oauth", session: asked.json.session } })).status).toBe(200);
      // The account page's own approval (no UIA session: as MAS) still opens a window without UIA.
      const page = await agent.open(`${ACCOUNT()}?action=org.matrix.cross_signing_reset`);
      expect(page.text).toContain("Reset your cross-signing identity?");
      expect((await agent.submit(page, "approve_reset")).text).toContain("Reset allowed");
      expect((await upload(crossSigningKeys(alice.user_id).body)).status).toBe(200);
      // A legacy session is offered the password flow alone.
      const third = crossSigningKeys(alice.user_id).body;
      clock.advance(10 * 60_000 + 1);
      const legacy = await t.call("POST", "/_matrix/client/v3/keys/device_signing/upload", { token: alice.access_token, body: third });
      expect([legacy.status, legacy.json.flows]).toEqual([401, [{ stages: ["m.login.password"] }]]);
    });

    it("m.oauth for every re-authentication of an OAuth session: deleting a device waits for the approval (with the password) on the account page, then the retry passes", async () => {
      const tokens = await oauthSession("UIADEV0001");
      await oauthSession("UIAVICTIM1");
      const del = (body: Record<string, unknown>) => t.call("DELETE", "/_matrix/client/v3/devices/UIAVICTIM1", { token: tokens.access_token, body });
      const asked = await del({});
      expect(asked.status).toBe(401);
      expect(asked.json.flows).toEqual([{ stages: ["m.oauth"] }, { stages: ["m.login.password"] }]);
      const url = asked.json.params["m.oauth"].url as string;
      expect(url).toBe(`${ACCOUNT()}?action=org.matrix.device_delete&device_id=UIAVICTIM1&uia_session=${asked.json.session}`);
      // Asking for the stage before the approval: 401 with the stage not completed, nothing deleted.
      const early = await del({ auth: { type: "m.oauth", session: asked.json.session } });
      expect([early.status, early.json.completed]).toEqual([401, []]);
      expect(await aliceDevices()).toContain("UIAVICTIM1");

      // Another user cannot approve alice's request.
      await registerUser(t, "uiabob");
      const bobAgent = new OAuthAgent();
      const bobLogin = await bobAgent.open(url);
      const bobPage = await bobAgent.open((await bobAgent.submit(bobLogin, "login", { username: "uiabob", password: "password" })).location!);
      expect(bobPage.status).toBe(400);
      expect(bobPage.text).not.toContain("Approve this request?");

      const agent = new OAuthAgent();
      const login = await agent.open(url);
      const page = await agent.open((await agent.submit(login, "login", { username: "alice", password: "password" })).location!);
      expect(page.text).toContain("sign out the device UIAVICTIM1");
      expect(readForm(page.text, page.url)!.labelled).toEqual({ password: "Your password" });
      const noCsrf = await refused("csrf_mismatch", { endpoint: "account" }, [agent.cookie("weft_oauth_csrf")], () => agent.submit(page, "approve_uia", { password: "password" }, { drop: ["csrf"] }));
      expect(noCsrf.status).toBe(403);
      const wrong = await agent.submit(page, "approve_uia", { password: "not it" });
      expect([wrong.status, wrong.text.includes('role="alert"')]).toEqual([403, true]);
      expect((await del({ auth: { session: asked.json.session } })).status).toBe(401);
      expect((await agent.submit(page, "approve_uia", { password: "password" })).text).toContain("Request approved");
      const done = await del({ auth: { type: "m.oauth", session: asked.json.session } });
      expect(done.status, JSON.stringify(done.json)).toBe(200);
      expect(await aliceDevices()).not.toContain("UIAVICTIM1");
      // The session served one request: approving it again finds nothing.
      expect((await agent.submit(page, "approve_uia", { password: "password" })).status).toBe(400);
    });

    it("a password change ends the user's other page sign-ins; the page sign-in that made it, and the devices, stay", async () => {
      const erin = await registerUser(t, "pwerin");
      const signIn = async () => {
        const agent = new OAuthAgent();
        const login = await agent.open(ACCOUNT());
        expect((await agent.submit(login, "login", { username: "pwerin", password: "password" })).status).toBe(303);
        return agent;
      };
      const signedIn = async (agent: OAuthAgent) => (await agent.open(ACCOUNT())).text.includes(erin.user_id);
      const [here, other] = [await signIn(), await signIn()];
      const account = await here.open(ACCOUNT());
      const page = await here.submit(account, "show_password");
      expect(readForm(page.text, page.url)!.labelled).toEqual({ current: "Your current password", new_password: "New password", confirm: "Confirm the new password" });
      const wrong = await here.submit(page, "change_password", { current: "not it", new_password: "pw-number-2", confirm: "pw-number-2" });
      expect([wrong.status, wrong.text.includes('role="alert"')]).toEqual([403, true]);
      const differ = await here.submit(page, "change_password", { current: "password", new_password: "pw-number-2", confirm: "pw-number-3" });
      expect([differ.status, differ.text.includes('role="alert"')]).toEqual([400, true]);
      const noCsrf = await refused("csrf_mismatch", { endpoint: "account" }, [here.cookie("weft_oauth_csrf")], () => here.submit(page, "change_password", { current: "password", new_password: "pw-number-2", confirm: "pw-number-2" }, { drop: ["csrf"] }));
      expect(noCsrf.status).toBe(403);
      expect([await signedIn(here), await signedIn(other)]).toEqual([true, true]); // nothing changed yet
      const done = await here.submit(page, "change_password", { current: "password", new_password: "pw-number-2", confirm: "pw-number-2" });
      expect(done.text).toContain("Your password was changed.");
      expect([await signedIn(here), await signedIn(other)]).toEqual([true, false]);
      expect((await whoami(erin.access_token)).status).toBe(200); // devices stay
      const login = (password: string) => t.call("POST", "/_matrix/client/v3/login", { body: { type: "m.login.password", identifier: { type: "m.id.user", user: "pwerin" }, password } });
      expect([(await login("password")).status, (await login("pw-number-2")).status]).toEqual([403, 200]);

      // A change through the API (no page made it) ends every page sign-in.
      const third = new OAuthAgent();
      expect((await third.submit(await third.open(ACCOUNT()), "login", { username: "pwerin", password: "pw-number-2" })).status).toBe(303);
      const body = { new_password: "pw-number-3", logout_devices: false };
      const asked = await t.call("POST", "/_matrix/client/v3/account/password", { token: erin.access_token, body });
      const changed = await t.call("POST", "/_matrix/client/v3/account/password", {
        token: erin.access_token,
        body: { ...body, auth: { type: "m.login.password", identifier: { type: "m.id.user", user: "pwerin" }, password: "pw-number-2", session: asked.json.session } },
      });
      expect(changed.status, JSON.stringify(changed.json)).toBe(200);
      expect([await signedIn(here), await signedIn(third)]).toEqual([false, false]);
      expect((await whoami(erin.access_token)).status).toBe(200);
    });

    it("m.oauth is offered on password change, 3PID add, deactivation and login tokens of an OAuth session, and to a user without a password on any session", async () => {
      const tokens = await oauthSession("UIADEV0002");
      const ask = async (method: string, path: string, body: Record<string, unknown>, token = tokens.access_token) => {
        const res = await t.call(method, path, { token, body });
        expect(res.status, JSON.stringify(res.json)).toBe(401);
        return res.json;
      };
      const password = await ask("POST", "/_matrix/client/v3/account/password", { new_password: "a-new-password-1" });
      expect(password.flows).toEqual([{ stages: ["m.oauth"] }, { stages: ["m.login.password"] }]);
      expect(password.params["m.oauth"].url).toBe(`${ACCOUNT()}?uia_session=${password.session}`);
      const deactivate = await ask("POST", "/_matrix/client/v3/account/deactivate", {});
      expect(deactivate.params["m.oauth"].url).toBe(`${ACCOUNT()}?action=org.matrix.account_deactivate&uia_session=${deactivate.session}`);
      const several = await ask("POST", "/_matrix/client/v3/delete_devices", { devices: ["A", "B"] });
      expect(several.params["m.oauth"].url).toBe(`${ACCOUNT()}?action=org.matrix.devices_list&uia_session=${several.session}`);
      // A legacy (password-login) session of a user with a password: the password flow alone.
      expect((await ask("POST", "/_matrix/client/v3/account/deactivate", {}, alice.access_token)).flows).toEqual([{ stages: ["m.login.password"] }]);

      // A user without a password: m.oauth alone, even on a legacy session; the approval asks no password.
      const nopw = await registerUser(t, "uianopw");
      const agent = new OAuthAgent();
      const login = await agent.open(ACCOUNT());
      await agent.submit(login, "login", { username: "uianopw", password: "password" });
      await t.hs.services.db.user.update({ where: { userId: nopw.user_id }, data: { passwordHash: null } });
      const asked = await ask("DELETE", `/_matrix/client/v3/devices/${nopw.device_id}`, {}, nopw.access_token);
      expect(asked.flows).toEqual([{ stages: ["m.oauth"] }]);
      const page = await agent.open(asked.params["m.oauth"].url);
      expect(page.text).toContain("Approve this request?");
      expect(readForm(page.text, page.url)!.labelled).toEqual({});
      expect((await agent.submit(page, "approve_uia")).text).toContain("Request approved");
      const done = await t.call("DELETE", `/_matrix/client/v3/devices/${nopw.device_id}`, { token: nopw.access_token, body: { auth: { type: "m.oauth", session: asked.session } } });
      expect(done.status, JSON.stringify(done.json)).toBe(200);
      expect((await whoami(nopw.access_token)).status).toBe(401);
    });
  });

  describe("the device authorisation grant (RFC 8628)", () => {
    const TV = { client_name: "Living-room TV", client_uri: "https://tv.example.com/", grant_types: ["urn:ietf:params:oauth:grant-type:device_code", "refresh_token"], token_endpoint_auth_method: "none" };
    const SCOPE = "urn:matrix:client:api:* urn:matrix:client:device:TVDEVICE01";
    const poll = (config: oidc.Configuration, deviceCode: string) =>
      tokenPost({ grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: deviceCode, client_id: config.clientMetadata().client_id });

    it("openid-client starts it; the user enters the code, signs in and approves; polling answers pending, slow_down, then the tokens once", async () => {
      const config = await oauthClient(TV);
      const start = await oidc.initiateDeviceAuthorization(config, { scope: SCOPE });
      expect(start.user_code).toMatch(/^[B-DF-HJ-NP-TV-XZ]{4}-[B-DF-HJ-NP-TV-XZ]{4}$/);
      expect(start.verification_uri).toBe(`${t.config.public_baseurl}_weft/oauth2/device/verify`);
      expect(start.verification_uri_complete).toBe(`${start.verification_uri}?user_code=${start.user_code}`);
      expect([start.expires_in, start.interval]).toEqual([600, 5]);

      expect((await poll(config, start.device_code)).json.error).toBe("authorization_pending");
      expect((await poll(config, start.device_code)).json.error).toBe("slow_down"); // sooner than the interval
      clock.advance(10_000);
      expect((await poll(config, start.device_code)).json.error).toBe("authorization_pending");

      const agent = new OAuthAgent();
      const entry = await agent.open(start.verification_uri);
      expect(readForm(entry.text, entry.url)!.labelled).toEqual({ user_code: "Code" });
      const wrongCode = await agent.submit(entry, "code", { user_code: "BBBB-BBBB" });
      expect([wrongCode.status, wrongCode.text.includes('role="alert"')]).toEqual([400, true]);
      // Typed in lower case without the dash: the same code.
      const login = await agent.submit(wrongCode, "code", { user_code: start.user_code.replace("-", "").toLowerCase() });
      expect(readForm(login.text, login.url)!.labelled).toEqual({ username: "Username", password: "Password" });
      const consent = await agent.submit(login, "login", { username: "alice", password: "password" });
      expect(consent.text).toContain("Living-room TV");
      expect(consent.text).toContain("urn:matrix:client:device:TVDEVICE01");
      const noCsrf = await refused("csrf_mismatch", { endpoint: "device" }, [agent.cookie("weft_oauth_csrf"), start.device_code], () => agent.submit(consent, "consent", {}, { drop: ["csrf"] }));
      expect(noCsrf.status).toBe(403);
      const done = await agent.submit(consent, "consent");
      expect([done.status, done.text.includes("Device connected")]).toEqual([200, true]);

      clock.advance(10_000);
      const tokens = await poll(config, start.device_code);
      expect(tokens.status).toBe(200);
      expect(tokens.json).toMatchObject({ token_type: "Bearer", scope: SCOPE });
      expect((await whoami(tokens.json.access_token)).json).toMatchObject({ user_id: alice.user_id, device_id: "TVDEVICE01" });
      const refreshed = await oidc.refreshTokenGrant(config, tokens.json.refresh_token);
      expect((await whoami(refreshed.access_token)).json.device_id).toBe("TVDEVICE01");
      clock.advance(10_000);
      expect((await poll(config, start.device_code)).json.error).toBe("invalid_grant");
      // The code page no longer knows it.
      const used = await agent.open(`${start.verification_uri}?user_code=${start.user_code}`);
      expect(used.status).toBe(400);
    });

    it("a denied request answers access_denied; an unanswered one expired_token; a client without the grant is refused", async () => {
      const config = await oauthClient(TV);
      const denied = await oidc.initiateDeviceAuthorization(config, { scope: SCOPE });
      const agent = new OAuthAgent();
      const login = await agent.open(denied.verification_uri_complete!);
      await agent.submit(login, "deny");
      clock.advance(10_000);
      expect((await poll(config, denied.device_code)).json.error).toBe("access_denied");

      const late = await oidc.initiateDeviceAuthorization(config, { scope: SCOPE });
      clock.advance(10 * 60_000 + 1);
      expect((await poll(config, late.device_code)).json.error).toBe("expired_token");
      expect((await agent.open(late.verification_uri_complete!)).status).toBe(400);

      const web = await oauthClient();
      const refused = await tokenPost({ client_id: web.clientMetadata().client_id, scope: SCOPE }, "/_weft/oauth2/device");
      expect([refused.status, refused.json.error]).toEqual([400, "unauthorized_client"]);
      const badScope = await tokenPost({ client_id: config.clientMetadata().client_id, scope: "urn:matrix:client:api:*" }, "/_weft/oauth2/device");
      expect([badScope.status, badScope.json.error]).toEqual([400, "invalid_scope"]);
      expect((await poll(config, "no-such-code")).json.error).toBe("invalid_grant");
    });
  });
});

describe.each(backends())("the OAuth 2.0 server's rate limits on %s", (backend) => {
  let t: TestServer;
  beforeAll(async () => {
    // The refused token requests' warn lines are kept out of the test output.
    t = await startTestServer({ backend, clock: new TestClock(), log: capturedLog().logger, config: { enable_registration: false, oauth_server: { enabled: true, rc_client_registration: { per_second: 0.1, burst_count: 2 }, rc_token: { per_second: 0.1, burst_count: 2 } } } });
  });
  afterAll(async () => {
    await t?.close();
  });
  it("without open registration the metadata offers no prompt=create", async () => {
    expect((await t.call("GET", META)).json.prompt_values_supported).toBeUndefined();
  });
  it("registration and the token endpoint answer 429 M_LIMIT_EXCEEDED with Retry-After past their burst", async () => {
    const body = { client_uri: "https://example.com/", redirect_uris: ["https://example.com/cb"] };
    expect((await t.call("POST", "/_weft/oauth2/register", { body })).status).toBe(201);
    expect((await t.call("POST", "/_weft/oauth2/register", { body })).status).toBe(201);
    const limited = await t.call("POST", "/_weft/oauth2/register", { body });
    expect([limited.status, limited.json.error]).toEqual([429, "M_LIMIT_EXCEEDED"]);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    const token = () => undiciFetch(new URL("/_weft/oauth2/token", t.baseUrl), { method: "POST", body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: "x", client_id: "x" }) });
    expect((await token()).status).toBe(401);
    expect((await token()).status).toBe(401);
    const res = await token();
    expect([res.status, ((await res.json()) as { error: string }).error]).toEqual([429, "M_LIMIT_EXCEEDED"]);
  });
});

describe("the OAuth 2.0 server switched off (the default)", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({});
  });
  afterAll(async () => {
    await t?.close();
  });
  it("answers 404 M_UNRECOGNIZED on /auth_metadata and serves none of its endpoints", async () => {
    const res = await t.call("GET", META);
    expect([res.status, res.json.errcode]).toEqual([404, "M_UNRECOGNIZED"]);
    expectMatchesSpec(res, "GET", META);
    expect((await t.call("POST", "/_weft/oauth2/register", { body: WEB_CLIENT })).status).toBe(404);
    expect((await t.call("GET", "/_weft/oauth2/authorize?client_id=x")).status).toBe(404);
  });
});
