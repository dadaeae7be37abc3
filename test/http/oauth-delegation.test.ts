// Delegated authentication (MSC3861) against a real authorization server (oidc-provider on loopback,
// test/helpers/oauth-server.ts): its tokens are introspected (RFC 7662) and accepted — user and device
// created on first sight, sync works —, tokens without the API scope, unknown and revoked ones are
// refused (a revocation once the introspection cache's lifetime has passed), the admin token and the
// admin scope reach the admin API, /login and /register answer as Synapse's do under delegation,
// auth_metadata gives the issuer's metadata, and an unreachable or refused issuer is a clean 503.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, TestClock, type TestServer } from "../helpers/server.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { hashToken } from "../../src/domain/accounts/tokens.ts";
import { API_SCOPE, DELEGATED_ENDPOINTS, deviceScope, MAS_SECRET, startAuthServer, type TestAuthServer, type WeftClient } from "../helpers/oauth-server.ts";
import { freePort } from "../helpers/net.ts";
import { errcode, gql } from "../graphql/client.ts";
import { crossSigningKeys } from "../helpers/e2ee.ts";
import { writeAppServiceFile } from "../helpers/appservice.ts";
import { parsePrometheusText, sampleValue } from "../helpers/prometheus.ts";
import { capturedLog } from "../helpers/captured-log.ts";

const ADMIN_TOKEN = "weft-test-admin-token-0123456789";
const TTL_MS = 60_000;
const AS_TOKEN = "bridge-as-token-0123456789";

function delegationConfig(issuer: string, client: WeftClient, extra: Record<string, unknown> = {}) {
  return {
    enable_registration: false,
    allow_guest_access: false,
    // The authorization server is on loopback, which the default ip_range_blacklist refuses.
    ip_range_whitelist: ["127.0.0.0/8"],
    experimental_features: {
      msc3861: { enabled: true, issuer, ...client, admin_token: ADMIN_TOKEN, introspection_cache_ttl: TTL_MS, ...extra },
    },
  };
}

