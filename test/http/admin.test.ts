// The admin API over HTTP on both prefixes (/_synapse/admin/v1, /_impl/admin/v1): shared-secret
// registration with every error Synapse gives, the registration tokens API, and a token used up by a
// real /register through the m.login.registration_token stage. Runs on SQLite and PostgreSQL.
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";

const PREFIXES = ["/_synapse/admin/v1", "/_impl/admin/v1"] as const;
const SECRET = "test-shared-secret"; // TEST_DEFAULTS' registration_shared_secret

/** Computed here independently of the server's code, from the documented recipe. */
function mac(nonce: string, username: string, password: string, admin: boolean, userType?: string): string {
  const parts = [nonce, username, password, admin ? "admin" : "notadmin", ...(userType ? [userType] : [])];
  return createHmac("sha1", SECRET).update(parts.join("\0")).digest("hex");
}

describe.each(backends())("admin API (%s)", (backend) => {
  let t: TestServer;
  let adminToken: string;
  let userToken: string;

  const nonce = async (prefix: string = PREFIXES[0]) => {
    const r = await t.call("GET", `${prefix}/register`);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    return r.json.nonce as string;
  };

  /** Registers through the shared secret with a correct MAC; `body` overrides fields after the MAC is made. */
  const sharedSecretRegister = async (
    o: { username: string; password?: string; admin?: boolean; userType?: string; displayname?: string; prefix?: string },
    body: Record<string, unknown> = {},
  ) => {
    const prefix = o.prefix ?? PREFIXES[0];
    const n = await nonce(prefix);
    const password = o.password ?? "pw";
    return t.call("POST", `${prefix}/register`, {
      body: {
        nonce: n,
        username: o.username,
        password,
        admin: o.admin ?? false,
        ...(o.userType ? { user_type: o.userType } : {}),
        ...(o.displayname !== undefined ? { displayname: o.displayname } : {}),
        mac: mac(n, o.username, password, o.admin ?? false, o.userType),
        ...body,
      },
    });
  };

  beforeAll(async () => {
    t = await startTestServer({ backend, config: { registration_requires_token: true } });
    const admin = await sharedSecretRegister({ username: "root", admin: true });
    expect(admin.status, JSON.stringify(admin.json)).toBe(200);
    adminToken = admin.json.access_token;
    const user = await sharedSecretRegister({ username: "plain" });
    expect(user.status, JSON.stringify(user.json)).toBe(200);
    userToken = user.json.access_token;
  });
  afterAll(async () => {
    await t?.close();
  });

  describe("shared-secret registration", () => {
    it("hands out a fresh nonce on both prefixes", async () => {
      const [a, b] = [await nonce(PREFIXES[0]), await nonce(PREFIXES[1])];
      expect(a).toMatch(/^[0-9a-f]{16,}$/);
      expect(b).toMatch(/^[0-9a-f]{16,}$/);
      expect(a).not.toBe(b);
    });

    it("registers an admin with a displayname and a session that works", async () => {
      const r = await sharedSecretRegister({ username: "pepper_roni", password: "pizza", admin: true, displayname: "Pepper Roni" });
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      expect(Object.keys(r.json).sort()).toEqual(["access_token", "device_id", "home_server", "user_id"]);
      expect(r.json).toMatchObject({ user_id: "@pepper_roni:weft.test", home_server: "weft.test" });
      expect(typeof r.json.access_token).toBe("string");
      expect(typeof r.json.device_id).toBe("string");

      const who = await t.call("GET", "/_matrix/client/v3/account/whoami", { token: r.json.access_token });
      expect(who.json).toEqual({ user_id: "@pepper_roni:weft.test", is_guest: false, device_id: r.json.device_id });

      const row = await t.hs.services.users.get("@pepper_roni:weft.test");
      expect(row).toMatchObject({ isAdmin: true, isGuest: false, userType: null });
      expect(row!.passwordHash).toMatch(/^\$scrypt\$ln=4,/); // the configured cost (test config: 4)
      expect((await t.hs.services.users.getProfile("@pepper_roni:weft.test"))!.displayname).toBe("Pepper Roni");

      const login = await t.call("POST", "/_matrix/client/v3/login", {
        body: { type: "m.login.password", identifier: { type: "m.id.user", user: "pepper_roni" }, password: "pizza" },
      });
      expect(login.status, JSON.stringify(login.json)).toBe(200);
      expect(login.json.user_id).toBe("@pepper_roni:weft.test");
    });

    it("registers a non-admin on /_impl with a user_type; displayname defaults to the localpart", async () => {
      const r = await sharedSecretRegister({ username: "botty", userType: "bot", prefix: PREFIXES[1] });
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      expect(r.json.user_id).toBe("@botty:weft.test");
      expect(await t.hs.services.users.get("@botty:weft.test")).toMatchObject({ isAdmin: false, userType: "bot" });
      expect((await t.hs.services.users.getProfile("@botty:weft.test"))!.displayname).toBe("botty");
    });

    it.each(PREFIXES)("refuses unknown, reused and expired nonces (%s)", async (prefix) => {
      const unknown = await t.call("POST", `${prefix}/register`, {
        body: { nonce: "nope", username: "x1", password: "pw", admin: false, mac: mac("nope", "x1", "pw", false) },
      });
      expect(unknown.status).toBe(400);
      expect(unknown.json).toEqual({ errcode: "M_UNKNOWN", error: "unrecognised nonce" });

      const n = await nonce(prefix);
      const body = { nonce: n, username: `reuse${prefix.length}`, password: "pw", admin: false, mac: mac(n, `reuse${prefix.length}`, "pw", false) };
      expect((await t.call("POST", `${prefix}/register`, { body })).status).toBe(200);
      const again = await t.call("POST", `${prefix}/register`, { body: { ...body, username: "other" } });
      expect(again.status).toBe(400);
      expect(again.json.errcode).toBe("M_UNKNOWN");
      expect(again.json.error).toBe("unrecognised nonce");

      const old = `old${prefix.length}`;
      await t.hs.services.nonces.create(old, Date.now() - 61_000);
      const expired = await t.call("POST", `${prefix}/register`, {
        body: { nonce: old, username: "x2", password: "pw", admin: false, mac: mac(old, "x2", "pw", false) },
      });
      expect(expired.status).toBe(400);
      expect(expired.json).toEqual({ errcode: "M_UNKNOWN", error: "unrecognised nonce" });
    });

    it.each(PREFIXES)("refuses a wrong MAC with 403 and spends the nonce (%s)", async (prefix) => {
      const n = await nonce(prefix);
      const good = { nonce: n, username: "macuser", password: "pw", admin: false, mac: mac(n, "macuser", "pw", false) };
      const wrongAdmin = await t.call("POST", `${prefix}/register`, { body: { ...good, admin: true } });
      expect(wrongAdmin.status).toBe(403);
      expect(wrongAdmin.json).toEqual({ errcode: "M_FORBIDDEN", error: "HMAC incorrect" });
      const retry = await t.call("POST", `${prefix}/register`, { body: good });
      expect(retry.json.error).toBe("unrecognised nonce");

      const n2 = await nonce(prefix);
      const wrongType = await t.call("POST", `${prefix}/register`, {
        body: { nonce: n2, username: "macuser", password: "pw", admin: false, user_type: "support", mac: mac(n2, "macuser", "pw", false) },
      });
      expect(wrongType.status).toBe(403);
      expect(wrongType.json.errcode).toBe("M_FORBIDDEN");
      expect(await t.hs.services.users.exists("@macuser:weft.test")).toBe(false);
    });

    it.each(PREFIXES)("registers a username with capitals as its lower-cased form, the MAC over it as sent (%s)", async (prefix) => {
      const r = await sharedSecretRegister({ username: `User-UPPER-Shared${prefix.length}`, prefix });
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      expect(r.json.user_id).toBe(`@user-upper-shared${prefix.length}:weft.test`);
      const who = await t.call("GET", "/_matrix/client/v3/account/whoami", { token: r.json.access_token });
      expect(who.json.user_id).toBe(`@user-upper-shared${prefix.length}:weft.test`);
      const again = await sharedSecretRegister({ username: `USER-upper-shared${prefix.length}`, prefix });
      expect(again.status).toBe(400);
      expect(again.json.errcode).toBe("M_USER_IN_USE");
    });

    it.each(PREFIXES)("refuses invalid and taken usernames (%s)", async (prefix) => {
      for (const username of ["Bad Name", "has:colon", "_underscore", "12345", "Bad!UPPER", ""]) {
        const r = await sharedSecretRegister({ username, prefix });
        expect(r.status, username).toBe(400);
        expect(r.json.errcode, username).toBe("M_INVALID_USERNAME");
      }
      const taken = await sharedSecretRegister({ username: "root", prefix });
      expect(taken.status).toBe(400);
      expect(taken.json.errcode).toBe("M_USER_IN_USE");
    });

    it.each(PREFIXES)("refuses missing fields and wrong types (%s)", async (prefix) => {
      for (const field of ["nonce", "username", "password", "mac"]) {
        const n = await nonce(prefix);
        const body: Record<string, unknown> = { nonce: n, username: "fields", password: "pw", admin: false, mac: mac(n, "fields", "pw", false) };
        delete body[field];
        const r = await t.call("POST", `${prefix}/register`, { body });
        expect(r.status, field).toBe(400);
        expect(r.json.errcode, field).toBe("M_MISSING_PARAM");
      }
      const wrongTypes: [string, unknown][] = [["nonce", 5], ["username", 5], ["password", true], ["admin", "yes"], ["displayname", 3], ["user_type", 1], ["mac", {}]];
      for (const [field, value] of wrongTypes) {
        const r = await sharedSecretRegister({ username: "types", prefix }, { [field]: value });
        expect(r.status, field).toBe(400);
        expect(r.json.errcode, field).toBe("M_BAD_JSON");
      }
      const badType = await sharedSecretRegister({ username: "types", userType: "wizard", prefix });
      expect(badType.status).toBe(400);
      expect(badType.json.errcode).toBe("M_INVALID_PARAM");
      const notJson = await t.call("POST", `${prefix}/register`, { raw: "{nope" });
      expect(notJson.status).toBe(400);
      expect(notJson.json.errcode).toBe("M_NOT_JSON");
      expect(await t.hs.services.users.exists("@types:weft.test")).toBe(false);
      expect(await t.hs.services.users.exists("@fields:weft.test")).toBe(false);
    });
  });

  describe("registration tokens", () => {
    const tokens = (prefix: string = PREFIXES[0]) => `${prefix}/registration_tokens`;

    it.each(PREFIXES)("needs an admin's access token (%s)", async (prefix) => {
      const calls: [string, string, unknown?][] = [
        ["GET", tokens(prefix)],
        ["GET", `${tokens(prefix)}/abcd`],
        ["POST", `${tokens(prefix)}/new`, {}],
        ["PUT", `${tokens(prefix)}/abcd`, { uses_allowed: 1 }],
        ["DELETE", `${tokens(prefix)}/abcd`],
      ];
      for (const [method, path, body] of calls) {
        const anonymous = await t.call(method, path, { body });
        expect(anonymous.status, `${method} ${path}`).toBe(401);
        expect(anonymous.json.errcode).toBe("M_MISSING_TOKEN");
        const plain = await t.call(method, path, { body, token: userToken });
        expect(plain.status, `${method} ${path}`).toBe(403);
        expect(plain.json.errcode).toBe("M_FORBIDDEN");
      }
    });

    it("creates, reads, lists, updates and deletes tokens", async () => {
      const auth = { token: adminToken };
      const random = await t.call("POST", `${tokens(PREFIXES[1])}/new`, { ...auth, body: {} });
      expect(random.status, JSON.stringify(random.json)).toBe(200);
      expect(random.json).toMatchObject({ uses_allowed: null, pending: 0, completed: 0, expiry_time: null });
      expect(random.json.token).toMatch(/^[A-Za-z0-9._~-]{16}$/);

      const short = await t.call("POST", `${tokens()}/new`, { ...auth, body: { length: 5, uses_allowed: 0 } });
      expect(short.json.token).toMatch(/^[A-Za-z0-9._~-]{5}$/);
      expect(short.json.uses_allowed).toBe(0);

      const expiry = Date.now() + 86_400_000;
      const named = await t.call("POST", `${tokens()}/new`, { ...auth, body: { token: "defg_1.~-", uses_allowed: 3, expiry_time: expiry } });
      expect(named.status, JSON.stringify(named.json)).toBe(200);
      expect(named.json).toEqual({ token: "defg_1.~-", uses_allowed: 3, pending: 0, completed: 0, expiry_time: expiry });

      const dup = await t.call("POST", `${tokens()}/new`, { ...auth, body: { token: "defg_1.~-" } });
      expect(dup.status).toBe(400);
      expect(dup.json.errcode).toBe("M_INVALID_PARAM");

      const one = await t.call("GET", `${tokens(PREFIXES[1])}/defg_1.~-`, auth);
      expect(one.json).toEqual(named.json);

      const all = await t.call("GET", tokens(), auth);
      expect(all.status).toBe(200);
      const names = (all.json.registration_tokens as { token: string }[]).map((x) => x.token);
      expect(names).toEqual(expect.arrayContaining([random.json.token, short.json.token, "defg_1.~-"]));

      const valid = await t.call("GET", `${tokens()}?valid=true`, auth);
      const validNames = (valid.json.registration_tokens as { token: string }[]).map((x) => x.token);
      expect(validNames).toContain("defg_1.~-");
      expect(validNames).not.toContain(short.json.token); // uses_allowed 0: used up
      const invalidList = await t.call("GET", `${tokens(PREFIXES[1])}?valid=false`, auth);
      const invalidNames = (invalidList.json.registration_tokens as { token: string }[]).map((x) => x.token);
      expect(invalidNames).toContain(short.json.token);
      expect(invalidNames).not.toContain("defg_1.~-");
      expect((await t.call("GET", `${tokens()}?valid=maybe`, auth)).json.errcode).toBe("M_INVALID_PARAM");

      const put = await t.call("PUT", `${tokens()}/defg_1.~-`, { ...auth, body: { uses_allowed: null, expiry_time: null } });
      expect(put.json).toEqual({ token: "defg_1.~-", uses_allowed: null, pending: 0, completed: 0, expiry_time: null });
      const put2 = await t.call("PUT", `${tokens(PREFIXES[1])}/defg_1.~-`, { ...auth, body: { uses_allowed: 7 } });
      expect(put2.json).toMatchObject({ uses_allowed: 7, expiry_time: null });
      const unchanged = await t.call("PUT", `${tokens()}/defg_1.~-`, { ...auth, body: {} });
      expect(unchanged.json).toEqual(put2.json);

      expect((await t.call("DELETE", `${tokens(PREFIXES[1])}/defg_1.~-`, auth)).json).toEqual({});
      const gone = await t.call("GET", `${tokens()}/defg_1.~-`, auth);
      expect(gone.status).toBe(404);
      expect(gone.json).toEqual({ errcode: "M_NOT_FOUND", error: "No such registration token: defg_1.~-" });
      expect((await t.call("DELETE", `${tokens()}/defg_1.~-`, auth)).status).toBe(404);
      expect((await t.call("PUT", `${tokens()}/defg_1.~-`, { ...auth, body: { uses_allowed: 1 } })).status).toBe(404);
    });

    it("validates what it is given as Synapse does", async () => {
      const auth = { token: adminToken };
      const bad: Record<string, unknown>[] = [
        { token: "has space" },
        { token: "x".repeat(65) },
        { token: "" },
        { token: 5 },
        { length: 0 },
        { length: 65 },
        { length: "5" },
        { length: 1.5 },
        { uses_allowed: -1 },
        { uses_allowed: 1.5 },
        { uses_allowed: "1" },
        { expiry_time: Date.now() - 60_000 },
        { expiry_time: "tomorrow" },
      ];
      for (const body of bad) {
        const r = await t.call("POST", `${tokens()}/new`, { ...auth, body });
        expect(r.status, JSON.stringify(body)).toBe(400);
        expect(r.json.errcode, JSON.stringify(body)).toBe("M_INVALID_PARAM");
      }
      await t.call("POST", `${tokens()}/new`, { ...auth, body: { token: "valid-one" } });
      for (const body of [{ uses_allowed: -2 }, { expiry_time: 1 }, { expiry_time: true }]) {
        const r = await t.call("PUT", `${tokens()}/valid-one`, { ...auth, body });
        expect(r.status, JSON.stringify(body)).toBe(400);
        expect(r.json.errcode).toBe("M_INVALID_PARAM");
      }
    });

    it("gates /register: a token with one use lets one user in, then is no longer valid", async () => {
      const auth = { token: adminToken };
      const validity = async (token: string) => {
        const r = await t.call("GET", `/_matrix/client/v1/register/m.login.registration_token/validity?token=${token}`);
        expect(r.status, JSON.stringify(r.json)).toBe(200);
        return r.json.valid as boolean;
      };
      expect((await t.call("POST", `${tokens()}/new`, { ...auth, body: { token: "invite1", uses_allowed: 1 } })).status).toBe(200);
      expect(await validity("invite1")).toBe(true);
      expect(await validity("unknown-token")).toBe(false);

      const register = async (username: string, token: string) => {
        const first = await t.call("POST", "/_matrix/client/v3/register", { body: { username, password: "pw" } });
        expect(first.status).toBe(401);
        expect(first.json.flows).toEqual([{ stages: ["m.login.registration_token"] }]);
        return t.call("POST", "/_matrix/client/v3/register", {
          body: { username, password: "pw", auth: { type: "m.login.registration_token", token, session: first.json.session } },
        });
      };

      const wrong = await register("carol", "not-a-token");
      expect(wrong.status).toBe(401);
      expect(wrong.json.errcode).toBe("M_UNAUTHORIZED");

      const carol = await register("carol", "invite1");
      expect(carol.status, JSON.stringify(carol.json)).toBe(200);
      expect(carol.json.user_id).toBe("@carol:weft.test");

      const used = await t.call("GET", `${tokens()}/invite1`, auth);
      expect(used.json).toEqual({ token: "invite1", uses_allowed: 1, pending: 0, completed: 1, expiry_time: null });
      expect(await validity("invite1")).toBe(false);
      const invalid = await t.call("GET", `${tokens()}?valid=false`, auth);
      expect((invalid.json.registration_tokens as { token: string }[]).map((x) => x.token)).toContain("invite1");

      const dave = await register("dave", "invite1");
      expect(dave.status).toBe(401);
      expect(await t.hs.services.users.exists("@dave:weft.test")).toBe(false);

      expect((await t.call("PUT", `${tokens()}/invite1`, { ...auth, body: { uses_allowed: 2 } })).json.uses_allowed).toBe(2);
      expect(await validity("invite1")).toBe(true);
      const dave2 = await register("dave", "invite1");
      expect(dave2.status, JSON.stringify(dave2.json)).toBe(200);
      expect(await validity("invite1")).toBe(false);
    });
  });
});

describe("shared-secret registration without a configured secret", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ config: { registration_shared_secret: null } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each(PREFIXES)("is refused on %s", async (prefix) => {
    const get = await t.call("GET", `${prefix}/register`);
    expect(get.status).toBe(400);
    expect(get.json.error).toBe("Shared secret registration is not enabled");
    const post = await t.call("POST", `${prefix}/register`, {
      body: { nonce: "n", username: "u", password: "p", admin: false, mac: "00" },
    });
    expect(post.status).toBe(400);
    expect(post.json.error).toBe("Shared secret registration is not enabled");
  });
});
