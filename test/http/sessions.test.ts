// Login, logout, whoami, refresh, password change, deactivation and login tokens over HTTP,
// on SQLite and PostgreSQL. Token expiry runs on a test clock, not on sleeps.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeAppServiceFile } from "../helpers/appservice.ts";
import { backends, startTestServer, TestClock, type TestServer } from "../helpers/server.ts";
import { loginUser, registerUser } from "../helpers/users.ts";

const asFile = writeAppServiceFile({ id: "bridge", asToken: "as-secret-token", hsToken: "hs-secret-token", senderLocalpart: "bridgebot", userRegex: "@bridge_.*:weft\\.test" });

describe.each(backends())("sessions on %s", (backend) => {
  let t: TestServer;
  const clock = new TestClock();
  beforeAll(async () => {
    t = await startTestServer({
      backend,
      clock,
      config: {
        refreshable_access_token_lifetime: "5m",
        login_via_existing_session: { enabled: true },
        app_service_config_files: [asFile],
      },
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("lists the login flows", async () => {
    const res = await t.call("GET", "/_matrix/client/v3/login");
    const types = res.json.flows.map((f: { type: string }) => f.type);
    expect(types).toEqual(expect.arrayContaining(["m.login.password", "m.login.token", "m.login.application_service"]));
    expect(res.json.flows.find((f: { type: string }) => f.type === "m.login.token").get_login_token).toBe(true);
  });

  it("logs in by identifier, legacy user field and full user id, on every prefix", async () => {
    await registerUser(t, "dora", "pw-dora");
    const a = await loginUser(t, "dora", "pw-dora");
    expect(a.user_id).toBe("@dora:weft.test");
    const b = await t.call("POST", "/_matrix/client/r0/login", { body: { type: "m.login.password", user: "DORA", password: "pw-dora" } });
    expect(b.status).toBe(200);
    expect(b.json.well_known).toEqual({ "m.homeserver": { base_url: t.config.public_baseurl } });
    const c = await t.call("POST", "/_proto/client/v3/login", {
      body: { type: "m.login.password", identifier: { type: "m.id.user", user: "@dora:weft.test" }, password: "pw-dora" },
    });
    expect(c.status).toBe(200);
    expect(new Set([a.device_id, b.json.device_id, c.json.device_id]).size).toBe(3);
  });

  it("refuses bad logins with the spec's errors", async () => {
    await registerUser(t, "eve", "right");
    const cases: [Record<string, unknown>, number, string][] = [
      [{ type: "m.login.password", user: "eve", password: "wrong" }, 403, "M_FORBIDDEN"],
      [{ type: "m.login.password", user: "nobody", password: "x" }, 403, "M_FORBIDDEN"],
      [{ type: "m.login.password", identifier: { type: "m.id.user", user: "@eve:other.server" }, password: "right" }, 403, "M_FORBIDDEN"],
      [{ type: "m.login.password", identifier: { type: "m.id.thirdparty", medium: "email", address: "e@x" }, password: "right" }, 403, "M_FORBIDDEN"],
      [{ type: "m.login.password", identifier: { type: "m.id.weird" }, password: "right" }, 400, "M_UNKNOWN"],
      [{ type: "m.login.password", password: "right" }, 400, "M_MISSING_PARAM"],
      [{ type: "m.login.password", user: "eve", password: 5 }, 400, "M_BAD_JSON"],
      [{ type: "m.login.fancy", user: "eve" }, 400, "M_UNKNOWN"],
      [{ user: "eve", password: "right" }, 400, "M_MISSING_PARAM"],
      [{ type: "m.login.token", token: "wfl_bogus" }, 403, "M_FORBIDDEN"],
      [{ type: "m.login.password", user: "eve", password: "right", refresh_token: "yes" }, 400, "M_BAD_JSON"],
    ];
    for (const [body, status, errcode] of cases) {
      const res = await t.call("POST", "/_matrix/client/v3/login", { body });
      expect([res.status, res.json.errcode], JSON.stringify(body)).toEqual([status, errcode]);
    }
    expect((await t.call("POST", "/_matrix/client/v3/login", { raw: "nope" })).json.errcode).toBe("M_NOT_JSON");
  });

  it("reuses a device when its id is given", async () => {
    await registerUser(t, "fred");
    const a = await loginUser(t, "fred", "password", { device_id: "FREDPHONE" });
    const b = await loginUser(t, "fred", "password", { device_id: "FREDPHONE" });
    expect(a.device_id).toBe("FREDPHONE");
    expect(b.device_id).toBe("FREDPHONE");
    expect(await t.hs.services.db.device.count({ where: { userId: "@fred:weft.test", deviceId: "FREDPHONE" } })).toBe(1);
  });

  it("authenticates by header or query parameter and says why a token fails", async () => {
    const s = await registerUser(t, "gina");
    expect((await t.call("GET", `/_matrix/client/v3/account/whoami?access_token=${s.access_token}`)).json.user_id).toBe("@gina:weft.test");
    const missing = await t.call("GET", "/_matrix/client/v3/account/whoami");
    expect([missing.status, missing.json.errcode]).toEqual([401, "M_MISSING_TOKEN"]);
    const unknown = await t.call("GET", "/_matrix/client/v3/account/whoami", { token: "wft_nope" });
    expect([unknown.status, unknown.json.errcode, unknown.json.soft_logout]).toEqual([401, "M_UNKNOWN_TOKEN", false]);
  });

  it("logs out one session, or all of them", async () => {
    await registerUser(t, "hank");
    const a = await loginUser(t, "hank");
    const b = await loginUser(t, "hank");
    const c = await loginUser(t, "hank");
    expect((await t.call("POST", "/_matrix/client/v3/logout", { token: a.access_token, body: {} })).status).toBe(200);
    const dead = await t.call("GET", "/_matrix/client/v3/account/whoami", { token: a.access_token });
    expect([dead.status, dead.json.errcode, dead.json.soft_logout]).toEqual([401, "M_UNKNOWN_TOKEN", false]);
    expect(await t.hs.services.db.device.count({ where: { userId: "@hank:weft.test", deviceId: a.device_id } })).toBe(0);
    expect((await t.call("GET", "/_matrix/client/v3/account/whoami", { token: b.access_token })).status).toBe(200);
    expect((await t.call("POST", "/_matrix/client/r0/logout/all", { token: b.access_token })).status).toBe(200);
    for (const s of [b, c]) expect((await t.call("GET", "/_matrix/client/v3/account/whoami", { token: s.access_token })).status).toBe(401);
    expect(await t.hs.services.db.device.count({ where: { userId: "@hank:weft.test" } })).toBe(0);
  });

  it("rotates refresh tokens; expired access tokens are soft-logged-out", async () => {
    await registerUser(t, "ivy");
    const s = await loginUser(t, "ivy", "password", { refresh_token: true });
    expect(s.refresh_token).toMatch(/^wfr_/);
    expect(s.expires_in_ms).toBe(5 * 60_000);

    const missing = await t.call("POST", "/_matrix/client/v3/refresh", { body: {} });
    expect([missing.status, missing.json.errcode]).toEqual([400, "M_MISSING_PARAM"]);
    expect((await t.call("POST", "/_matrix/client/v3/refresh", { body: { refresh_token: 1 } })).json.errcode).toBe("M_BAD_JSON");
    const unknown = await t.call("POST", "/_matrix/client/v1/refresh", { body: { refresh_token: "wfr_nope" } });
    expect([unknown.status, unknown.json.errcode]).toEqual([401, "M_UNKNOWN_TOKEN"]);

    // The first access token is used (and so cached) before the refresh.
    expect((await t.call("GET", "/_matrix/client/v3/account/whoami", { token: s.access_token })).status).toBe(200);
    const r1 = await t.call("POST", "/_matrix/client/v3/refresh", { body: { refresh_token: s.refresh_token } });
    expect(r1.status).toBe(200);
    expect(r1.json.refresh_token).not.toBe(s.refresh_token);
    // Until the new access token is used, the old refresh token may be retried (a lost response).
    const retry = await t.call("POST", "/_matrix/client/v3/refresh", { body: { refresh_token: s.refresh_token } });
    expect(retry.status).toBe(200);
    expect((await t.call("GET", "/_matrix/client/v3/account/whoami", { token: retry.json.access_token })).json.device_id).toBe(s.device_id);
    const reused = await t.call("POST", "/_matrix/client/v3/refresh", { body: { refresh_token: s.refresh_token } });
    expect([reused.status, reused.json.errcode]).toEqual([401, "M_UNKNOWN_TOKEN"]);
    // With the new token used, the old access token went with its refresh token, cached or not.
    const old = await t.call("GET", "/_matrix/client/v3/account/whoami", { token: s.access_token });
    expect([old.status, old.json.errcode]).toEqual([401, "M_UNKNOWN_TOKEN"]);

    clock.advance(5 * 60_000 + 1);
    const expired = await t.call("GET", "/_matrix/client/v3/account/whoami", { token: retry.json.access_token });
    expect([expired.status, expired.json.errcode, expired.json.soft_logout]).toEqual([401, "M_UNKNOWN_TOKEN", true]);
    const r2 = await t.call("POST", "/_matrix/client/v3/refresh", { body: { refresh_token: retry.json.refresh_token } });
    expect(r2.status).toBe(200);
    expect((await t.call("GET", "/_matrix/client/v3/account/whoami", { token: r2.json.access_token })).status).toBe(200);
  });

  it("changes a password behind m.login.password and logs out other devices", async () => {
    const s = await registerUser(t, "jack", "old-pw");
    const other = await loginUser(t, "jack", "old-pw");
    const first = await t.call("POST", "/_matrix/client/v3/account/password", { token: s.access_token, body: { new_password: "new-pw" } });
    expect(first.status).toBe(401);
    expect(first.json.flows).toEqual([{ stages: ["m.login.password"] }]);
    const auth = (password: string) => ({ type: "m.login.password", identifier: { type: "m.id.user", user: "jack" }, password, session: first.json.session });
    const wrong = await t.call("POST", "/_matrix/client/v3/account/password", { token: s.access_token, body: { new_password: "new-pw", auth: auth("nope") } });
    expect([wrong.status, wrong.json.errcode, wrong.json.session]).toEqual([401, "M_FORBIDDEN", first.json.session]);
    const ok = await t.call("POST", "/_matrix/client/v3/account/password", { token: s.access_token, body: { new_password: "new-pw", auth: auth("old-pw") } });
    expect(ok.status).toBe(200);
    expect((await t.call("GET", "/_matrix/client/v3/account/whoami", { token: s.access_token })).status).toBe(200);
    expect((await t.call("GET", "/_matrix/client/v3/account/whoami", { token: other.access_token })).status).toBe(401);
    expect((await t.call("POST", "/_matrix/client/v3/login", { body: { type: "m.login.password", user: "jack", password: "old-pw" } })).status).toBe(403);
    await loginUser(t, "jack", "new-pw");
    const noPw = await t.call("POST", "/_matrix/client/v3/account/password", { token: s.access_token, body: {} });
    expect([noPw.status, noPw.json.errcode]).toEqual([400, "M_MISSING_PARAM"]);
  });

  it("keeps other devices when logout_devices is false", async () => {
    const s = await registerUser(t, "kate", "pw1");
    const other = await loginUser(t, "kate", "pw1");
    const first = await t.call("POST", "/_matrix/client/v3/account/password", { token: s.access_token, body: { new_password: "pw2", logout_devices: false } });
    const ok = await t.call("POST", "/_matrix/client/v3/account/password", {
      token: s.access_token,
      body: { new_password: "pw2", logout_devices: false, auth: { type: "m.login.password", user: "kate", password: "pw1", session: first.json.session } },
    });
    expect(ok.status).toBe(200);
    expect((await t.call("GET", "/_matrix/client/v3/account/whoami", { token: other.access_token })).status).toBe(200);
  });

  it("refuses to re-authenticate as someone else", async () => {
    await registerUser(t, "mallory", "m-pw");
    const s = await registerUser(t, "liam", "l-pw");
    const first = await t.call("POST", "/_matrix/client/v3/account/password", { token: s.access_token, body: { new_password: "x" } });
    const res = await t.call("POST", "/_matrix/client/v3/account/password", {
      token: s.access_token,
      body: { new_password: "x", auth: { type: "m.login.password", user: "mallory", password: "m-pw", session: first.json.session } },
    });
    expect(res.status).toBe(403); // as Synapse: another user's credentials are no UIA challenge
    expect(res.json.errcode).toBe("M_FORBIDDEN");
    await loginUser(t, "liam", "l-pw");
  });

  it("deactivates an account for good", async () => {
    const s = await registerUser(t, "nina", "n-pw");
    const first = await t.call("POST", "/_matrix/client/v3/account/deactivate", { token: s.access_token, body: { erase: true } });
    expect(first.status).toBe(401);
    const done = await t.call("POST", "/_matrix/client/v3/account/deactivate", {
      token: s.access_token,
      body: { erase: true, auth: { type: "m.login.password", user: "nina", password: "n-pw", session: first.json.session } },
    });
    expect(done.status).toBe(200);
    expect(done.json).toEqual({ id_server_unbind_result: "no-support" });
    expect((await t.call("GET", "/_matrix/client/v3/account/whoami", { token: s.access_token })).status).toBe(401);
    expect((await t.call("POST", "/_matrix/client/v3/login", { body: { type: "m.login.password", user: "nina", password: "n-pw" } })).status).toBe(403);
    expect((await t.call("GET", "/_matrix/client/v3/register/available?username=nina")).json.errcode).toBe("M_USER_IN_USE");
    const row = await t.hs.services.db.user.findUnique({ where: { userId: "@nina:weft.test" } });
    expect([row?.deactivated, row?.erased, row?.passwordHash]).toEqual([true, true, null]);
  });

  it("issues single-use login tokens to an existing session", async () => {
    const s = await registerUser(t, "olga", "o-pw");
    const first = await t.call("POST", "/_matrix/client/v1/login/get_token", { token: s.access_token, body: {} });
    expect(first.status).toBe(401);
    const got = await t.call("POST", "/_matrix/client/v1/login/get_token", {
      token: s.access_token,
      body: { auth: { type: "m.login.password", user: "olga", password: "o-pw", session: first.json.session } },
    });
    expect(got.status).toBe(200);
    expect(got.json.expires_in_ms).toBeGreaterThan(0);
    const login = await t.call("POST", "/_matrix/client/v3/login", { body: { type: "m.login.token", token: got.json.login_token } });
    expect(login.status).toBe(200);
    expect(login.json.user_id).toBe("@olga:weft.test");
    const again = await t.call("POST", "/_matrix/client/v3/login", { body: { type: "m.login.token", token: got.json.login_token } });
    expect([again.status, again.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
  });

  it("lets an application service register and log in its users, and only with its as_token", async () => {
    const noToken = await t.call("POST", "/_matrix/client/v3/register", { body: { type: "m.login.application_service", username: "bridge_one" } });
    expect([noToken.status, noToken.json.errcode]).toEqual([401, "M_MISSING_TOKEN"]);
    const badToken = await t.call("POST", "/_matrix/client/v3/register", { token: "nope", body: { type: "m.login.application_service", username: "bridge_one" } });
    expect([badToken.status, badToken.json.errcode]).toEqual([401, "M_UNKNOWN_TOKEN"]);
    const outside = await t.call("POST", "/_matrix/client/v3/register", { token: "as-secret-token", body: { type: "m.login.application_service", username: "plain" } });
    expect([outside.status, outside.json.errcode]).toEqual([400, "M_EXCLUSIVE"]);
    const reg = await t.call("POST", "/_matrix/client/v3/register", {
      token: "as-secret-token",
      body: { type: "m.login.application_service", username: "bridge_one", inhibit_login: true },
    });
    expect(reg.status).toBe(200);
    expect(reg.json.user_id).toBe("@bridge_one:weft.test");
    // An ordinary user may not take a name in the exclusive namespace.
    const human = await t.call("POST", "/_matrix/client/v3/register", { body: { username: "bridge_two", password: "pw" } });
    expect(human.json.errcode).toBe("M_EXCLUSIVE");

    const body = { type: "m.login.application_service", identifier: { type: "m.id.user", user: "bridge_one" } };
    const noAs = await t.call("POST", "/_matrix/client/v3/login", { body });
    expect([noAs.status, noAs.json.errcode]).toEqual([401, "M_MISSING_TOKEN"]);
    const wrongAs = await t.call("POST", "/_matrix/client/v3/login", { body, token: "wrong" });
    expect([wrongAs.status, wrongAs.json.errcode]).toEqual([401, "M_UNKNOWN_TOKEN"]);
    const ok = await t.call("POST", "/_matrix/client/v3/login", { body, token: "as-secret-token" });
    expect(ok.status).toBe(200);
    expect((await t.call("GET", "/_matrix/client/v3/account/whoami", { token: ok.json.access_token })).json.user_id).toBe("@bridge_one:weft.test");
    // The as_token itself authenticates as the sender, or as a namespaced user via ?user_id=.
    expect((await t.call("GET", "/_matrix/client/v3/account/whoami", { token: "as-secret-token" })).json.user_id).toBe("@bridgebot:weft.test");
    const masq = await t.call("GET", "/_matrix/client/v3/account/whoami?user_id=%40bridge_one%3Aweft.test", { token: "as-secret-token" });
    expect(masq.json.user_id).toBe("@bridge_one:weft.test");
  });
});

describe("login rate limits", () => {
  it("answers 429 with retry_after_ms and Retry-After once the burst is spent", async () => {
    const t = await startTestServer({ config: { rc_login: { address: { per_second: 0.001, burst_count: 2 } } } });
    try {
      await registerUser(t, "pat");
      await loginUser(t, "pat");
      await loginUser(t, "pat");
      const res = await t.call("POST", "/_matrix/client/v3/login", { body: { type: "m.login.password", user: "pat", password: "password" } });
      expect(res.status).toBe(429);
      expect(res.json.errcode).toBe("M_LIMIT_EXCEEDED");
      expect(res.json.retry_after_ms).toBeGreaterThan(1000);
      expect(Number(res.headers.get("retry-after"))).toBe(Math.ceil(res.json.retry_after_ms / 1000));
    } finally {
      await t.close();
    }
  });

  it("counts failed password attempts per account", async () => {
    const t = await startTestServer({ config: { rc_login: { failed_attempts: { per_second: 0.001, burst_count: 2 } } } });
    try {
      await registerUser(t, "quinn");
      for (let i = 0; i < 2; i++) {
        const bad = await t.call("POST", "/_matrix/client/v3/login", { body: { type: "m.login.password", user: "quinn", password: "bad" } });
        expect(bad.status).toBe(403);
      }
      const limited = await t.call("POST", "/_matrix/client/v3/login", { body: { type: "m.login.password", user: "quinn", password: "password" } });
      expect(limited.status).toBe(429);
    } finally {
      await t.close();
    }
  });
});
