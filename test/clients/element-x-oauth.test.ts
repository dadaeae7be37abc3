// Element X's engine (matrix-sdk 0.18, test/element-x) logs in through Weft's own OAuth 2.0 server, on
// SQLite and PostgreSQL, as Element X does: server metadata discovery (GET /auth_metadata) and dynamic
// registration of a native client with a custom-scheme redirect; the authorisation code grant with PKCE
// (the SDK builds the URL, the form-following agent signs in and consents on Weft's pages, the SDK
// finishes with the redirect); the session uses the Client-Server API (whoami, a room, sliding sync, a
// message) and refreshes its token; then it signs in a second device by QR code (MSC4108 rendezvous on
// Weft): the new device asks for the device authorisation grant (RFC 8628), the existing one is shown
// its verification URI, which the agent approves, the new device gets its tokens and the existing one
// sends it the cross-signing secrets; logging out revokes the token and deletes the device.
//
// The binary: WEFT_ELEMENT_X_BIN, or scripts/build-element-x.sh (see test/clients/element-x.test.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { OAuthAgent } from "../helpers/oauth-agent.ts";
import { BUILD_TIMEOUT_MS, ElementX, elementXBinary } from "../helpers/element-x.ts";
import { testCertificate } from "../helpers/tls.ts";
import { insecureAgent } from "../helpers/server.ts";
import { setGlobalDispatcher } from "undici";

// The pages' agent (undici's fetch) trusts the test server's self-signed certificate.
setGlobalDispatcher(insecureAgent);

const WAIT_MS = 60_000;

