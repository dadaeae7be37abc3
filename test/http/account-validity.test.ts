// Account validity over HTTP on SQLite and PostgreSQL (a clock the test moves): a new account expires
// one period after registration; then every request is 403 M_EXPIRED_ACCOUNT except logging out and
// asking for a renewal mail; the renewal link extends it; admins set any expiry
// (POST /_synapse/admin/v1/account_validity/validity), refused to non-admins and with bad input.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, TestClock, type TestServer } from "../helpers/server.ts";
import { loginUser, registerUser, type Session } from "../helpers/users.ts";
import { hashToken } from "../../src/domain/accounts/tokens.ts";
import { AccountValidityStore } from "../../src/domain/store/account-validity.ts";

const DAY = 86_400_000;
const V3 = "/_matrix/client/v3";

describe.each(backends())("account validity (%s)", (backend) => {
  let t: TestServer;
  let clock: TestClock;
  let admin: Session;
  const whoami = (who: Session) => t.call("GET", `${V3}/account/whoami`, { token: who.access_token });

  beforeAll(async () => {
    clock = new TestClock();
    t = await startTestServer({ backend, clock, config: { account_validity: { enabled: true, period: "30d", renew_at: "7d" } } });
    admin = await registerUser(t, "admin");
    await t.hs.services.users.setAdmin(admin.user_id, true);
  });
  afterAll(async () => {
    await t?.close();
  });

  it("an account expires one period after registration; an expired one may still log out", async () => {
    const alice = await registerUser(t, "alice");
    expect((await whoami(alice)).status).toBe(200);
    clock.advance(31 * DAY);
    const expired = await whoami(alice);
    expect(expired.status).toBe(403);
    expect(expired.json.errcode).toBe("M_EXPIRED_ACCOUNT");
    expect((await t.call("GET", `${V3}/joined_rooms`, { token: alice.access_token })).json.errcode).toBe("M_EXPIRED_ACCOUNT");
    const out = await t.call("POST", `${V3}/logout`, { token: alice.access_token, body: {} });
    expect(out.status).toBe(200);
    expect((await whoami(alice)).status).toBe(401);
    // The admin registered before the clock moved: expired too until renewed by an admin below.
  });

  it("admins set the expiry; non-admins and bad input are refused", async () => {
    const bob = await registerUser(t, "bob");
    const future = clock.now() + 100 * DAY;
    expect((await t.call("POST", "/_synapse/admin/v1/account_validity/validity", { token: bob.access_token, body: { user_id: bob.user_id, expiration_ts: future } })).json.errcode).toBe("M_FORBIDDEN");
    clock.advance(31 * DAY);
    // The admin's own account expired with the others: an admin of a fresh session is needed.
    const root = await registerUser(t, "root");
    await t.hs.services.users.setAdmin(root.user_id, true);
    const call = (body: unknown) => t.call("POST", "/_synapse/admin/v1/account_validity/validity", { token: root.access_token, body });
    expect((await whoami(bob)).json.errcode).toBe("M_EXPIRED_ACCOUNT");
    for (const [body, errcode] of [[{}, "M_MISSING_PARAM"], [{ user_id: 5 }, "M_INVALID_PARAM"], [{ user_id: bob.user_id, expiration_ts: "soon" }, "M_INVALID_PARAM"], [{ user_id: bob.user_id, enable_renewal_emails: "no" }, "M_INVALID_PARAM"]] as const) {
      const r = await call(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.errcode).toBe(errcode);
    }
    expect((await call({ user_id: "@ghost:weft.test" })).status).toBe(404);
    const set = await call({ user_id: bob.user_id, expiration_ts: clock.now() + 5 * DAY });
    expect(set.status).toBe(200);
    expect(set.json).toEqual({ expiration_ts: clock.now() + 5 * DAY });
    expect((await whoami(bob)).status).toBe(200);
    const dflt = await call({ user_id: admin.user_id });
    expect(dflt.json.expiration_ts).toBe(clock.now() + 30 * DAY);
    expect((await whoami(admin)).status).toBe(200);
  });

  it("an expired account asks for a renewal mail; the renewal link extends it once", async () => {
    const carol = await registerUser(t, "carol");
    clock.advance(31 * DAY);
    const login = await loginUser(t, "carol"); // logging in works; using the session does not
    expect((await whoami(login)).json.errcode).toBe("M_EXPIRED_ACCOUNT");
    const mail = await t.call("POST", "/_matrix/client/unstable/account_validity/send_mail", { token: carol.access_token, body: {} });
    expect(mail.status).toBe(200);
    const hash = await t.hs.services.storage.sql.get<{ renewal_token_hash: string | null }>(`SELECT renewal_token_hash FROM account_validity WHERE user_id = ?`, [carol.user_id]);
    expect(hash?.renewal_token_hash).toBeNull(); // no mail could leave (no SMTP here): no token made
    // No mailer is configured in this test (account-validity-mail.test.ts has one): the link's token is set
    // here, as the mail would carry it.
    await new AccountValidityStore(t.hs.services.storage.sql).setRenewalToken(carol.user_id, hashToken("known-token"));

    const bad = await fetch(`${t.baseUrl}/_matrix/client/unstable/account_validity/renew?token=wrong`);
    expect(bad.status).toBe(404);
    expect(bad.headers.get("content-type")).toMatch(/text\/html/);
    expect((await whoami(carol)).status).toBe(403);
    const ok = await fetch(`${t.baseUrl}/_matrix/client/v3/account_validity/renew?token=known-token`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toMatch(/successfully renewed/);
    expect((await whoami(carol)).status).toBe(200);
    expect((await whoami(login)).status).toBe(200);
    const again = await fetch(`${t.baseUrl}/_matrix/client/r0/account_validity/renew?token=known-token`);
    expect(again.status).toBe(200);
    expect(await again.text()).toMatch(/already been renewed/);
    clock.advance(29 * DAY);
    expect((await whoami(carol)).status).toBe(200);
    clock.advance(2 * DAY);
    expect((await whoami(carol)).json.errcode).toBe("M_EXPIRED_ACCOUNT");
  });
});

describe("account validity off", () => {
  it("accounts never expire and the endpoints say so", async () => {
    const clock = new TestClock();
    const t = await startTestServer({ clock });
    try {
      const u = await registerUser(t, "u");
      clock.advance(10_000 * DAY);
      expect((await t.call("GET", `${V3}/account/whoami`, { token: u.access_token })).status).toBe(200);
      expect((await t.call("POST", "/_matrix/client/unstable/account_validity/send_mail", { token: u.access_token, body: {} })).status).toBe(404);
      expect((await fetch(`${t.baseUrl}/_matrix/client/unstable/account_validity/renew?token=x`)).status).toBe(404);
    } finally {
      await t.close();
    }
  });
});
