// matrix-js-sdk against a Weft that delegates authentication (MSC3861) to a real authorization server
// (oidc-provider, test/helpers/oauth-server.ts): the SDK's own auth-metadata discovery and validation
// (getAuthMetadata: GET /v1/auth_metadata), then, with an access token the provider issued, its sync
// loop reaches PREPARED and it sees a room it creates and its own message. Both databases.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as sdk from "matrix-js-sdk";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { makeClient, pollUntil, startSyncing } from "../helpers/js-sdk.ts";
import { API_SCOPE, deviceScope, startAuthServer, type TestAuthServer } from "../helpers/oauth-server.ts";

describe.each(backends())("matrix-js-sdk with delegated authentication on %s", (backend) => {
  let t: TestServer;
  let as: TestAuthServer;
  let client: sdk.MatrixClient | undefined;

  beforeAll(async () => {
    as = await startAuthServer();
    t = await startTestServer({
      backend,
      config: {
        enable_registration: false,
        ip_range_whitelist: ["127.0.0.0/8"],
        experimental_features: { msc3861: { enabled: true, issuer: as.issuer, ...as.clients.client_secret_basic } },
      },
    });
  });
  afterAll(async () => {
    client?.stopClient();
    await t?.close();
    await as?.close();
  });

  it("discovers and validates the authorization server's metadata", async () => {
    const anonymous = makeClient(t.baseUrl);
    const metadata = await anonymous.getAuthMetadata();
    expect(metadata.issuer).toBe(as.issuer);
    expect(metadata.registration_endpoint).toBe(`${as.issuer}/reg`);
    expect(metadata.account_management_uri).toBe(`${as.issuer}/account/`);
  });

  it("syncs with a provider's token and sees its own room and message", async () => {
    const accessToken = await as.tokenFor("jane", [API_SCOPE, deviceScope("JANEDEV")]);
    client = makeClient(t.baseUrl, { userId: "@jane:weft.test", accessToken, deviceId: "JANEDEV" });
    const who = await client.whoami();
    expect(who).toMatchObject({ user_id: "@jane:weft.test", device_id: "JANEDEV" });
    await startSyncing(client);
    const { room_id } = await client.createRoom({ name: "delegated room" });
    const { event_id } = await client.sendTextMessage(room_id, "hello from a delegated token");
    const seen = await pollUntil(
      async () => client!.getRoom(room_id)?.getLiveTimeline().getEvents().find((e) => e.getId() === event_id),
      20_000,
      "the message in the client's timeline",
    );
    expect(seen.getContent().body).toBe("hello from a delegated token");
    expect(client.getRoom(room_id)!.name).toBe("delegated room");
  });
});