describe.each(backends())("Element X's engine (matrix-sdk 0.18) logs in through Weft's OAuth 2.0 server on %s", { timeout: 180_000 }, (backend) => {
  let bin: string;
  let t: TestServer;
  let alice: Session;
  let ex: ElementX | undefined;
  /** The browser the user signs in with (its cookie jar keeps the pages' sign-in). */
  const agent = new OAuthAgent();
  let mainDevice: string;
  let tvDevice: string;
  let roomId: string;

  const whoamiHttp = (token: string) => t.call("GET", "/_matrix/client/v3/account/whoami", { token });
  const deviceIds = async () => {
    const res = await t.call("GET", "/_matrix/client/v3/devices", { token: alice.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return (res.json.devices as { device_id: string }[]).map((d) => d.device_id);
  };

  beforeAll(async () => {
    bin = elementXBinary();
    // HTTPS, as the SDK wants for the OAuth endpoints it calls itself (its revocation, at logout).
    const cert = testCertificate();
    t = await startTestServer({
      backend,
      config: {
        tls_certificate_path: cert.certPath,
        tls_private_key_path: cert.keyPath,
        listeners: [{ port: 0, type: "http", tls: true, bind_addresses: ["127.0.0.1"], resources: [{ names: ["client"] }] }],
        oauth_server: { enabled: true },
        experimental_features: { msc4108_enabled: true },
      },
    });
    alice = await registerUser(t, "alice");
  }, BUILD_TIMEOUT_MS + 120_000);

  afterAll(async () => {
    if (ex && ex.exitCode === undefined) await ex.quit();
    await t?.close();
  });

  it("discovers, registers and logs in with the code grant through Weft's pages; the session whoamis, syncs and sends", async () => {
    ex = ElementX.start(bin, t.baseUrl, ["--insecure-tls"]);
    const start = await ex.one({ cmd: "oauth_login", redirect_uri: "io.element:/callback", client_uri: "https://element.io" }, "oauth_authorization_url");
    expect(start.issuer).toBe(t.config.public_baseurl);
    expect(start.client_id).toBeTruthy();
    const url = new URL(start.url);
    const metadata = (await t.call("GET", "/_matrix/client/v1/auth_metadata")).json;
    expect(`${url.origin}${url.pathname}`).toBe(metadata.authorization_endpoint);
    expect(url.searchParams.get("client_id")).toBe(start.client_id);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("redirect_uri")).toBe("io.element:/callback");
    const scope = url.searchParams.get("scope")!.split(" ");
    expect(scope.some((s) => /^urn:matrix:(org\.matrix\.msc2967\.)?client:api:\*$/.test(s))).toBe(true);
    const deviceScope = scope.find((s) => /client:device:/.test(s))!;
    expect(deviceScope).toBeTruthy();

    // The browser part: Weft's sign-in page, then its consent page, then the redirect to the app.
    const login = await agent.open(start.url);
    expect(login.status).toBe(200);
    const consent = await agent.submit(login, "login", { username: "alice", password: "password" });
    expect(consent.text).toContain("Element X (Weft test)");
    const done = await agent.submit(consent, "consent");
    expect([302, 303]).toContain(done.status);
    const callback = new URL(done.location!);
    expect(`${callback.protocol}${callback.pathname}`).toBe("io.element:/callback");
    expect(callback.searchParams.get("code")).toBeTruthy();

    const loggedIn = await ex.one({ cmd: "oauth_finish", callback_url: done.location }, "logged_in");
    expect(loggedIn.user_id).toBe(alice.user_id);
    mainDevice = loggedIn.device_id;
    expect(deviceScope.endsWith(`:${mainDevice}`)).toBe(true);
    expect(loggedIn.oauth_client_id).toBe(start.client_id);
    expect(await ex.one({ cmd: "whoami" }, "whoami")).toMatchObject({ ok: true, user_id: alice.user_id, device_id: mainDevice });
    expect(await deviceIds()).toContain(mainDevice);

    // Element X's login bootstraps cross-signing (no UIA for a first upload).
    expect(await ex.one({ cmd: "cross_signing", timeout_ms: WAIT_MS }, "cross_signing")).toMatchObject({ has_master: true, has_self_signing: true, has_user_signing: true });
    const keys = await t.call("POST", "/_matrix/client/v3/keys/query", { token: alice.access_token, body: { device_keys: { [alice.user_id]: [] } } });
    expect(Object.keys(keys.json.master_keys ?? {})).toContain(alice.user_id);
    expect(Object.keys(keys.json.device_keys[alice.user_id])).toContain(mainDevice);

    roomId = (await ex.one({ cmd: "create_room", name: "Made over OAuth" }, "room_created")).room_id;
    await ex.one({ cmd: "start_sync" }, "sync_started");
    const list = await ex.one({ cmd: "wait_rooms", contains: [roomId], timeout_ms: WAIT_MS }, "room_list");
    expect(list.rooms.find((r: any) => r.room_id === roomId)?.name).toBe("Made over OAuth");
    await ex.run({ cmd: "open_timeline", room_id: roomId });
    const sent = await ex.run({ cmd: "send", room_id: roomId, body: "sent with an OAuth token", timeout_ms: WAIT_MS });
    const remote = sent.find((l) => l.event === "remote_echo")!;
    expect(remote.event_id).toBeTruthy();
    const ev = await t.call("GET", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/event/${encodeURIComponent(remote.event_id)}`, { token: alice.access_token });
    expect([ev.json.sender, ev.json.content?.body]).toEqual([alice.user_id, "sent with an OAuth token"]);
  });

  it("refreshes its token: the new one works and, once used, the old one is refused", async () => {
    const before = await ex!.one({ cmd: "tokens" }, "tokens");
    expect(before.refresh_token).toBeTruthy();
    await ex!.one({ cmd: "oauth_refresh" }, "refreshed");
    const after = await ex!.one({ cmd: "tokens" }, "tokens");
    expect(after.access_token).not.toBe(before.access_token);
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(await ex!.one({ cmd: "whoami" }, "whoami")).toMatchObject({ ok: true, device_id: mainDevice });
    const old = await whoamiHttp(before.access_token);
    expect([old.status, old.json.errcode]).toEqual([401, "M_UNKNOWN_TOKEN"]);
    expect((await whoamiHttp(after.access_token)).json.device_id).toBe(mainDevice);
  });

  it("signs a new device in by QR code: the device authorisation grant approved in the browser, the secrets sent over the rendezvous", async () => {
    const login = ex!.run({ cmd: "qr_login", as: "tv", granter: "main", client_uri: "https://element.io", timeout_ms: 120_000 });
    login.catch(() => undefined);
    const verification = await ex!.waitLine((l) => l.event === "qr_verification_uri" && l.as === "tv", WAIT_MS, "qr_verification_uri");
    const userCode = await ex!.waitLine((l) => l.event === "qr_user_code" && l.as === "tv", WAIT_MS, "qr_user_code");
    const uri = new URL(verification.uri);
    expect(`${uri.origin}${uri.pathname}`).toBe(new URL("_weft/oauth2/device/verify", t.config.public_baseurl).href);
    expect(uri.searchParams.get("user_code")).toBe(userCode.user_code);
    // Until the user approves, the new device has no session (its poll is answered authorization_pending).
    expect(ex!.lines.some((l) => l.event === "logged_in" && l.as === "tv")).toBe(false);

    // The browser is still signed in from the first login: the page asks only for consent.
    const page = await agent.open(verification.uri);
    expect(page.status).toBe(200);
    const approved = await agent.submit(page, "consent");
    expect(approved.text).toContain("Device connected");

    const out = await login;
    const tv = out.find((l) => l.event === "logged_in" && l.as === "tv")!;
    expect(tv.user_id).toBe(alice.user_id);
    tvDevice = tv.device_id;
    // MSC4108: the new device's ID is its Curve25519 identity key.
    expect(tvDevice).toBe(tv.curve25519);
    // The existing device sent the private cross-signing keys over the secure channel.
    expect(tv.cross_signing).toMatchObject({ has_master: true, has_self_signing: true, has_user_signing: true });
    // The granting side reports its last step on its own time (the command ends with the new device's login).
    await ex!.waitLine((l) => l.event === "qr_progress" && l.side === "granter" && l.step === "syncing_secrets", WAIT_MS, "the granter's syncing_secrets");
    expect(ex!.lines.filter((l) => l.event === "qr_progress").map((l) => `${l.side}:${l.step}`)).toEqual(expect.arrayContaining(["granter:qr_ready", "granter:qr_scanned", "new:check_code", "granter:syncing_secrets", "new:syncing_secrets"]));
    expect(tv.oauth_client_id).toBeTruthy();
    expect(await ex!.one({ cmd: "whoami", as: "tv" }, "whoami")).toMatchObject({ ok: true, user_id: alice.user_id, device_id: tvDevice });
    expect(await deviceIds()).toEqual(expect.arrayContaining([mainDevice, tvDevice]));

    // The new device syncs the account's rooms and reads the first device's message.
    await ex!.one({ cmd: "start_sync", as: "tv" }, "sync_started");
    await ex!.one({ cmd: "wait_rooms", as: "tv", contains: [roomId], timeout_ms: WAIT_MS }, "room_list");
    await ex!.run({ cmd: "open_timeline", as: "tv", room_id: roomId });
    const msg = await ex!.one({ cmd: "wait_message", as: "tv", room_id: roomId, body: "sent with an OAuth token", sender: alice.user_id, timeout_ms: WAIT_MS }, "message");
    expect(msg.sender).toBe(alice.user_id);
  });

  it("logs out by revocation: the token is refused and the device is gone; the other device stays", async () => {
    const tokens = await ex!.one({ cmd: "tokens" }, "tokens");
    await ex!.one({ cmd: "oauth_logout" }, "logged_out");
    const after = await whoamiHttp(tokens.access_token);
    expect([after.status, after.json.errcode]).toEqual([401, "M_UNKNOWN_TOKEN"]);
    const refresh = await t.call("POST", "/_matrix/client/v3/refresh", { body: { refresh_token: tokens.refresh_token } });
    expect(refresh.status).not.toBe(200);
    const ids = await deviceIds();
    expect(ids).not.toContain(mainDevice);
    expect(ids).toContain(tvDevice);
    expect(await ex!.one({ cmd: "whoami" }, "whoami")).toMatchObject({ ok: false });
    expect(await ex!.one({ cmd: "whoami", as: "tv" }, "whoami")).toMatchObject({ ok: true, device_id: tvDevice });

    await ex!.one({ cmd: "oauth_logout", as: "tv" }, "logged_out");
    expect(await deviceIds()).not.toContain(tvDevice);
    expect(await ex!.quit()).toBe(0);
  });
});
