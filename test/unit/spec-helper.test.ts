// Tests the spec-conformance helper (test/helpers/spec.ts) on hand-made bodies, then uses it on a live
// server: registration (UIA 401 and 200), login, whoami, versions and the server key document must all
// match the Matrix specification's OpenAPI response schemas.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileAllResponses, expectMatchesSpec, findOperation, normalizeRequestPath, operationCount, specLoadMs } from "../helpers/spec.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

describe("spec helper", () => {
  it("indexes every operation of the five APIs", () => {
    expect(operationCount()).toBe(235);
    expect(operationCount("client-server")).toBeGreaterThan(100);
    expect(operationCount("server-server")).toBeGreaterThan(20);
    expect(specLoadMs()).toBeGreaterThan(0);
  });

  it("compiles every documented JSON response schema", () => {
    expect(compileAllResponses()).toBeGreaterThan(400);
  });

  it("accepts a good whoami body and rejects one without user_id", () => {
    expectMatchesSpec({ status: 200, json: { user_id: "@alice:weft.test", device_id: "ABC", is_guest: false } }, "GET", "/_matrix/client/v3/account/whoami");
    expect(() => expectMatchesSpec({ status: 200, json: { device_id: "ABC" } }, "GET", "/_matrix/client/v3/account/whoami")).toThrow(/user_id/);
    expect(() => expectMatchesSpec({ status: 200, json: { user_id: "alice" } }, "GET", "/_matrix/client/v3/account/whoami")).toThrow(/pattern|format/);
  });

  it("reads r0 as v3, /_proto as /_matrix, and ignores the query string", () => {
    expect(normalizeRequestPath("/_proto/client/r0/account/whoami?user_id=x")).toBe("/_matrix/client/v3/account/whoami");
    expect(findOperation("GET", "/_matrix/client/r0/account/whoami")?.operationId).toBe("getTokenOwner");
    expect(findOperation("GET", "/_proto/client/v3/account/whoami")?.operationId).toBe("getTokenOwner");
    expect(findOperation("GET", "/_proto/key/v2/server")?.operationId).toBe("getServerKey");
    expect(findOperation("GET", "/_matrix/client/v3/profile/%40alice%3Aweft.test/displayname")?.template).toBe("/_matrix/client/v3/profile/{userId}/{keyName}");
    expectMatchesSpec({ status: 200, json: { user_id: "@a:b" } }, "GET", "/_proto/client/r0/account/whoami?access_token=x");
    expect(() => expectMatchesSpec({ status: 200, json: {} }, "GET", "/_proto/client/r0/account/whoami")).toThrow(/user_id/);
  });

  it("throws on an unknown operation or an undocumented status", () => {
    expect(() => expectMatchesSpec({ status: 200, json: {} }, "GET", "/_matrix/client/v3/nope")).toThrow(/no operation documented/);
    expect(() => expectMatchesSpec({ status: 200, json: {} }, "DELETE", "/_matrix/client/v3/account/whoami")).toThrow(/no operation documented/);
    expect(() => expectMatchesSpec({ status: 418, json: {} }, "GET", "/_matrix/client/v3/account/whoami")).toThrow(/status 418 is not documented/);
  });
});

describe("live responses match the spec", () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer(); });
  afterAll(async () => { await t?.close(); });

  it("register (UIA 401, then 200), login, whoami, versions, key/v2/server", async () => {
    const checked: string[] = [];
    const check = async (method: string, path: string, opts: { body?: unknown; token?: string } = {}, status = 200) => {
      const res = await t.call(method, path, opts);
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.json)}`).toBe(status);
      expectMatchesSpec(res, method, path);
      checked.push(`${method} ${path} ${res.status}`);
      return res.json;
    };
    const uia = await check("POST", "/_matrix/client/v3/register", { body: { username: "spec", password: "pw" } }, 401);
    expect(uia.flows.length).toBeGreaterThan(0);
    const reg = await check("POST", "/_matrix/client/v3/register", { body: { username: "spec", password: "pw", auth: { type: "m.login.dummy", session: uia.session } } });
    await check("GET", "/_matrix/client/v3/login");
    const login = await check("POST", "/_matrix/client/v3/login", { body: { type: "m.login.password", identifier: { type: "m.id.user", user: "spec" }, password: "pw" } });
    await check("POST", "/_proto/client/r0/login", { body: { type: "m.login.password", identifier: { type: "m.id.user", user: "spec" }, password: "pw", refresh_token: true } });
    await check("GET", "/_matrix/client/v3/account/whoami", { token: reg.access_token });
    await check("GET", "/_proto/client/r0/account/whoami", { token: login.access_token });
    await check("GET", "/_matrix/client/versions");
    await check("GET", "/_matrix/key/v2/server");
    await check("GET", "/_matrix/client/v3/account/whoami", { token: "nope" }, 401);
    expect(checked).toHaveLength(10);
  });

  it("refresh, devices, profile, capabilities, logout and error bodies", async () => {
    const check = async (method: string, path: string, opts: { body?: unknown; token?: string } = {}, status = 200) => {
      const res = await t.call(method, path, opts);
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.json)}`).toBe(status);
      expectMatchesSpec(res, method, path);
      return res.json;
    };
    const login = await check("POST", "/_matrix/client/v3/login", { body: { type: "m.login.password", identifier: { type: "m.id.user", user: "spec" }, password: "pw", refresh_token: true } });
    const refreshed = await check("POST", "/_matrix/client/v3/refresh", { body: { refresh_token: login.refresh_token } });
    await check("POST", "/_matrix/client/v3/refresh", { body: { refresh_token: "nope" } }, 401);
    const token = refreshed.access_token as string;
    const me = encodeURIComponent("@spec:weft.test");
    await check("GET", "/_matrix/client/v3/devices", { token });
    await check("GET", `/_matrix/client/v3/devices/${login.device_id}`, { token });
    await check("PUT", `/_matrix/client/v3/devices/${login.device_id}`, { token, body: { display_name: "spec device" } });
    // The spec documents this 404 without a body schema, so only the status is checked here.
    expect((await t.call("GET", "/_matrix/client/v3/devices/NOSUCHDEVICE", { token })).status).toBe(404);
    await check("PUT", `/_matrix/client/v3/profile/${me}/displayname`, { token, body: { displayname: "Spec" } });
    await check("GET", `/_matrix/client/v3/profile/${me}`, { token });
    await check("GET", `/_matrix/client/v3/profile/${me}/displayname`, { token });
    await check("GET", `/_matrix/client/v3/profile/${encodeURIComponent("@nobody:weft.test")}`, { token }, 404);
    await check("GET", "/_matrix/client/v3/capabilities", { token });
    await check("GET", "/_matrix/client/v3/register/available?username=someone-else");
    await check("POST", "/_matrix/client/v3/login", { body: { type: "m.login.password", identifier: { type: "m.id.user", user: "spec" }, password: "wrong" } }, 403);
    await check("POST", "/_matrix/client/v3/logout", { token });
    await check("GET", "/_matrix/client/v3/account/whoami", { token }, 401);
  });
});