describe.each(backends())("delegated authentication (MSC3861) on %s", (backend) => {
  let t: TestServer;
  let as: TestAuthServer;
  const clock = new TestClock();

  beforeAll(async () => {
    as = await startAuthServer();
    const bridge = writeAppServiceFile({ id: "bridge", asToken: AS_TOKEN, hsToken: "bridge-hs-token", senderLocalpart: "bridgebot", userRegex: "@bridge_.*:weft\\.test" });
    t = await startTestServer({ backend, clock, config: { ...delegationConfig(as.issuer, as.clients.client_secret_basic), app_service_config_files: [bridge] } });
  });
  afterAll(async () => {
    await t?.close();
    await as?.close();
  });

  it("accepts a provider's token: whoami names the user and the device, both created on first sight", async () => {
    const token = await as.tokenFor("alice", [API_SCOPE, deviceScope("ALICEDEV")]);
    const who = await t.call("GET", "/_matrix/client/v3/account/whoami", { token });
    expect(who.status, JSON.stringify(who.json)).toBe(200);
    expectMatchesSpec(who, "GET", "/_matrix/client/v3/account/whoami");
    expect(who.json).toEqual({ user_id: "@alice:weft.test", device_id: "ALICEDEV", is_guest: false });

    const devices = await t.call("GET", "/_matrix/client/v3/devices", { token });
    expect(devices.status).toBe(200);
    expect(devices.json.devices.map((d: { device_id: string }) => d.device_id)).toEqual(["ALICEDEV"]);
    const profile = await t.call("GET", "/_matrix/client/v3/profile/@alice:weft.test");
    expect(profile.status).toBe(200);
  });

  it("answers concurrent first requests of a new token alike, with one introspection", async () => {
    const token = await as.tokenFor("kim", [API_SCOPE, deviceScope("KIMDEV")]);
    const before = as.introspections();
    const answers = await Promise.all(Array.from({ length: 6 }, () => t.call("GET", "/_matrix/client/v3/account/whoami", { token })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    for (const a of answers) expect(a.json).toEqual({ user_id: "@kim:weft.test", device_id: "KIMDEV", is_guest: false });
    expect(as.introspections()).toBe(before + 1);
  });

  it("serves sync and room operations to a provider's token", async () => {
    const token = await as.tokenFor("bob", [API_SCOPE, deviceScope("BOBDEV")]);
    const room = await t.call("POST", "/_matrix/client/v3/createRoom", { token, body: { name: "delegated" } });
    expect(room.status, JSON.stringify(room.json)).toBe(200);
    const sent = await t.call("PUT", `/_matrix/client/v3/rooms/${encodeURIComponent(room.json.room_id)}/send/m.room.message/t1`, { token, body: { msgtype: "m.text", body: "hi" } });
    expect(sent.status).toBe(200);
    const sync = await t.call("GET", "/_matrix/client/v3/sync?timeout=0", { token });
    expect(sync.status).toBe(200);
    const timeline = sync.json.rooms.join[room.json.room_id].timeline.events;
    expect(timeline.some((e: { event_id: string }) => e.event_id === sent.json.event_id)).toBe(true);
  });

  it("finds the user by the token's sub once linked, even when the username claim changes", async () => {
    const first = await as.tokenFor("carol", [API_SCOPE]);
    expect((await t.call("GET", "/_matrix/client/v3/account/whoami", { token: first })).json.user_id).toBe("@carol:weft.test");
    const renamed = await as.tokenFor("carol-renamed", [API_SCOPE], { sub: "sub-carol" });
    const who = await t.call("GET", "/_matrix/client/v3/account/whoami", { token: renamed });
    expect(who.json).toEqual({ user_id: "@carol:weft.test", is_guest: false });
  });

  it("authenticates the GraphQL face with the same tokens, and refuses loginFlows there too", async () => {
    const token = await as.tokenFor("alice", [API_SCOPE, deviceScope("ALICEDEV")]);
    const viewer = await gql(t, "{ viewer { userId deviceId } }", undefined, token);
    expect(viewer.body.data).toEqual({ viewer: { userId: "@alice:weft.test", deviceId: "ALICEDEV" } });
    const refused = await gql(t, "{ viewer { userId } }", undefined, "not-a-token-anyone-issued");
    expect(errcode(refused.body)).toBe("M_UNKNOWN_TOKEN");
    const flows = await gql(t, "{ loginFlows { type } }");
    expect(errcode(flows.body)).toBe("M_UNRECOGNIZED");
  });

  it("refuses a token without the Matrix API scope, and unknown tokens, with 401 M_UNKNOWN_TOKEN", async () => {
    const noScope = await as.tokenFor("dave", [deviceScope("DAVEDEV")]);
    const res = await t.call("GET", "/_matrix/client/v3/account/whoami", { token: noScope });
    expect(res.status).toBe(401);
    expect(res.json.errcode).toBe("M_UNKNOWN_TOKEN");
    expect(res.json.error).toMatch(/Matrix C-S API/);
    const unknown = await t.call("GET", "/_matrix/client/v3/account/whoami", { token: "not-a-token-anyone-issued" });
    expect(unknown.status).toBe(401);
    expect(unknown.json.errcode).toBe("M_UNKNOWN_TOKEN");
  });

  it("accepts the unstable MSC2967 scopes", async () => {
    const token = await as.tokenFor("erin", ["urn:matrix:org.matrix.msc2967.client:api:*", "urn:matrix:org.matrix.msc2967.client:device:ERINDEV"]);
    const who = await t.call("GET", "/_matrix/client/v3/account/whoami", { token });
    expect(who.json).toEqual({ user_id: "@erin:weft.test", device_id: "ERINDEV", is_guest: false });
  });

  it("caches introspection, and refuses a revoked token once the cache's lifetime has passed", async () => {
    const token = await as.tokenFor("frank", [API_SCOPE, deviceScope("FRANKDEV")]);
    expect((await t.call("GET", "/_matrix/client/v3/account/whoami", { token })).status).toBe(200);
    // The cache is keyed by the token's hash, never by the token.
    const cache = t.hs.services.caches.get<string, unknown>("token_introspection", 1);
    expect(cache.has(hashToken(token))).toBe(true);
    expect(cache.has(token)).toBe(false);
    const asked = as.introspections();
    await as.revoke("frank", token);
    // Within the lifetime the cached answer is used: the provider is not asked again.
    const cached = await t.call("GET", "/_matrix/client/v3/account/whoami", { token });
    expect(cached.status).toBe(200);
    expect(as.introspections()).toBe(asked);
    clock.advance(TTL_MS + 1);
    const refused = await t.call("GET", "/_matrix/client/v3/account/whoami", { token });
    expect(refused.status).toBe(401);
    expect(refused.json.errcode).toBe("M_UNKNOWN_TOKEN");
    expect(as.introspections()).toBe(asked + 1);
  });

  it("never keeps an introspection answer past the token's exp", async () => {
    // The provider's clock is the real one; this server's runs ahead by what earlier tests advanced it.
    const ahead = Math.ceil((clock.now() - Date.now()) / 1000);
    const token = await as.tokenFor("lena", [API_SCOPE, deviceScope("LENADEV")], { lifetime: ahead + 20 });
    expect((await t.call("GET", "/_matrix/client/v3/account/whoami", { token })).status).toBe(200);
    const asked = as.introspections();
    expect((await t.call("GET", "/_matrix/client/v3/account/whoami", { token })).status).toBe(200);
    expect(as.introspections()).toBe(asked);
    // Past exp (20 s, well within the cache's 60 s): the answer is not reused, and the token is refused.
    clock.advance(21_000);
    const expired = await t.call("GET", "/_matrix/client/v3/account/whoami", { token });
    expect([expired.status, expired.json.errcode]).toEqual([401, "M_UNKNOWN_TOKEN"]);
    expect(as.introspections()).toBe(asked + 1);
  });

  it("lets the admin token and tokens with the admin scope use the admin API, and no other", async () => {
    const list = await t.call("GET", "/_synapse/admin/v2/users?guests=false", { token: ADMIN_TOKEN });
    expect(list.status, JSON.stringify(list.json)).toBe(200);
    expect(list.json.users.map((u: { name: string }) => u.name)).toContain("@alice:weft.test");
    const plain = await as.tokenFor("alice", [API_SCOPE]);
    const refused = await t.call("GET", "/_synapse/admin/v2/users?guests=false", { token: plain });
    expect(refused.status).toBe(403);
    const admin = await as.tokenFor("alice", [API_SCOPE, "urn:synapse:admin:*"]);
    expect((await t.call("GET", "/_synapse/admin/v2/users?guests=false", { token: admin })).status).toBe(200);
    // As Synapse under delegation: no guests to list (the default guests=true is refused), no accounts made here.
    const withGuests = await t.call("GET", "/_synapse/admin/v2/users", { token: ADMIN_TOKEN });
    expect([withGuests.status, withGuests.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    const create = await t.call("PUT", "/_synapse/admin/v2/users/@newbie:weft.test", { token: ADMIN_TOKEN, body: { displayname: "New" } });
    expect([create.status, create.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    const modify = await t.call("PUT", "/_synapse/admin/v2/users/@alice:weft.test", { token: ADMIN_TOKEN, body: { displayname: "Alice A." } });
    expect(modify.status, JSON.stringify(modify.json)).toBe(200);
  });

  it("answers /login, /logout, /refresh, password and device removal with 404 M_UNRECOGNIZED, as Synapse", async () => {
    const token = await as.tokenFor("alice", [API_SCOPE, deviceScope("ALICEDEV")]);
    for (const [method, path, body] of [
      ["GET", "/_matrix/client/v3/login", undefined],
      ["POST", "/_matrix/client/v3/login", { type: "m.login.password", identifier: { type: "m.id.user", user: "alice" }, password: "x" }],
      ...DELEGATED_ENDPOINTS,
    ] as const) {
      const res = await t.call(method, path, { token, body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.json.errcode, `${method} ${path}`).toBe("M_UNRECOGNIZED");
    }
    // The admin API's registration, login-as and registration tokens are the authorization server's too.
    for (const [method, path] of [["GET", "/_synapse/admin/v1/register"], ["POST", "/_synapse/admin/v1/users/@alice:weft.test/login"], ["GET", "/_synapse/admin/v1/registration_tokens"]] as const) {
      const res = await t.call(method, path, { token: ADMIN_TOKEN, body: method === "POST" ? {} : undefined });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.json.errcode, `${method} ${path}`).toBe("M_UNRECOGNIZED");
    }
    // The session still works: nothing was logged out or removed.
    expect((await t.call("GET", "/_matrix/client/v3/account/whoami", { token })).status).toBe(200);
  });

  it("sets up cross-signing without UIA, and sends a reset to the authorization server's account page (m.oauth)", async () => {
    const token = await as.tokenFor("hana", [API_SCOPE, deviceScope("HANADEV")]);
    const upload = (body: unknown) => t.call("POST", "/_matrix/client/v3/keys/device_signing/upload", { token, body });
    const first = await upload(crossSigningKeys("@hana:weft.test").body);
    expect(first.status, JSON.stringify(first.json)).toBe(200);
    const reset = await upload(crossSigningKeys("@hana:weft.test").body);
    expect(reset.status).toBe(401);
    const url = `${as.issuer}/account/?action=org.matrix.cross_signing_reset`;
    expect(reset.json).toMatchObject({
      session: "dummy",
      flows: [{ stages: ["m.oauth"] }, { stages: ["org.matrix.cross_signing_reset"] }],
      params: { "m.oauth": { url }, "org.matrix.cross_signing_reset": { url } },
    });
    // The authorization server approves the reset through the admin API; then the upload needs no UIA,
    // once: the new master key is not replaceable again until approved again.
    const allow = await t.call("POST", "/_synapse/admin/v1/users/@hana:weft.test/_allow_cross_signing_replacement_without_uia", { token: ADMIN_TOKEN, body: {} });
    expect(allow.status, JSON.stringify(allow.json)).toBe(200);
    expect(allow.json.updatable_without_uia_before_ms).toBe(clock.now() + 10 * 60_000);
    const replacement = crossSigningKeys("@hana:weft.test");
    const replaced = await upload(replacement.body);
    expect(replaced.status, JSON.stringify(replaced.json)).toBe(200);
    const query = await t.call("POST", "/_matrix/client/v3/keys/query", { token, body: { device_keys: { "@hana:weft.test": [] } } });
    expect(Object.keys(query.json.master_keys["@hana:weft.test"].keys)).toEqual([`ed25519:${replacement.master.pub}`]);
    expect((await upload(crossSigningKeys("@hana:weft.test").body)).status).toBe(401);
    // The window closes after ten minutes.
    expect((await t.call("POST", "/_synapse/admin/v1/users/@hana:weft.test/_allow_cross_signing_replacement_without_uia", { token: ADMIN_TOKEN, body: {} })).status).toBe(200);
    clock.advance(10 * 60_000);
    expect((await upload(crossSigningKeys("@hana:weft.test").body)).status).toBe(401);
    // A user without a master key cannot be allowed anything.
    const none = await t.call("POST", "/_synapse/admin/v1/users/@nobody:weft.test/_allow_cross_signing_replacement_without_uia", { token: ADMIN_TOKEN, body: {} });
    expect(none.status).toBe(404);
    expect(none.json.errcode).toBe("M_NOT_FOUND");
  });

  it("lets only application services register, with inhibit_login, as Synapse's RegisterAppServiceOnlyRestServlet", async () => {
    const res = await t.call("POST", "/_matrix/client/v3/register", { body: { username: "zed", password: "secret-password" } });
    expect(res.status).toBe(403);
    expect(res.json.errcode).toBe("M_FORBIDDEN");
    expect(res.json.error).toMatch(/m\.login\.application_service/);

    const body = { type: "m.login.application_service", username: "bridge_one" };
    const withLogin = await t.call("POST", "/_matrix/client/v3/register", { token: AS_TOKEN, body });
    expect(withLogin.status).toBe(400);
    expect(withLogin.json.errcode).toBe("M_APPSERVICE_LOGIN_UNSUPPORTED");
    const ok = await t.call("POST", "/_matrix/client/v3/register", { token: AS_TOKEN, body: { ...body, inhibit_login: true } });
    expect(ok.status, JSON.stringify(ok.json)).toBe(200);
    expect(ok.json).toEqual({ user_id: "@bridge_one:weft.test", home_server: "weft.test" });
    // The service's own token is no provider token: it authenticates as before.
    const who = await t.call("GET", "/_matrix/client/v3/account/whoami?user_id=%40bridge_one%3Aweft.test", { token: AS_TOKEN });
    expect(who.json.user_id).toBe("@bridge_one:weft.test");
  });

  it("serves the issuer's metadata at auth_metadata (v1 and MSC2965), and auth_issuer", async () => {
    const meta = await t.call("GET", "/_matrix/client/v1/auth_metadata");
    expect(meta.status).toBe(200);
    expectMatchesSpec(meta, "GET", "/_matrix/client/v1/auth_metadata");
    expect(meta.json.issuer).toBe(as.issuer);
    expect(meta.json.introspection_endpoint).toBe(`${as.issuer}/token/introspection`);
    expect(meta.json.account_management_uri).toBe(`${as.issuer}/account/`);
    expect(meta.headers.get("cache-control")).toMatch(/max-age=600/);
    const unstable = await t.call("GET", "/_matrix/client/unstable/org.matrix.msc2965/auth_metadata");
    expect(unstable.json).toEqual(meta.json);
    const issuer = await t.call("GET", "/_matrix/client/unstable/org.matrix.msc2965/auth_issuer");
    expect(issuer.json).toEqual({ issuer: as.issuer });
  });

  it("names the issuer in the client .well-known and turns password and 3PID changes off in /capabilities", async () => {
    const wk = await t.call("GET", "/.well-known/matrix/client");
    expect(wk.json["org.matrix.msc2965.authentication"]).toEqual({ issuer: as.issuer, account: `${as.issuer}/account/` });
    const token = await as.tokenFor("alice", [API_SCOPE]);
    const caps = await t.call("GET", "/_matrix/client/v3/capabilities", { token });
    expect(caps.json.capabilities["m.change_password"]).toEqual({ enabled: false });
    expect(caps.json.capabilities["m.3pid_changes"]).toEqual({ enabled: false });
  });
});

describe("delegated authentication's client authentication methods and failures (sqlite)", () => {
  let as: TestAuthServer;
  beforeAll(async () => {
    as = await startAuthServer();
  });
  afterAll(async () => {
    await as?.close();
  });

  for (const method of ["client_secret_post", "client_secret_jwt", "private_key_jwt"] as const) {
    it(`introspects with ${method}`, async () => {
      const t = await startTestServer({ config: delegationConfig(as.issuer, as.clients[method]) });
      try {
        const token = await as.tokenFor("gina", [API_SCOPE, deviceScope("GINADEV")]);
        const who = await t.call("GET", "/_matrix/client/v3/account/whoami", { token });
        expect(who.status, JSON.stringify(who.json)).toBe(200);
        expect(who.json.user_id).toBe("@gina:weft.test");
      } finally {
        await t.close();
      }
    });
  }

  it("introspects as Matrix Authentication Service's client (matrix_authentication_service: endpoint, secret)", async () => {
    const mas = (secret: string) => ({
      enable_registration: false,
      ip_range_whitelist: ["127.0.0.0/8"],
      matrix_authentication_service: { enabled: true, endpoint: as.issuer, secret },
    });
    const t = await startTestServer({ config: mas(MAS_SECRET) });
    try {
      // MAS provisions its users and devices (the whole of its API: oauth-delegation-mas.test.ts).
      const token = await as.tokenFor("ivan", [API_SCOPE, deviceScope("IVANDEV")]);
      const unprovisioned = await t.call("GET", "/_matrix/client/v3/account/whoami", { token });
      expect([unprovisioned.status, unprovisioned.json.errcode]).toEqual([503, "M_UNKNOWN"]);
      expect((await t.call("POST", "/_synapse/mas/provision_user", { token: MAS_SECRET, body: { localpart: "ivan" } })).status).toBe(201);
      expect((await t.call("POST", "/_synapse/mas/upsert_device", { token: MAS_SECRET, body: { localpart: "ivan", device_id: "IVANDEV" } })).status).toBe(201);
      const who = await t.call("GET", "/_matrix/client/v3/account/whoami", { token });
      expect(who.status, JSON.stringify(who.json)).toBe(200);
      expect(who.json).toEqual({ user_id: "@ivan:weft.test", device_id: "IVANDEV", is_guest: false });
      const meta = await t.call("GET", "/_matrix/client/v1/auth_metadata");
      expect(meta.json.issuer).toBe(as.issuer);
    } finally {
      await t.close();
    }
    const wrong = await startTestServer({ config: mas("not-the-secret") });
    try {
      const token = await as.tokenFor("ivan", [API_SCOPE]);
      expect((await wrong.call("GET", "/_matrix/client/v3/account/whoami", { token })).status).toBe(503);
    } finally {
      await wrong.close();
    }
  });

  it("refuses introspection with a wrong client secret with a clean 503, and counts it in the metrics", async () => {
    const config = {
      ...delegationConfig(as.issuer, { ...as.clients.client_secret_basic, client_secret: "wrong-secret" }),
      enable_metrics: true,
      listeners: [{ port: 0, type: "http", bind_addresses: ["127.0.0.1"], resources: [{ names: ["client", "metrics"] }] }],
    };
    const t = await startTestServer({ config });
    try {
      const token = await as.tokenFor("gina", [API_SCOPE]);
      const res = await t.call("GET", "/_matrix/client/v3/account/whoami", { token });
      expect(res.status).toBe(503);
      expect(res.json.errcode).toBe("M_UNKNOWN");
      const metrics = parsePrometheusText((await t.call("GET", "/_synapse/metrics")).json as string);
      expect(sampleValue(metrics, "weft_token_introspection_requests_total", { code: "401" })).toBe(1);
      expect(sampleValue(metrics, "weft_token_introspection_seconds_total", { code: "401" })).toBeGreaterThan(0);
    } finally {
      await t.close();
    }
  });

  it("refuses a loopback issuer unless ip_range_whitelist allows it", async () => {
    const config = delegationConfig(as.issuer, as.clients.client_secret_basic);
    const log = capturedLog();
    const t = await startTestServer({ config: { ...config, ip_range_whitelist: [] }, log: log.logger });
    try {
      // Said at start, since no token could be accepted.
      expect(log.lines.find((l) => /ip_range_blacklist/.test(l.msg))?.blocked).toEqual(["127.0.0.1"]);
      const token = await as.tokenFor("gina", [API_SCOPE]);
      const before = as.introspections();
      const res = await t.call("GET", "/_matrix/client/v3/account/whoami", { token });
      expect(res.status).toBe(503);
      expect(res.json.errcode).toBe("M_UNKNOWN");
      expect(as.introspections()).toBe(before);
      expect((await t.call("GET", "/_matrix/client/v1/auth_metadata")).status).toBe(503);
    } finally {
      await t.close();
    }
  });

  it("answers 503, never 500, when the issuer cannot be reached; the .well-known still names it", async () => {
    const issuer = `http://127.0.0.1:${await freePort()}`; // nothing listens there
    const t = await startTestServer({ config: delegationConfig(issuer, as.clients.client_secret_basic) });
    try {
      const res = await t.call("GET", "/_matrix/client/v3/account/whoami", { token: "some-token" });
      expect(res.status).toBe(503);
      expect(res.json).toMatchObject({ errcode: "M_UNKNOWN", error: "Unable to introspect the access token" });
      const meta = await t.call("GET", "/_matrix/client/v1/auth_metadata");
      expect(meta.status).toBe(503);
      expect(meta.json.errcode).toBe("M_UNKNOWN");
      const wk = await t.call("GET", "/.well-known/matrix/client");
      expect(wk.status).toBe(200);
      expect(wk.json["org.matrix.msc2965.authentication"]).toEqual({ issuer });
      // The admin token needs no authorization server.
      expect((await t.call("GET", "/_synapse/admin/v2/users?guests=false", { token: ADMIN_TOKEN })).status).toBe(200);
    } finally {
      await t.close();
    }
  });
});
