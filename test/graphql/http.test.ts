// The GraphQL face over HTTP against a real server, on each storage backend: registration, login,
// the viewer, profile mutations, logout, and the errors (Matrix errcodes in extensions).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { errcode, gql, LOGIN, REGISTER, SET_AVATAR_URL, SET_DISPLAY_NAME, VIEWER } from "./client.ts";

describe.each(backends())("GraphQL over HTTP (%s)", (backend) => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer({ backend }); });
  afterAll(async () => { await t?.close(); });

  it("registers through the dummy flow and reads the viewer", async () => {
    const r = await gql(t, REGISTER, { input: { username: "alice", password: "secret-pw", initialDeviceDisplayName: "Alice's browser" } });
    expect(r.status).toBe(200);
    expect(r.body.errors).toBeUndefined();
    const p = r.body.data.register;
    expect(p).toMatchObject({ userId: "@alice:weft.test", homeServer: "weft.test", refreshToken: null, expiresInMs: null });
    expect(p.accessToken).toEqual(expect.any(String));
    expect(p.deviceId).toEqual(expect.any(String));

    const v = await gql(t, VIEWER, undefined, p.accessToken);
    expect(v.body.errors).toBeUndefined();
    expect(v.body.data.viewer).toMatchObject({ userId: "@alice:weft.test", deviceId: p.deviceId, isGuest: false, displayName: "alice", avatarUrl: null });
    expect(v.body.data.viewer.devices).toEqual([
      { deviceId: p.deviceId, displayName: "Alice's browser", lastSeenIp: "127.0.0.1", lastSeenTs: expect.any(Number) },
    ]);
    // The same account is visible to the REST face.
    const w = await t.call("GET", "/_matrix/client/v3/account/whoami", { token: p.accessToken });
    expect(w.json).toEqual({ user_id: "@alice:weft.test", is_guest: false, device_id: p.deviceId });
  });

  it("refuses a taken username with M_USER_IN_USE", async () => {
    const r = await gql(t, REGISTER, { input: { username: "alice", password: "other-pw" } });
    expect(r.status).toBe(200);
    expect(r.body.data.register).toBeNull();
    expect(errcode(r.body)).toBe("M_USER_IN_USE");
  });

  it("registers a guest, and with inhibitLogin and refreshToken", async () => {
    const g = await gql(t, REGISTER, { input: { kind: "GUEST" } });
    expect(g.body.errors).toBeUndefined();
    const v = await gql(t, "{ viewer { userId isGuest displayName } }", undefined, g.body.data.register.accessToken);
    expect(v.body.data.viewer).toEqual({ userId: g.body.data.register.userId, isGuest: true, displayName: null });

    const i = await gql(t, REGISTER, { input: { username: "quiet", password: "pw-quiet", inhibitLogin: true } });
    expect(i.body.data.register).toEqual({ userId: "@quiet:weft.test", accessToken: null, deviceId: null, refreshToken: null, expiresInMs: null, homeServer: "weft.test" });

    const rt = await gql(t, REGISTER, { input: { username: "fresh", password: "pw-fresh", refreshToken: true } });
    expect(rt.body.data.register.refreshToken).toEqual(expect.any(String));
    expect(rt.body.data.register.expiresInMs).toBeGreaterThan(0);
  });

  it("logs in with user or identifier, sets the profile, logs out", async () => {
    const l = await gql(t, LOGIN, { input: { user: "alice", password: "secret-pw", deviceId: "GQLDEVICE" } });
    expect(l.body.errors).toBeUndefined();
    expect(l.body.data.login).toMatchObject({ userId: "@alice:weft.test", deviceId: "GQLDEVICE", homeServer: "weft.test" });
    const token = l.body.data.login.accessToken as string;

    const l2 = await gql(t, LOGIN, { input: { type: "PASSWORD", identifier: { type: "m.id.user", user: "@alice:weft.test" }, password: "secret-pw" } });
    expect(l2.body.data.login.userId).toBe("@alice:weft.test");

    const d = await gql(t, SET_DISPLAY_NAME, { name: "Alice A." }, token);
    expect(d.body.errors).toBeUndefined();
    expect(d.body.data.setDisplayName).toEqual({ userId: "@alice:weft.test", displayName: "Alice A." });
    expect((await gql(t, "{ viewer { displayName } }", undefined, token)).body.data.viewer.displayName).toBe("Alice A.");
    const rest = await t.call("GET", "/_matrix/client/v3/profile/@alice:weft.test/displayname");
    expect(rest.json).toEqual({ displayname: "Alice A." });

    const a = await gql(t, SET_AVATAR_URL, { url: "mxc://weft.test/abc" }, token);
    expect(a.body.errors).toBeUndefined();
    expect(a.body.data.setAvatarUrl).toEqual({ userId: "@alice:weft.test", avatarUrl: "mxc://weft.test/abc", displayName: "Alice A." });
    const cleared = await gql(t, SET_AVATAR_URL, { url: null }, token);
    expect(cleared.body.data.setAvatarUrl.avatarUrl).toBeNull();

    const devices = (await gql(t, "{ viewer { devices { deviceId } } }", undefined, token)).body.data.viewer.devices.map((x: any) => x.deviceId);
    expect(devices).toContain("GQLDEVICE");
    expect(devices.length).toBeGreaterThanOrEqual(3);

    const out = await gql(t, "mutation { logout }", undefined, token);
    expect(out.body).toEqual({ data: { logout: true } });
    const after = await gql(t, VIEWER, undefined, token);
    expect(after.status).toBe(200);
    expect(after.body.data.viewer).toBeNull();
    expect(errcode(after.body)).toBe("M_UNKNOWN_TOKEN");
    expect(after.body.errors![0]!.extensions).toEqual({ errcode: "M_UNKNOWN_TOKEN", code: "UNAUTHENTICATED", soft_logout: false });
    expect(after.body.errors![0]!.path).toEqual(["viewer"]);
  });

  it("refuses a wrong password with M_FORBIDDEN", async () => {
    const r = await gql(t, LOGIN, { input: { user: "alice", password: "wrong" } });
    expect(r.status).toBe(200);
    expect(r.body.data.login).toBeNull();
    expect(errcode(r.body)).toBe("M_FORBIDDEN");
    expect(r.body.errors![0]!.message).toBe("Invalid username or password");
  });
});

