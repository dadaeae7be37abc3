// Single sign-on with a real OpenID provider (oidc-provider on loopback), driven without a browser: the
// redirect, the provider's login and consent pages, the callback, m.login.token; wrong state, expired
// code, replayed and expired login tokens, SSO as a UIA stage, and a deactivated account. Both databases.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, freePort, startTestServer, TestClock, type TestServer } from "../helpers/server.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { Browser, startOidcProvider, type TestOidcProvider } from "../helpers/oidc.ts";

const CLIENT = "http://client.example/after-sso";

describe.each(backends())("single sign-on on %s", (backend) => {
  let t: TestServer;
  let idp: TestOidcProvider;
  const clock = new TestClock();

  beforeAll(async () => {
    const port = await freePort();
    idp = await startOidcProvider(`http://127.0.0.1:${port}/_synapse/client/oidc/callback`, [
      { sub: "u-alice", preferred_username: "Alice", name: "Alice Liddell" },
      { sub: "u-other-alice", preferred_username: "alice", name: "Another Alice" },
      { sub: "u-carol", preferred_username: "carol", name: "Carol" },
      { sub: "u-dan", preferred_username: "dan", name: "Dan" },
    ]);
    t = await startTestServer({
      backend,
      clock,
      port,
      config: {
        public_baseurl: `http://127.0.0.1:${port}/`,
        sso: { client_whitelist: ["http://client.example/"] },
        oidc_providers: [{
          idp_id: "test",
          idp_name: "Test IdP",
          idp_brand: "test",
          issuer: idp.issuer,
          client_id: idp.clientId,
          client_secret: idp.clientSecret,
          scopes: ["openid", "profile"],
          user_profile_method: "userinfo_endpoint",
          skip_verification: true, // the provider is plain http on loopback
          user_mapping_provider: { config: { localpart_template: "{{ user.preferred_username | lower }}", display_name_template: "{{ user.name }}" } },
        }],
      },
    });
  });
  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  const redirectPath = (redirectUrl = CLIENT) => `/_matrix/client/v3/login/sso/redirect/oidc-test?redirectUrl=${encodeURIComponent(redirectUrl)}`;
  const isCallback = (u: string) => u.startsWith(`${t.baseUrl}/_synapse/client/oidc/callback`);

  /** The whole flow up to the client's redirect; returns the login token the client receives. */
  async function ssoLoginToken(sub: string): Promise<string> {
    const browser = new Browser();
    const out = await browser.run(t.baseUrl + redirectPath(), sub, (u) => u.startsWith(CLIENT));
    expect(out.stoppedAt, JSON.stringify(out.final?.text)).toBeDefined();
    const token = new URL(out.stoppedAt!).searchParams.get("loginToken");
    expect(token).toBeTruthy();
    return token!;
  }

  async function tokenLogin(token: string) {
    return t.call("POST", "/_matrix/client/v3/login", { body: { type: "m.login.token", token } });
  }

  it("offers m.login.sso with its identity providers in GET /login", async () => {
    const res = await t.call("GET", "/_matrix/client/v3/login");
    expectMatchesSpec(res, "GET", "/_matrix/client/v3/login");
    const sso = res.json.flows.find((f: { type: string }) => f.type === "m.login.sso");
    expect(sso.identity_providers).toEqual([{ id: "oidc-test", name: "Test IdP", brand: "test" }]);
    expect(res.json.flows.map((f: { type: string }) => f.type)).toContain("m.login.token");
  });

  it("redirects to the provider with state, nonce and PKCE, and remembers the state in a cookie", async () => {
    const browser = new Browser();
    const res = await browser.request(t.baseUrl + redirectPath());
    expect(res.status).toBe(302);
    const target = new URL(res.location!);
    expect(target.origin).toBe(idp.issuer);
    expect(target.searchParams.get("client_id")).toBe(idp.clientId);
    expect(target.searchParams.get("redirect_uri")).toBe(`${t.baseUrl}/_synapse/client/oidc/callback`);
    expect(target.searchParams.get("code_challenge_method")).toBe("S256");
    expect(target.searchParams.get("nonce")).toBeTruthy();
    expect(browser.cookie("oidc_session")).toBe(target.searchParams.get("state"));
    // The undirected form picks the only provider.
    const plain = await browser.request(`${t.baseUrl}/_matrix/client/r0/login/sso/redirect?redirectUrl=${encodeURIComponent(CLIENT)}`);
    expect(plain.status).toBe(302);
    expect(new URL(plain.location!).origin).toBe(idp.issuer);
  });

  it("signs a new user in: the account is made from the templates, the login token works once", async () => {
    const token = await ssoLoginToken("u-alice");
    const res = await tokenLogin(token);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "POST", "/_matrix/client/v3/login");
    expect(res.json.user_id).toBe("@alice:weft.test");
    expect(typeof res.json.access_token).toBe("string");
    const who = await t.call("GET", "/_matrix/client/v3/account/whoami", { token: res.json.access_token });
    expect(who.json.user_id).toBe("@alice:weft.test");
    const profile = await t.call("GET", "/_matrix/client/v3/profile/@alice:weft.test");
    expect(profile.json.displayname).toBe("Alice Liddell");

    const replay = await tokenLogin(token);
    expect(replay.status).toBe(403);
    expect(replay.json.errcode).toBe("M_FORBIDDEN");
  });

  it("signs the same subject in to the same account, and another subject to a fresh localpart", async () => {
    const again = await tokenLogin(await ssoLoginToken("u-alice"));
    expect(again.json.user_id).toBe("@alice:weft.test");
    const other = await tokenLogin(await ssoLoginToken("u-other-alice"));
    expect(other.status).toBe(200);
    expect(other.json.user_id).toBe("@alice1:weft.test");
  });

  it("refuses a login token after its two minutes", async () => {
    const token = await ssoLoginToken("u-carol");
    clock.advance(2 * 60_000 + 1000);
    const res = await tokenLogin(token);
    expect(res.status).toBe(403);
    expect(res.json.errcode).toBe("M_FORBIDDEN");
  });

  it("refuses a callback whose state is not the browser's, or without the cookie, and the real one still works", async () => {
    const browser = new Browser();
    const out = await browser.run(t.baseUrl + redirectPath(), "u-carol", isCallback);
    const callback = new URL(out.stoppedAt!);
    const forged = new URL(callback);
    forged.searchParams.set("state", "not-the-state");
    const wrong = await browser.request(forged.href);
    expect(wrong.status).toBe(403);
    expect(wrong.text).toContain("M_FORBIDDEN");

    const noCookie = await new Browser().request(callback.href);
    expect(noCookie.status).toBe(400);
    expect(noCookie.text).toContain("M_MISSING_PARAM");

    // A state that matches a forged cookie but no attempt of this server.
    const stranger = new Browser();
    stranger.setCookie("oidc_session", "made-up");
    const unknown = await stranger.request(forged.href.replace("not-the-state", "made-up"));
    expect(unknown.status).toBe(403);

    const ok = await browser.request(callback.href);
    expect(ok.status).toBe(302);
    expect(ok.location!.startsWith(CLIENT)).toBe(true);
    // The state served once.
    const twice = await browser.request(callback.href);
    expect(twice.status).toBe(400); // its cookie was cleared by the first answer
  });

  it("refuses an expired authorization code", async () => {
    const browser = new Browser();
    const out = await browser.run(t.baseUrl + redirectPath(), "u-carol", isCallback);
    idp.expireCodes();
    const res = await browser.request(out.stoppedAt!);
    expect(res.status).toBe(403);
    expect(res.text).toContain("M_FORBIDDEN");
    expect(res.location).toBeUndefined();
  });

  it("asks an untrusted client's user to confirm before handing over the login token", async () => {
    const browser = new Browser();
    const elsewhere = "http://unknown-client.example/cb";
    const out = await browser.run(t.baseUrl + redirectPath(elsewhere), "u-carol", (u) => u.startsWith(elsewhere));
    expect(out.final?.status).toBe(200);
    const link = /id="continue" href="([^"]+)"/.exec(out.final!.text)![1]!.replace(/&#38;/g, "&");
    expect(link.startsWith(elsewhere)).toBe(true);
    const res = await tokenLogin(new URL(link).searchParams.get("loginToken")!);
    expect(res.json.user_id).toBe("@carol:weft.test");
  });

  it("refuses bad redirect requests with the spec's errors", async () => {
    const missing = await t.call("GET", "/_matrix/client/v3/login/sso/redirect/oidc-test");
    expect(missing.status).toBe(400);
    expect(missing.json.errcode).toBe("M_MISSING_PARAM");
    const unknown = await t.call("GET", `/_matrix/client/v3/login/sso/redirect/oidc-nope?redirectUrl=${encodeURIComponent(CLIENT)}`);
    expect(unknown.status).toBe(404);
    expect(unknown.json.errcode).toBe("M_NOT_FOUND");
    const bad = await t.call("GET", "/_matrix/client/v3/login/sso/redirect/oidc-test?redirectUrl=not%20a%20url");
    expect(bad.status).toBe(400);
    expect(bad.json.errcode).toBe("M_INVALID_PARAM");
  });

  it("re-authenticates an SSO-only user through the m.login.sso fallback, then refuses the deactivated account", async () => {
    const session = (await tokenLogin(await ssoLoginToken("u-dan"))).json;
    expect(session.user_id).toBe("@dan:weft.test");
    const first = await t.call("POST", "/_matrix/client/v3/account/deactivate", { token: session.access_token, body: {} });
    expect(first.status).toBe(401);
    expect(first.json.flows).toEqual([{ stages: ["m.login.sso"] }]);
    const uiaSession = first.json.session as string;

    // Without the stage done, the session alone is not enough.
    const early = await t.call("POST", "/_matrix/client/v3/account/deactivate", { token: session.access_token, body: { auth: { session: uiaSession } } });
    expect(early.status).toBe(401);

    // Someone else signing in at the provider does not complete Dan's stage.
    const intruder = new Browser();
    const fallbackUrl = `${t.baseUrl}/_matrix/client/v3/auth/m.login.sso/fallback/web?session=${uiaSession}`;
    const wrongUser = await intruder.run(fallbackUrl, "u-carol", () => false);
    const wrongLink = /id="continue" href="([^"]+)"/.exec(wrongUser.final!.text)?.[1];
    expect(wrongLink).toBeDefined();
    const refused = await intruder.run(wrongLink!.replace(/&#38;/g, "&"), "u-carol", () => false);
    expect(refused.final?.status).toBe(403);

    const browser = new Browser();
    const fallback = await browser.request(fallbackUrl);
    expect(fallback.status).toBe(200);
    const link = /id="continue" href="([^"]+)"/.exec(fallback.text)![1]!.replace(/&#38;/g, "&");
    const done = await browser.run(link, "u-dan", () => false);
    expect(done.final?.status).toBe(200);
    expect(done.final?.text).toContain("authDone");

    const res = await t.call("POST", "/_matrix/client/v3/account/deactivate", { token: session.access_token, body: { auth: { session: uiaSession } } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);

    const after = new Browser();
    const out = await after.run(t.baseUrl + redirectPath(), "u-dan", (u) => u.startsWith(CLIENT));
    expect(out.stoppedAt).toBeUndefined();
    expect(out.final?.status).toBe(403);
    expect(out.final?.text).toContain("M_USER_DEACTIVATED");
  });
});
