// matrix-js-sdk's own OAuth 2.0 API client (its OAuth2 class and the MatrixClient's token refresh and
// logout, spec v1.15+ "OAuth 2.0 API") against Weft's OAuth server, on SQLite and PostgreSQL: discovery
// through GET /auth_metadata (the SDK validates it), dynamic registration, the authorisation code grant
// with PKCE (the pages driven by the form-following agent), the tokens used by a syncing client that
// sends and reads a message, a refresh done by the SDK itself when the server says the token expired,
// logout as revocation, and the device authorisation grant.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as sdk from "matrix-js-sdk";
import { OAuth2, type ValidatedAuthMetadata } from "matrix-js-sdk/lib/oauth/index.js";
import { backends, startTestServer, TestClock, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { makeClient, startSyncing } from "../helpers/js-sdk.ts";
import { OAuthAgent } from "../helpers/oauth-agent.ts";

const REDIRECT = "https://jssdk.example.org/callback";

describe.each(backends())("matrix-js-sdk's OAuth 2.0 client against Weft on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let metadata: ValidatedAuthMetadata;
  let clientId: string;
  const clock = new TestClock();

  beforeAll(async () => {
    t = await startTestServer({ backend, clock, config: { oauth_server: { enabled: true } } });
    alice = await registerUser(t, "alice");
    metadata = await makeClient(t.baseUrl).getAuthMetadata();
    clientId = await OAuth2.registerClient(metadata, { client_name: "js-sdk test", client_uri: "https://jssdk.example.org/", redirect_uris: [REDIRECT], application_type: "web" });
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Signs alice in on the pages and consents; returns the callback URL. */
  const consent = async (url: string) => {
    const agent = new OAuthAgent();
    const login = await agent.open(url);
    const page = await agent.submit(login, "login", { username: "alice", password: "password" });
    return agent.submit(page, "consent");
  };

  it("discovers, registers and logs in with the code grant; the SDK syncs, sends, refreshes its expired token and logs out by revocation", async () => {
    expect(metadata.issuer).toBe(t.config.public_baseurl);
    expect(metadata.grant_types_supported).toContain("urn:ietf:params:oauth:grant-type:device_code");
    const oauth = new OAuth2(metadata, { clientId, deviceId: "JSSDKDEV01" });
    const state = "state-" + Math.random().toString(36).slice(2);
    const done = await consent(await oauth.generateAuthorizationCodeGrantUrl(state, REDIRECT, "fragment"));
    const fragment = new URLSearchParams(new URL(done.location!).hash.slice(1));
    expect(fragment.get("state")).toBe(state);
    const tokens = await oauth.completeAuthorizationCodeGrant(fragment.get("code")!, REDIRECT);
    expect(tokens.token_type).toBe("Bearer");

    const refreshed: sdk.AccessTokens[] = [];
    const client = makeClient(t.baseUrl, { userId: alice.user_id, accessToken: tokens.access_token, deviceId: "JSSDKDEV01" }, "/_matrix/client/v3", {
      refreshToken: tokens.refresh_token,
      oauthClientId: clientId,
      onTokenRefresh: (n) => refreshed.push(n),
    });
    try {
      expect(await client.whoami()).toMatchObject({ user_id: alice.user_id, device_id: "JSSDKDEV01" });
      await startSyncing(client);
      const { room_id } = await client.createRoom({ name: "OAuth room" });
      const { event_id } = await client.sendTextMessage(room_id, "sent with an OAuth token");
      const messages = await client.createMessagesRequest(room_id, null, 10, sdk.Direction.Backward);
      expect(messages.chunk.find((e) => e.event_id === event_id)?.content.body).toBe("sent with an OAuth token");
      client.stopClient();

      // The access token expires (5 minutes): the SDK's next call gets M_UNKNOWN_TOKEN, refreshes, retries.
      clock.advance(6 * 60_000);
      const expired = await t.call("GET", "/_matrix/client/v3/account/whoami", { token: tokens.access_token });
      expect([expired.status, expired.json.soft_logout]).toEqual([401, true]);
      expect((await client.whoami()).device_id).toBe("JSSDKDEV01");
      expect(refreshed).toHaveLength(1);
      expect(refreshed[0]!.accessToken).not.toBe(tokens.access_token);

      await client.logout(true);
      const after = await t.call("GET", "/_matrix/client/v3/account/whoami", { token: refreshed[0]!.accessToken });
      expect([after.status, after.json.errcode]).toEqual([401, "M_UNKNOWN_TOKEN"]);
      const devices = await t.call("GET", "/_matrix/client/v3/devices", { token: alice.access_token });
      expect((devices.json.devices as { device_id: string }[]).map((d) => d.device_id)).not.toContain("JSSDKDEV01");
    } finally {
      client.stopClient();
    }
  });

  it("the device authorisation grant: the SDK starts it and its poll gets the tokens once the user approved", async () => {
    const oauth = new OAuth2(metadata, { clientId, deviceId: "JSSDKTV001" });
    const session = await oauth.startDeviceAuthorizationGrant();
    expect(session.verification_uri_complete).toBeDefined();
    const agent = new OAuthAgent();
    const login = await agent.open(session.verification_uri_complete!);
    const page = await agent.submit(login, "login", { username: "alice", password: "password" });
    const done = await agent.submit(page, "consent");
    expect(done.text).toContain("Device connected");
    const result = await oauth.waitForDeviceAuthorizationGrant(session);
    expect("access_token" in result).toBe(true);
    const me = await t.call("GET", "/_matrix/client/v3/account/whoami", { token: (result as { access_token: string }).access_token });
    expect(me.json).toMatchObject({ user_id: alice.user_id, device_id: "JSSDKTV001" });
  });
});