describe("GraphQL over HTTP: requests and errors", () => {
  let t: TestServer;
  let token: string;
  beforeAll(async () => {
    t = await startTestServer();
    token = (await gql(t, REGISTER, { input: { username: "bob", password: "bob-pw" } })).body.data.register.accessToken;
  });
  afterAll(async () => { await t?.close(); });

  it("viewer without a token fails with M_MISSING_TOKEN", async () => {
    const r = await gql(t, VIEWER);
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ viewer: null });
    expect(r.body.errors).toEqual([{ message: "Missing access token", locations: expect.any(Array), path: ["viewer"], extensions: { errcode: "M_MISSING_TOKEN", code: "UNAUTHENTICATED" } }]);
    expect(errcode((await gql(t, "mutation { logout }")).body)).toBe("M_MISSING_TOKEN");
    expect(errcode((await gql(t, SET_DISPLAY_NAME, { name: "x" })).body)).toBe("M_MISSING_TOKEN");
  });

  it("an unknown token fails with M_UNKNOWN_TOKEN, but login and register need none", async () => {
    expect(errcode((await gql(t, VIEWER, undefined, "not-a-token")).body)).toBe("M_UNKNOWN_TOKEN");
    const l = await gql(t, LOGIN, { input: { user: "bob", password: "bob-pw" } }, "not-a-token");
    expect(l.body.data.login.userId).toBe("@bob:weft.test");
  });

  it("a malformed query is a GraphQL error, not a 500", async () => {
    const parse = await gql(t, "{ viewer { userId ", undefined, token);
    expect(parse.status).toBe(400);
    expect(parse.body.errors![0]!.extensions!.code).toBe("GRAPHQL_PARSE_FAILED");
    const invalid = await gql(t, "{ viewer { noSuchField } }", undefined, token);
    expect(invalid.status).toBe(400);
    expect(invalid.body.errors![0]!.extensions!.code).toBe("GRAPHQL_VALIDATION_FAILED");
    expect(invalid.body.errors![0]!.message).toMatch(/noSuchField/);
    const vars = await gql(t, LOGIN, { input: { user: 3 } });
    expect(vars.status).toBe(400);
    expect(vars.body.errors![0]!.extensions!.code).toBe("BAD_USER_INPUT");
    const noQuery = await t.call("POST", "/graphql", { body: {} });
    expect(noQuery.status).toBe(400);
    const badJson = await t.call("POST", "/graphql", { raw: "{nope", headers: { "content-type": "application/json" } });
    expect(badJson.status).toBe(400);
    expect(badJson.json.errors[0].extensions.errcode).toBe("M_NOT_JSON");
  });

  it("serves GET with the preflight header and blocks CSRF-able requests", async () => {
    const q = encodeURIComponent("{ viewer { userId } }");
    const ok = await t.call("GET", `/graphql?query=${q}`, { token, headers: { "apollo-require-preflight": "1" } });
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ data: { viewer: { userId: "@bob:weft.test" } } });
    const blocked = await t.call("GET", `/graphql?query=${q}`, { token });
    expect(blocked.status).toBe(400);
    expect(JSON.stringify(blocked.json)).toMatch(/Cross-Site Request Forgery/);
    const textPlain = await t.call("POST", "/graphql", { raw: JSON.stringify({ query: "{ viewer { userId } }" }), token, headers: { "content-type": "text/plain" } });
    expect(textPlain.status).toBeGreaterThanOrEqual(400);
    expect(textPlain.status).toBeLessThan(500);
    // GET may not run mutations.
    const m = await t.call("GET", `/graphql?query=${encodeURIComponent("mutation { logout }")}`, { token, headers: { "apollo-require-preflight": "1" } });
    expect(m.status).toBe(405);
  });

  it("keeps the REST face's 405, OPTIONS and CORS behaviour on /graphql", async () => {
    const put = await t.call("PUT", "/graphql", { body: {} });
    expect(put.status).toBe(405);
    expect(put.json.errcode).toBe("M_UNRECOGNIZED");
    expect((await t.call("DELETE", "/graphql")).status).toBe(405);
    const opt = await t.call("OPTIONS", "/graphql");
    expect(opt.status).toBe(200);
    expect(opt.headers.get("access-control-allow-origin")).toBe("*");
    const r = await t.call("POST", "/graphql", { body: { query: "{ viewer { userId } }" }, token });
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
    expect(r.headers.get("content-type")).toMatch(/json/);
  });

  it("reads the profile once per request (DataLoader)", async () => {
    const users = t.hs.services.users;
    const original = users.getProfile.bind(users);
    let reads = 0;
    users.getProfile = (...args: Parameters<typeof original>) => { reads++; return original(...args); };
    try {
      const r = await gql(t, "{ a: viewer { displayName avatarUrl } b: viewer { displayName } }", undefined, token);
      expect(r.body).toEqual({ data: { a: { displayName: "bob", avatarUrl: null }, b: { displayName: "bob" } } });
      expect(reads).toBe(1);
      // A mutation drops what the request had loaded: its result shows the new value.
      reads = 0;
      const m = await gql(t, `{ viewer { displayName } }`, undefined, token);
      expect(m.body.data.viewer.displayName).toBe("bob");
      const both = await gql(t, `mutation { a: setDisplayName(displayName: "Bob 1") { displayName } b: setDisplayName(displayName: "Bob 2") { displayName } }`, undefined, token);
      expect(both.body.data).toEqual({ a: { displayName: "Bob 1" }, b: { displayName: "Bob 2" } });
    } finally {
      users.getProfile = original;
    }
  });
});

