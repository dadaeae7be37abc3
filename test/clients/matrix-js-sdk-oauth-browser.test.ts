// A login to Weft's own OAuth 2.0 server as Element Web does it, through a real browser (issue 38), on
// SQLite and PostgreSQL: matrix-js-sdk 43's OAuth helpers (the MatrixClient's getAuthMetadata, which
// validates the metadata; OAuth2.registerClient; generateAuthorizationCodeGrantUrl with PKCE;
// completeAuthorizationCodeGrant; its TokenRefresher for the refresh and the revocation) in Node, and
// headless Chromium (Debian's, driven by playwright-core) on Weft's pages: the login form filled by its
// labels, the consent form, then the redirect — through the pages' content security policy, which
// browsers apply to a form's redirect — to the client's loopback redirect URI (RFC 8252 §7.3, a native
// client's http://127.0.0.1 URI on any port), served here by a small HTTP server that records the code
// and state. The token then works for whoami, sync and sending; the refresh rotates it (the old access
// token is refused once the new one is used, as POST /refresh rotates); revoking the refresh token ends
// the session — the device is gone and its tokens are refused (so does replaying a rotated-away refresh
// token). Page-level checks in the same browser: the login works with JavaScript disabled, and the
// consent form without its CSRF token or with a wrong one is refused (403, no code sent) while the
// untouched form still succeeds; and a web client (Element Web's application_type) on an https redirect
// with the answer in the URL fragment.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import * as sdk from "matrix-js-sdk";
import { OAuth2, type ValidatedAuthMetadata } from "matrix-js-sdk/lib/oauth/index.js";
import { TokenRefresher } from "matrix-js-sdk/lib/oauth/tokenRefresher.js";
import { TokenRefreshLogoutError } from "matrix-js-sdk/lib/http-api/errors.js";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { makeClient, pollUntil, quietLogger, startSyncing } from "../helpers/js-sdk.ts";
import { Waiters } from "../helpers/waiters.ts";
import { testCertificate } from "../helpers/tls.ts";

const CHROMIUM = "/usr/bin/chromium";
const WAIT = 30_000;

/** The client's redirect URI: a loopback HTTP(S) server recording each request to /callback. */
class LoopbackRedirect {
  readonly hits: URL[] = [];
  private readonly waiters = new Waiters();
  private server!: Server;
  port = 0;

  constructor(private readonly scheme: "http" | "https" = "http") {}

