// POST /register, /register/available, guests, UIA session rules, hashing at rest — on SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser } from "../helpers/users.ts";

describe.each(backends())("registration on %s", (backend) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ backend });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("asks for m.login.dummy, then registers with a device and token", async () => {
    const first = await t.call("POST", "/_matrix/client/v3/register", { body: { username: "alice", password: "secret-pw" } });
    expect(first.status).toBe(401);
    expect(first.json.flows).toEqual([{ stages: ["m.login.dummy"] }]);
    expect(typeof first.json.session).toBe("string");
    expect(first.json.errcode).toBeUndefined();
    const done = await t.call("POST", "/_matrix/client/v3/register", {
      body: { username: "alice", password: "secret-pw", initial_device_display_name: "Phone", auth: { type: "m.login.dummy", session: first.json.session } },
    });
    expect(done.status).toBe(200);
    expect(done.json).toMatchObject({ user_id: "@alice:weft.test", home_server: "weft.test" });
    expect(done.json.access_token).toMatch(/^wft_/);
    expect(typeof done.json.device_id).toBe("string");
    const who = await t.call("GET", "/_matrix/client/v3/account/whoami", { token: done.json.access_token });
    expect(who.json).toEqual({ user_id: "@alice:weft.test", device_id: done.json.device_id, is_guest: false });
  });

  it("stores passwords and tokens only as hashes, and no clear password in UIA sessions", async () => {
    const first = await t.call("POST", "/_matrix/client/v3/register", { body: { username: "hashy", password: "clear-text-password" } });
    const session = await t.hs.services.db.uiaSession.findUnique({ where: { sessionId: first.json.session } });
    expect(session?.clientDict).not.toContain("clear-text-password");
    expect(session?.serverData).toContain("$scrypt$");
    const done = await t.call("POST", "/_matrix/client/v3/register", { body: { auth: { type: "m.login.dummy", session: first.json.session } } });
    expect(done.status).toBe(200);
    expect(done.json.user_id).toBe("@hashy:weft.test"); // the username came from the session's stored request
    const user = await t.hs.services.db.user.findUnique({ where: { userId: "@hashy:weft.test" } });
    expect(user?.passwordHash).toMatch(/^\$scrypt\$/);
    expect(user?.passwordHash).not.toContain("clear-text-password");
    const tokens = await t.hs.services.db.accessToken.findMany({ where: { userId: "@hashy:weft.test" } });
    expect(tokens).toHaveLength(1);
    expect(JSON.stringify(tokens, (_k, v) => (typeof v === "bigint" ? String(v) : v))).not.toContain(done.json.access_token);
    // The password given at the first step works.
    const login = await t.call("POST", "/_matrix/client/v3/login", { body: { type: "m.login.password", user: "hashy", password: "clear-text-password" } });
    expect(login.status).toBe(200);
  });

  it("lower-cases usernames and refuses invalid, numeric and taken ones before UIA", async () => {
    const s = await registerUser(t, "Carol");
    expect(s.user_id).toBe("@carol:weft.test");
    for (const [username, errcode] of [
      ["carol", "M_USER_IN_USE"],
      ["bad name!", "M_INVALID_USERNAME"],
      ["12345", "M_INVALID_USERNAME"],
      ["_reserved", "M_INVALID_USERNAME"],
      ["", "M_INVALID_USERNAME"],
    ] as const) {
      const res = await t.call("POST", "/_matrix/client/v3/register", { body: { username, password: "pw" } });
      expect([res.status, res.json.errcode], username).toEqual([400, errcode]);
    }
    const wrongType = await t.call("POST", "/_matrix/client/v3/register", { body: { username: 5, password: "pw" } });
    expect([wrongType.status, wrongType.json.errcode]).toEqual([400, "M_BAD_JSON"]);
  });

  it("rejects an unknown session id without creating a session or a user", async () => {
    const before = await t.hs.services.db.uiaSession.count();
    const res = await t.call("POST", "/_matrix/client/v3/register", {
      body: { username: "ghost", password: "pw", auth: { type: "m.login.dummy", session: "no-such-session" } },
    });
    expect(res.status).toBe(400);
    expect(res.json.errcode).toBe("M_UNKNOWN");
    expect(await t.hs.services.db.uiaSession.count()).toBe(before);
    expect((await t.call("GET", "/_matrix/client/v3/register/available?username=ghost")).json).toEqual({ available: true });
  });

  it("creates one account per UIA session: a retry gets that account again (as Synapse), whatever it asks", async () => {
    const first = await t.call("POST", "/_matrix/client/v3/register", { body: { username: "once", password: "pw" } });
    const auth = { type: "m.login.dummy", session: first.json.session };
    expect((await t.call("POST", "/_matrix/client/v3/register", { body: { username: "once", password: "pw", auth } })).status).toBe(200);
    const again = await t.call("POST", "/_matrix/client/v3/register", { body: { username: "twice", password: "pw", auth } });
    expect([again.status, again.json.user_id]).toEqual([200, "@once:weft.test"]);
    expect(await t.hs.services.users.exists("@twice:weft.test")).toBe(false);
  });

  it("binds a UIA session to the operation that started it", async () => {
    const s = await registerUser(t, "binder");
    const first = await t.call("POST", "/_matrix/client/v3/register", { body: { username: "other", password: "pw" } });
    const res = await t.call("POST", "/_matrix/client/v3/account/password", {
      token: s.access_token,
      body: { new_password: "x", auth: { type: "m.login.password", user: "binder", password: "password", session: first.json.session } },
    });
    expect([res.status, res.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
  });

  it("finishes a session started on r0 under /_proto v3", async () => {
    const first = await t.call("POST", "/_matrix/client/r0/register", { body: { username: "mixed", password: "pw" } });
    const done = await t.call("POST", "/_proto/client/v3/register", {
      body: { username: "mixed", password: "pw", auth: { type: "m.login.dummy", session: first.json.session } },
    });
    expect(done.status).toBe(200);
  });

  it("honours inhibit_login", async () => {
    const first = await t.call("POST", "/_matrix/client/v3/register", { body: { username: "quiet", password: "pw", inhibit_login: true } });
    const done = await t.call("POST", "/_matrix/client/v3/register", {
      body: { username: "quiet", password: "pw", inhibit_login: true, auth: { type: "m.login.dummy", session: first.json.session } },
    });
    expect(done.status).toBe(200);
    expect(done.json).toEqual({ user_id: "@quiet:weft.test", home_server: "weft.test" });
    expect(await t.hs.services.db.device.count({ where: { userId: "@quiet:weft.test" } })).toBe(0);
  });

  it("answers /register/available", async () => {
    await registerUser(t, "taken");
    expect((await t.call("GET", "/_matrix/client/v3/register/available?username=free")).json).toEqual({ available: true });
    const taken = await t.call("GET", "/_matrix/client/r0/register/available?username=taken");
    expect([taken.status, taken.json.errcode]).toEqual([400, "M_USER_IN_USE"]);
    const bad = await t.call("GET", "/_matrix/client/v3/register/available?username=no%20way");
    expect(bad.json.errcode).toBe("M_INVALID_USERNAME");
    const missing = await t.call("GET", "/_matrix/client/v3/register/available");
    expect([missing.status, missing.json.errcode]).toEqual([400, "M_MISSING_PARAM"]);
  });

  it("registers guests who cannot use account management", async () => {
    const res = await t.call("POST", "/_matrix/client/v3/register?kind=guest", { body: {} });
    expect(res.status).toBe(200);
    expect(res.json.user_id).toMatch(/^@\d+:weft\.test$/);
    const who = await t.call("GET", "/_matrix/client/v3/account/whoami", { token: res.json.access_token });
    expect(who.json.is_guest).toBe(true);
    const pw = await t.call("POST", "/_matrix/client/v3/account/password", { token: res.json.access_token, body: { new_password: "x" } });
    expect([pw.status, pw.json.errcode]).toEqual([403, "M_GUEST_ACCESS_FORBIDDEN"]);
    const noBody = await t.call("POST", "/_matrix/client/v3/register?kind=guest");
    expect(noBody.status).toBe(200);
  });

  it("refuses bad bodies and kinds with the spec's errors", async () => {
    expect((await t.call("POST", "/_matrix/client/v3/register", { raw: "{not json" })).json.errcode).toBe("M_NOT_JSON");
    expect((await t.call("POST", "/_matrix/client/v3/register")).json.errcode).toBe("M_NOT_JSON");
    expect((await t.call("POST", "/_matrix/client/v3/register", { raw: "[1,2]" })).json.errcode).toBe("M_BAD_JSON");
    expect((await t.call("POST", "/_matrix/client/v3/register", { body: { password: 12 } })).json.errcode).toBe("M_BAD_JSON");
    const kind = await t.call("POST", "/_matrix/client/v3/register?kind=robot", { body: {} });
    expect([kind.status, kind.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    const auth = await t.call("POST", "/_matrix/client/v3/register", { body: { username: "x1", auth: "nope" } });
    expect(auth.json.errcode).toBe("M_BAD_JSON");
  });
});

describe("registration settings", () => {
  it("refuses registration and guests when disabled", async () => {
    const t = await startTestServer({ config: { enable_registration: false, allow_guest_access: false } });
    try {
      const res = await t.call("POST", "/_matrix/client/v3/register", { body: { username: "x", password: "pw" } });
      expect([res.status, res.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
      const guest = await t.call("POST", "/_matrix/client/v3/register?kind=guest", { body: {} });
      expect([guest.status, guest.json.errcode]).toEqual([403, "M_GUEST_ACCESS_FORBIDDEN"]);
      expect(await t.hs.services.db.user.count()).toBe(0);
    } finally {
      await t.close();
    }
  });

  it("applies the password policy with Synapse's error codes", async () => {
    const t = await startTestServer({
      config: { password_config: { policy: { enabled: true, minimum_length: 8, require_digit: true, require_symbol: true, require_uppercase: true, require_lowercase: true } } },
    });
    try {
      for (const [password, errcode] of [
        ["Ab1!", "M_PASSWORD_TOO_SHORT"],
        ["Abcdefgh!", "M_PASSWORD_NO_DIGIT"],
        ["Abcdefgh1", "M_PASSWORD_NO_SYMBOL"],
        ["abcdefgh1!", "M_PASSWORD_NO_UPPERCASE"],
        ["ABCDEFGH1!", "M_PASSWORD_NO_LOWERCASE"],
      ]) {
        const res = await t.call("POST", "/_matrix/client/v3/register", { body: { username: "pol", password } });
        expect([res.status, res.json.errcode], password).toEqual([400, errcode]);
      }
      expect((await t.call("POST", "/_matrix/client/v3/register", { body: { username: "pol", password: "Abcdefg1!" } })).status).toBe(401);
    } finally {
      await t.close();
    }
  });

  it("rate-limits registration with M_LIMIT_EXCEEDED and Retry-After", async () => {
    const t = await startTestServer({ config: { rc_registration: { per_second: 0.001, burst_count: 2 } } });
    try {
      await registerUser(t, "r1");
      await registerUser(t, "r2");
      const first = await t.call("POST", "/_matrix/client/v3/register", { body: { username: "r3", password: "pw" } });
      expect(first.status).toBe(429);
      expect(first.json.errcode).toBe("M_LIMIT_EXCEEDED");
      expect(first.json.retry_after_ms).toBeGreaterThan(0);
      expect(Number(first.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    } finally {
      await t.close();
    }
  });
});