describe("GraphQL registration with registration_requires_token", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ config: { registration_requires_token: true } });
    await t.hs.services.registrationTokens.create({ token: "let-me-in", usesAllowed: 1, expiryTime: null });
  });
  afterAll(async () => { await t?.close(); });

  it("asks for the token, refuses a wrong one, registers with the right one once", async () => {
    const none = await gql(t, REGISTER, { input: { username: "frank", password: "frank-pw" } });
    expect(errcode(none.body)).toBe("M_UNAUTHORIZED");
    expect(none.body.errors![0]!.extensions!.flows).toEqual([{ stages: ["m.login.registration_token"] }]);

    const wrong = await gql(t, REGISTER, { input: { username: "frank", password: "frank-pw", registrationToken: "nope" } });
    expect(errcode(wrong.body)).toBe("M_UNAUTHORIZED");
    expect(wrong.body.errors![0]!.message).toBe("Invalid registration token");

    const ok = await gql(t, REGISTER, { input: { username: "frank", password: "frank-pw", registrationToken: "let-me-in" } });
    expect(ok.body.errors).toBeUndefined();
    expect(ok.body.data.register.userId).toBe("@frank:weft.test");

    const usedUp = await gql(t, REGISTER, { input: { username: "gina", password: "gina-pw", registrationToken: "let-me-in" } });
    expect(errcode(usedUp.body)).toBe("M_UNAUTHORIZED");
    expect((await gql(t, "{ viewer { userId } }", undefined, ok.body.data.register.accessToken)).body.data.viewer.userId).toBe("@frank:weft.test");
  });
});
