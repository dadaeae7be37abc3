// Account renewal by e-mail (Synapse's account_validity with renew_at) on SQLite and PostgreSQL, with a
// real SMTP receiver and a clock the test moves: the renewal job (run at start, then every 30 minutes)
// mails each account whose expiry is within renew_at once; the link in the mail renews the account;
// POST /account_validity/send_mail mails a fresh link; the link page is also served under
// /_synapse/client/ and the v1 path.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, TestClock, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { startSmtp, type TestSmtp } from "../helpers/smtp.ts";

const DAY = 86_400_000;
const V3 = "/_matrix/client/v3";

describe.each(backends())("account renewal by e-mail (%s)", (backend) => {
  let t: TestServer;
  let smtp: TestSmtp;
  let clock: TestClock;
  let admin: Session;
  const whoami = (who: Session) => t.call("GET", `${V3}/account/whoami`, { token: who.access_token });
  const adminCall = (method: string, path: string, body: unknown) => t.call(method, path, { token: admin.access_token, body });
  const withEmail = async (name: string, address: string | undefined) => {
    const u = await registerUser(t, name);
    if (address) expect((await adminCall("PUT", `/_synapse/admin/v2/users/${encodeURIComponent(u.user_id)}`, { threepids: [{ medium: "email", address }], displayname: `${name} display` })).status).toBe(200);
    return u;
  };

  beforeAll(async () => {
    smtp = await startSmtp();
    clock = new TestClock();
    t = await startTestServer({
      backend,
      clock,
      config: {
        account_validity: { enabled: true, period: "30d", renew_at: "7d", renew_email_subject: "Renew your %(app)s account on %(server_name)s" },
        email: { smtp_host: "127.0.0.1", smtp_port: smtp.port, enable_tls: false, notif_from: "Weft <noreply@weft.test>", app_name: "Weft Chat" },
      },
    });
    admin = await registerUser(t, "admin");
    await t.hs.services.users.setAdmin(admin.user_id, true);
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it("mails accounts nearing expiry once; the mailed link renews", async () => {
    const alice = await withEmail("alice", "alice@example.org");
    const nomail = await withEmail("nomail", undefined);
    clock.advance(24 * DAY); // alice expires in 6 days: within renew_at
    // The admin renews itself far ahead, so it gets no mail and stays usable.
    expect((await adminCall("POST", "/_synapse/admin/v1/account_validity/validity", { user_id: admin.user_id, expiration_ts: clock.now() + 365 * DAY })).status).toBe(200);
    await t.restart(); // the job runs at start

    const mail = await smtp.waitFor("alice@example.org");
    expect(mail.subject).toBe("Renew your Weft Chat account on weft.test");
    expect(mail.raw).toContain("alice display");
    expect(mail.link).toMatch(/\/_matrix\/client\/unstable\/account_validity\/renew\?token=[A-Za-z0-9]+$/);

    // Once a period: a later pass mails carol (set to expire later than alice) and not alice again.
    const carol = await withEmail("carol", "carol@example.org");
    await adminCall("POST", "/_synapse/admin/v1/account_validity/validity", { user_id: carol.user_id, expiration_ts: clock.now() + 6 * DAY + 3_600_000 });
    await t.restart();
    await smtp.waitFor("carol@example.org");
    expect(smtp.countTo("alice@example.org")).toBe(1);
    expect(smtp.mails.filter((m) => m.to.length === 0 || m.to.some((to) => to.startsWith("nomail")))).toEqual([]);

    clock.advance(7 * DAY); // alice expired
    expect((await whoami(alice)).json.errcode).toBe("M_EXPIRED_ACCOUNT");
    const renewed = await fetch(mail.link!);
    expect(renewed.status).toBe(200);
    expect(await renewed.text()).toMatch(/successfully renewed/);
    expect((await whoami(alice)).status).toBe(200);
    clock.advance(29 * DAY);
    expect((await whoami(alice)).status).toBe(200); // one period from the renewal
    expect((await whoami(nomail)).json.errcode).toBe("M_EXPIRED_ACCOUNT");
  });

  it("send_mail mails a fresh link (also to an expired account); the link works under every path once", async () => {
    const dave = await withEmail("dave", "dave@example.org");
    clock.advance(31 * DAY);
    expect((await whoami(dave)).json.errcode).toBe("M_EXPIRED_ACCOUNT");
    const before = smtp.countTo("dave@example.org");
    const asked = await t.call("POST", "/_matrix/client/unstable/account_validity/send_mail", { token: dave.access_token, body: {} });
    expect(asked.status).toBe(200);
    expect(asked.json).toEqual({});
    const mail = await smtp.waitFor("dave@example.org", before);
    const token = new URL(mail.link!).searchParams.get("token")!;
    const wrong = await fetch(`${t.baseUrl}/_synapse/client/account_validity/renew?token=${token}x`);
    expect(wrong.status).toBe(404);
    expect((await whoami(dave)).status).toBe(403);
    const ok = await fetch(`${t.baseUrl}/_synapse/client/account_validity/renew?token=${token}`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toMatch(/successfully renewed/);
    expect((await whoami(dave)).status).toBe(200);
    const again = await fetch(`${t.baseUrl}/_matrix/client/v1/account_validity/renew?token=${token}`);
    expect(again.status).toBe(200);
    expect(await again.text()).toMatch(/already been renewed/);

    // An account without an address: 200, no mail (an admin must renew it), as Synapse.
    const erin = await withEmail("erin", undefined);
    const count = smtp.mails.length;
    expect((await t.call("POST", "/_matrix/client/v1/account_validity/send_mail", { token: erin.access_token, body: {} })).status).toBe(200);
    expect(smtp.mails.length).toBe(count);
  });
});

describe("account validity without renew_at", () => {
  it("refuses send_mail as Synapse does: renewal by e-mail is off", async () => {
    const t = await startTestServer({ config: { account_validity: { enabled: true, period: "30d" } } });
    try {
      const u = await registerUser(t, "u");
      const r = await t.call("POST", "/_matrix/client/v3/account_validity/send_mail", { token: u.access_token, body: {} });
      expect([r.status, r.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    } finally {
      await t.close();
    }
  });
});