  get origin(): string {
    return `${this.scheme}://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? "/", this.origin);
      if (url.pathname !== "/callback") {
        res.writeHead(404).end();
        return;
      }
      this.hits.push(url);
      this.waiters.check();
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(`<!DOCTYPE html><title>Signed in</title><h1>Back in the app</h1>`);
    };
    if (this.scheme === "https") {
      const { cert, key } = testCertificate();
      this.server = createTlsServer({ cert, key }, handler);
    } else this.server = createServer(handler);
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  get uri(): string {
    return `${this.origin}/callback`;
  }

  /** The callback request carrying `state` (waits for it). */
  async answer(state: string): Promise<URL> {
    const find = () => this.hits.find((u) => u.searchParams.get("state") === state);
    await this.waiters.until(() => find() !== undefined, WAIT, `the redirect with state ${state}`);
    return find()!;
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

describe.each(backends())("matrix-js-sdk's OAuth login through headless Chromium against Weft on %s", (backend) => {
  let t: TestServer;
  let browser: Browser;
  let alice: Session;
  let metadata: ValidatedAuthMetadata;
  let clientId: string;
  const loopback = new LoopbackRedirect();

  beforeAll(async () => {
    await loopback.start();
    t = await startTestServer({ backend, config: { oauth_server: { enabled: true } } });
    alice = await registerUser(t, "alice");
    // Discovery as Element Web does it: the client's getAuthMetadata (GET /auth_metadata, validated by the SDK).
    metadata = await makeClient(t.baseUrl).getAuthMetadata();
    // A native client on the loopback interface: the registered URI names no port, any port is used (RFC 8252 §7.3).
    clientId = await OAuth2.registerClient(metadata, {
      client_name: "Browser test client",
      client_uri: "http://127.0.0.1/",
      redirect_uris: ["http://127.0.0.1/callback"],
      application_type: "native",
    }, quietLogger());
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await loopback.close();
  });

  const newState = () => "state-" + Math.random().toString(36).slice(2);
  const isCallback = (u: URL) => u.origin === loopback.origin && u.pathname === "/callback";

  /** Opens the authorisation URL and signs in on the login page, its fields found by their labels. */
  async function signIn(page: Page, url: string): Promise<void> {
    const res = await page.goto(url, { timeout: WAIT });
    expect(res?.status()).toBe(200);
    await page.getByRole("heading", { name: "Sign in to weft.test" }).waitFor({ timeout: WAIT });
    await page.getByLabel("Username", { exact: true }).fill("alice");
    await page.getByLabel("Password", { exact: true }).fill("password");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await consentShown(page);
  }

  async function consentShown(page: Page): Promise<void> {
    await page.getByRole("heading", { name: /^Allow Browser test client to access your account\?$/ }).waitFor({ timeout: WAIT });
    expect(await page.locator("#user-id").textContent()).toBe(alice.user_id);
  }

  /** Clicks Allow and waits for the browser to arrive at the redirect URI; returns the code sent there. */
  async function allow(page: Page, state: string): Promise<string> {
    await page.getByRole("button", { name: "Allow", exact: true }).click();
    await page.waitForURL(isCallback, { timeout: WAIT });
    await page.getByRole("heading", { name: "Back in the app" }).waitFor({ timeout: WAIT });
    const hit = await loopback.answer(state);
    expect(hit.searchParams.get("error")).toBeNull();
    const code = hit.searchParams.get("code");
    expect(code).toMatch(/\S{16,}/);
    return code!;
  }

  const devicesOfAlice = async () => {
    const res = await t.call("GET", "/_matrix/client/v3/devices", { token: alice.access_token });
    expect(res.status).toBe(200);
    return res.json.devices as { device_id: string; display_name?: string }[];
  };
  const whoamiStatus = async (token: string) => {
    const res = await t.call("GET", "/_matrix/client/v3/account/whoami", { token });
    return { status: res.status, errcode: res.json?.errcode as string | undefined, device_id: res.json?.device_id as string | undefined };
  };

  it("logs in in the browser, uses the token, refreshes with rotation and revokes: the device goes with its tokens", { timeout: 180_000 }, async () => {
    expect(metadata.issuer).toBe(t.config.public_baseurl);
    const deviceId = "BROWSERDEV1";
    const oauth = new OAuth2(metadata, { clientId, deviceId }, quietLogger());
    const state = newState();
    const url = await oauth.generateAuthorizationCodeGrantUrl(state, loopback.uri, "query");
    expect(new URL(url).searchParams.get("code_challenge_method")).toBe("S256");

    const context = await browser.newContext();
    let tokens;
    try {
      const page = await context.newPage();
      const pageErrors: string[] = [];
      page.on("pageerror", (err) => pageErrors.push(err.message));
      await signIn(page, url);
      const code = await allow(page, state);
      expect(pageErrors).toEqual([]);
      tokens = await oauth.completeAuthorizationCodeGrant(code, loopback.uri);
    } finally {
      await context.close();
    }
    expect(tokens.token_type).toBe("Bearer");
    expect(tokens.refresh_token).toBeDefined();

    // The device exists, named after the client.
    expect((await devicesOfAlice()).find((d) => d.device_id === deviceId)?.display_name).toBe("Browser test client");

    const client = makeClient(t.baseUrl, { userId: alice.user_id, accessToken: tokens.access_token, deviceId });
    try {
      expect(await client.whoami()).toMatchObject({ user_id: alice.user_id, device_id: deviceId });
      await startSyncing(client);
      const { room_id } = await client.createRoom({ name: "Browser OAuth room" });
      const { event_id } = await client.sendTextMessage(room_id, "sent after a browser login");
      const seen = await pollUntil(async () => client.getRoom(room_id)?.getLiveTimeline().getEvents().find((e) => e.getId() === event_id), WAIT, "the message in the sync");
      expect(seen.getContent().body).toBe("sent after a browser login");
    } finally {
      client.stopClient();
    }

    // The refresh, by the SDK's own refresher (what the MatrixClient runs on an expired token).
    const refreshed: sdk.AccessTokens[] = [];
    const refresher = new TokenRefresher(oauth, (n) => void refreshed.push(n));
    const next = await refresher.refreshTokens(tokens.refresh_token!);
    expect(refreshed).toEqual([next]);
    expect(next.accessToken).not.toBe(tokens.access_token);
    expect(next.refreshToken).toBeDefined();
    expect(next.refreshToken).not.toBe(tokens.refresh_token);
    // Weft's rotation: the old pair lasts until the new access token is used, then the old token is refused.
    expect(await whoamiStatus(next.accessToken)).toEqual({ status: 200, errcode: undefined, device_id: deviceId });
    expect(await whoamiStatus(tokens.access_token)).toMatchObject({ status: 401, errcode: "M_UNKNOWN_TOKEN" });
    expect((await devicesOfAlice()).map((d) => d.device_id)).toContain(deviceId);

    // Revocation (RFC 7009) through the refresher, as MatrixClient.logout does: the session ends.
    await refresher.revokeToken(next.refreshToken!, "refresh_token");
    expect(await whoamiStatus(next.accessToken)).toMatchObject({ status: 401, errcode: "M_UNKNOWN_TOKEN" });
    expect((await devicesOfAlice()).map((d) => d.device_id)).not.toContain(deviceId);
    await expect(refresher.refreshTokens(next.refreshToken!)).rejects.toBeInstanceOf(TokenRefreshLogoutError);
  });

  it("a web client (Element Web's kind) on https with the answer in the fragment: the browser keeps the code from the server", { timeout: 120_000 }, async () => {
    const web = new LoopbackRedirect("https");
    await web.start();
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    try {
      // application_type "web": the redirect URI is https on the client_uri's host, matched exactly (port included).
      const webClientId = await OAuth2.registerClient(metadata, { client_name: "Browser test client", client_uri: `${web.origin}/`, redirect_uris: [web.uri], application_type: "web" }, quietLogger());
      const deviceId = "WEBCLIENTD1";
      const oauth = new OAuth2(metadata, { clientId: webClientId, deviceId }, quietLogger());
      const state = newState();
      const page = await context.newPage();
      await signIn(page, await oauth.generateAuthorizationCodeGrantUrl(state, web.uri, "fragment"));
      await page.getByRole("button", { name: "Allow", exact: true }).click();
      await page.waitForURL((u) => u.origin === web.origin && u.pathname === "/callback", { timeout: WAIT });
      await page.getByRole("heading", { name: "Back in the app" }).waitFor({ timeout: WAIT });
      const answer = new URLSearchParams(new URL(page.url()).hash.slice(1));
      expect(answer.get("state")).toBe(state);
      // The callback's server saw the request but not the code: it stays in the browser's fragment.
      expect(web.hits.length).toBeGreaterThan(0);
      expect(web.hits.every((u) => u.search === "")).toBe(true);
      const tokens = await oauth.completeAuthorizationCodeGrant(answer.get("code")!, web.uri);
      expect(await whoamiStatus(tokens.access_token)).toEqual({ status: 200, errcode: undefined, device_id: deviceId });
      await oauth.revokeToken(tokens.access_token, "access_token");
      expect((await devicesOfAlice()).map((d) => d.device_id)).not.toContain(deviceId);
    } finally {
      await context.close();
      await web.close();
    }
  });

  it("the login page works with JavaScript disabled; that session ends when its old refresh token is replayed", { timeout: 120_000 }, async () => {
    const deviceId = "NOSCRIPTDV1";
    const oauth = new OAuth2(metadata, { clientId, deviceId }, quietLogger());
    const state = newState();
    const context = await browser.newContext({ javaScriptEnabled: false });
    let code: string;
    try {
      const page = await context.newPage();
      await signIn(page, await oauth.generateAuthorizationCodeGrantUrl(state, loopback.uri, "query"));
      code = await allow(page, state);
    } finally {
      await context.close();
    }
    const tokens = await oauth.completeAuthorizationCodeGrant(code, loopback.uri);
    expect(await whoamiStatus(tokens.access_token)).toEqual({ status: 200, errcode: undefined, device_id: deviceId });
    // A refresh whose new token is used, then the old refresh token replayed: the spec's refresh grant
    // takes that for a stolen token, and Weft ends the session (device and tokens).
    const refresher = new TokenRefresher(oauth, () => undefined);
    const next = await refresher.refreshTokens(tokens.refresh_token!);
    expect(await whoamiStatus(next.accessToken)).toEqual({ status: 200, errcode: undefined, device_id: deviceId });
    await expect(refresher.refreshTokens(tokens.refresh_token!)).rejects.toBeInstanceOf(TokenRefreshLogoutError);
    expect(await whoamiStatus(next.accessToken)).toMatchObject({ status: 401, errcode: "M_UNKNOWN_TOKEN" });
    expect((await devicesOfAlice()).map((d) => d.device_id)).not.toContain(deviceId);
  });

  it("the consent form without its CSRF token, or with a wrong one, is refused; the untouched form goes through", { timeout: 120_000 }, async () => {
    const deviceId = "CSRFTESTDV1";
    const oauth = new OAuth2(metadata, { clientId, deviceId }, quietLogger());
    const state = newState();
    const url = await oauth.generateAuthorizationCodeGrantUrl(state, loopback.uri, "query");
    const context: BrowserContext = await browser.newContext();
    try {
      const page = await context.newPage();
      await signIn(page, url);
      // The double-submit cookie cannot be read by the page, and is not sent from another site.
      const csrfCookie = (await context.cookies(metadata.authorization_endpoint)).find((c) => c.name === "weft_oauth_csrf");
      expect(csrfCookie).toMatchObject({ httpOnly: true, sameSite: "Strict" });
      const csrfField = page.locator('input[type="hidden"][name="csrf"]');
      expect(await csrfField.getAttribute("value")).toBe(csrfCookie!.value);

      const refusedSubmit = async () => {
        const answer = page.waitForResponse((r) => r.request().method() === "POST" && r.url().startsWith(metadata.authorization_endpoint), { timeout: WAIT });
        await page.getByRole("button", { name: "Allow", exact: true }).click();
        expect((await answer).status()).toBe(403);
        await page.getByRole("alert").waitFor({ timeout: WAIT });
        expect(await page.getByRole("alert").textContent()).toContain("This form has expired");
        expect(isCallback(new URL(page.url()))).toBe(false);
      };

      // Without the token.
      // (Runs in the page; the test's tsconfig has no DOM types.)
      await csrfField.evaluate((el) => (el as unknown as { remove(): void }).remove());
      await refusedSubmit();
      // The browser is still signed in: the authorisation URL shows the consent page at once; a wrong token.
      await page.goto(url, { timeout: WAIT });
      await consentShown(page);
      await csrfField.evaluate((el) => void ((el as unknown as { value: string }).value = "A".repeat(32)));
      await refusedSubmit();
      expect(loopback.hits.filter((u) => u.searchParams.get("state") === state)).toEqual([]);

      // The page as served goes through.
      await page.goto(url, { timeout: WAIT });
      await consentShown(page);
      const code = await allow(page, state);
      const tokens = await oauth.completeAuthorizationCodeGrant(code, loopback.uri);
      expect(await whoamiStatus(tokens.access_token)).toEqual({ status: 200, errcode: undefined, device_id: deviceId });
      await oauth.revokeToken(tokens.refresh_token!, "refresh_token");
      expect(await whoamiStatus(tokens.access_token)).toMatchObject({ status: 401, errcode: "M_UNKNOWN_TOKEN" });
    } finally {
      await context.close();
    }
  });
});
