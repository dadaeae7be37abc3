// matrix-js-sdk 43 against a real Weft server (SQLite and PostgreSQL), with no sync loop and no mocks:
// registration through UIA, password login, whoami, profile, devices, refresh tokens and soft logout,
// and logout — once per client prefix (/_matrix/client/v3, /_matrix/client/r0, /_proto/client/v3).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as sdk from "matrix-js-sdk";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { CLIENT_PREFIXES, expectMatrixError, makeClient, pollUntil, registerWithDummy, type ClientPrefixPath } from "../helpers/js-sdk.ts";

/**
 * Per-request options naming a prefix. (The SDK's type requires `priority`, from the DOM RequestInit
 * as Node's types declare it; the SDK itself treats it as optional.)
 */
const requestOpts = (prefix: string) => ({ prefix }) as sdk.IRequestOpts;

/** Refreshable access tokens live this long here, so expiry can be observed within a test. */
const REFRESHABLE_LIFETIME_MS = 2000;

describe.each(backends())("matrix-js-sdk on %s", (backend) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ backend, config: { refreshable_access_token_lifetime: `${REFRESHABLE_LIFETIME_MS}ms` } });
  });
  afterAll(async () => { await t?.close(); });

  describe.each(CLIENT_PREFIXES)("with prefix %s", (prefix: ClientPrefixPath) => {
    const username = `js${prefix.replace(/[^a-z0-9]/g, "")}`;
    const password = "correct horse battery staple";
    let userId: string;
    let deviceId: string;
    let client: sdk.MatrixClient;

    it("registers through the m.login.dummy UIA flow", async () => {
      const anon = makeClient(t.baseUrl, undefined, prefix);
      const { flows, response } = await registerWithDummy(anon, username, password, { initial_device_display_name: "registered" });
      expect(flows.some((f) => f.length === 1 && f[0] === "m.login.dummy"), JSON.stringify(flows)).toBe(true);
      expect(response.user_id).toBe(`@${username}:weft.test`);
      expect(response.access_token).toBeTruthy();
      expect(response.device_id).toBeTruthy();
      userId = response.user_id;
      const reg = makeClient(t.baseUrl, { userId, accessToken: response.access_token!, deviceId: response.device_id! }, prefix);
      expect((await reg.whoami()).user_id).toBe(userId);
    });

    it("logs in with a password (m.id.user) and whoamis", async () => {
      const anon = makeClient(t.baseUrl, undefined, prefix);
      const login = await anon.loginRequest({ type: "m.login.password", identifier: { type: "m.id.user", user: username }, password, initial_device_display_name: "laptop" });
      expect(login.user_id).toBe(userId);
      deviceId = login.device_id;
      client = makeClient(t.baseUrl, { userId, accessToken: login.access_token, deviceId }, prefix);
      const me = await client.whoami();
      expect(me).toMatchObject({ user_id: userId, device_id: deviceId });
      // The same call with the prefix named on the request rather than on the client.
      const direct = await client.http.authedRequest<{ user_id: string }>(sdk.Method.Get, "/account/whoami", undefined, undefined, requestOpts(prefix));
      expect(direct.user_id).toBe(userId);
      // A wrong password is refused.
      const bad = await expectMatrixError(anon.loginRequest({ type: "m.login.password", identifier: { type: "m.id.user", user: username }, password: "nope" }));
      expect([bad.httpStatus, bad.errcode]).toEqual([403, "M_FORBIDDEN"]);
    });

    it("sets a display name that getProfileInfo then sees", async () => {
      await client.setDisplayName(`Name via ${prefix}`);
      expect((await client.getProfileInfo(userId)).displayname).toBe(`Name via ${prefix}`);
      expect((await client.getProfileInfo(userId, "displayname")).displayname).toBe(`Name via ${prefix}`);
    });

    it("lists devices and renames one", async () => {
      const { devices } = await client.getDevices();
      expect(devices.map((d) => d.device_id)).toContain(deviceId);
      expect(devices).toHaveLength(2);
      expect(devices.find((d) => d.device_id === deviceId)?.display_name).toBe("laptop");
      await client.setDeviceDetails(deviceId, { display_name: "renamed laptop" });
      expect((await client.getDevice(deviceId)).display_name).toBe("renamed laptop");
      expect((await client.getDevices()).devices.find((d) => d.device_id === deviceId)?.display_name).toBe("renamed laptop");
    });

    it("refreshes a token, and an expired access token is a soft logout", async () => {
      const anon = makeClient(t.baseUrl, undefined, prefix);
      const login = await anon.loginRequest({ type: "m.login.password", identifier: { type: "m.id.user", user: username }, password, refresh_token: true });
      expect(login.refresh_token).toBeTruthy();
      expect(login.expires_in_ms).toBeGreaterThan(0);
      expect(login.expires_in_ms).toBeLessThanOrEqual(REFRESHABLE_LIFETIME_MS);
      const c1 = makeClient(t.baseUrl, { userId, accessToken: login.access_token, deviceId: login.device_id }, prefix);
      // The SDK's refreshToken() names /_matrix/client/v3 itself; under /_proto it is called directly.
      const refreshed = prefix.startsWith("/_proto")
        ? await c1.http.authedRequest<sdk.IRefreshTokenResponse>(sdk.Method.Post, "/refresh", undefined, { refresh_token: login.refresh_token }, requestOpts(prefix))
        : await c1.refreshToken(login.refresh_token!);
      expect(refreshed.access_token).not.toBe(login.access_token);
      expect(refreshed.refresh_token).toBeTruthy();
      const c2 = makeClient(t.baseUrl, { userId, accessToken: refreshed.access_token, deviceId: login.device_id }, prefix);
      expect(await c2.whoami()).toMatchObject({ user_id: userId, device_id: login.device_id });
      // A used refresh token cannot be used again once its successor was used.
      const reused = await expectMatrixError(c1.refreshToken(login.refresh_token!));
      expect([reused.httpStatus, reused.errcode]).toEqual([401, "M_UNKNOWN_TOKEN"]);

      // Wait (bounded) until the new access token expires: then 401 M_UNKNOWN_TOKEN, soft_logout true.
      const expired = await pollUntil(async () => {
        try {
          await c2.whoami();
          return undefined;
        } catch (e) {
          return e;
        }
      }, REFRESHABLE_LIFETIME_MS + 8000, "the refreshed access token to expire");
      expect(expired).toBeInstanceOf(sdk.MatrixError);
      const err = expired as sdk.MatrixError;
      expect([err.httpStatus, err.errcode, err.data.soft_logout]).toEqual([401, "M_UNKNOWN_TOKEN", true]);

      // The refresh token still works after a soft logout: the device comes back.
      const again = await c2.refreshToken(refreshed.refresh_token!);
      const c3 = makeClient(t.baseUrl, { userId, accessToken: again.access_token, deviceId: login.device_id }, prefix);
      expect((await c3.whoami()).device_id).toBe(login.device_id);
      await c3.logout(true);
    });

    it("logs out; the token then fails with M_UNKNOWN_TOKEN", async () => {
      await client.logout(true);
      const err = await expectMatrixError(client.whoami());
      expect([err.httpStatus, err.errcode]).toEqual([401, "M_UNKNOWN_TOKEN"]);
      expect(err.data.soft_logout).not.toBe(true);
    });
  });
});
