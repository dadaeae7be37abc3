// E-mail addresses over HTTP with a real SMTP receiver: requestToken mails a link, the link validates,
// /account/3pid/add (with UIA) adds the address; registration with an address; password reset by e-mail;
// answers that never tell whether an address is bound; bad input. Both databases.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { loginUser, registerUser, type Session } from "../helpers/users.ts";
import { startSmtp, type TestSmtp } from "../helpers/smtp.ts";

describe.each(backends())("e-mail addresses on %s", (backend) => {
  let t: TestServer;
  let smtp: TestSmtp;
  let alice: Session;

  beforeAll(async () => {
    smtp = await startSmtp();
    t = await startTestServer({
      backend,
      config: {
        email: { smtp_host: "127.0.0.1", smtp_port: smtp.port, enable_tls: false, notif_from: "%(app)s at Weft <noreply@weft.test>", app_name: "Weft Chat" },
        rc_3pid_validation: { per_second: 1000, burst_count: 1000 },
      },
    });
    alice = await registerUser(t, "alice", "alice-pw");
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  const requestToken = (path: string, body: Record<string, unknown>) => t.call("POST", `/_matrix/client/v3${path}`, { body });
  const fetchPage = (url: string, init?: RequestInit) => fetch(url, { redirect: "manual", ...init });

  async function validatedAddSession(address: string, secret: string, token = alice.access_token): Promise<string> {
    const before = smtp.countTo(address);
    const res = await requestToken("/account/3pid/email/requestToken", { client_secret: secret, email: address, send_attempt: 1 });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const mail = await smtp.waitFor(address, before);
    expect(mail.link).toContain("/_matrix/client/unstable/add_threepid/email/submit_token?");
    const page = await fetchPage(mail.link!);
    expect(page.status).toBe(200);
    void token;
    return res.json.sid;
  }

  it("says in /capabilities that addresses may change", async () => {
    const res = await t.call("GET", "/_matrix/client/v3/capabilities", { token: alice.access_token });
    expect(res.json.capabilities["m.3pid_changes"]).toEqual({ enabled: true });
  });

  it("mails a link that validates the address, then adds it after UIA", async () => {
    const res = await requestToken("/account/3pid/email/requestToken", { client_secret: "secret-1", email: " Alice@Example.ORG ", send_attempt: 1 });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "POST", "/_matrix/client/v3/account/3pid/email/requestToken");
    expect(Object.keys(res.json)).toEqual(["sid"]);
    const mail = await smtp.waitFor("alice@example.org");
    expect(mail.from).toBe("noreply@weft.test");
    expect(mail.raw).toContain("Weft Chat at Weft");
    expect(mail.subject).toBe("[weft.test] Validate your email");
    const link = new URL(mail.link!);
    expect(link.origin).toBe(t.baseUrl);
    expect(link.searchParams.get("sid")).toBe(res.json.sid);

    // Not validated yet: adding fails.
    const early = await t.call("POST", "/_matrix/client/v3/account/3pid/add", { token: alice.access_token, body: { client_secret: "secret-1", sid: res.json.sid } });
    expect(early.status).toBe(401);
    const earlier = await t.call("POST", "/_matrix/client/v3/account/3pid/add", {
      token: alice.access_token,
      body: { client_secret: "secret-1", sid: res.json.sid, auth: { type: "m.login.password", identifier: { type: "m.id.user", user: "alice" }, password: "alice-pw", session: early.json.session } },
    });
    expect([earlier.status, earlier.json.errcode]).toEqual([400, "M_THREEPID_AUTH_FAILED"]);

    // A wrong token in the link is refused; the real one validates.
    const forged = new URL(link);
    forged.searchParams.set("token", "not-the-token");
    const bad = await fetchPage(forged.href);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("M_THREEPID_AUTH_FAILED");
    const ok = await fetchPage(link.href);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("validated");

    const first = await t.call("POST", "/_matrix/client/v3/account/3pid/add", { token: alice.access_token, body: { client_secret: "secret-1", sid: res.json.sid } });
    expect(first.status).toBe(401);
    expect(first.json.flows).toEqual([{ stages: ["m.login.password"] }]);
    const added = await t.call("POST", "/_matrix/client/v3/account/3pid/add", {
      token: alice.access_token,
      body: { client_secret: "secret-1", sid: res.json.sid, auth: { type: "m.login.password", identifier: { type: "m.id.user", user: "alice" }, password: "alice-pw", session: first.json.session } },
    });
    expect(added.status, JSON.stringify(added.json)).toBe(200);
    const list = await t.call("GET", "/_matrix/client/v3/account/3pid", { token: alice.access_token });
    expectMatchesSpec(list, "GET", "/_matrix/client/v3/account/3pid");
    expect(list.json.threepids).toHaveLength(1);
    expect(list.json.threepids[0]).toMatchObject({ medium: "email", address: "alice@example.org" });
    expect(typeof list.json.threepids[0].validated_at).toBe("number");
  });

  it("sends one mail per send_attempt, and redirects to next_link", async () => {
    const body = { client_secret: "secret-2", email: "attempts@example.org", send_attempt: 1, next_link: "https://client.example/done" };
    const a = await requestToken("/account/3pid/email/requestToken", body);
    const b = await requestToken("/account/3pid/email/requestToken", body);
    expect(b.json.sid).toBe(a.json.sid);
    const c = await requestToken("/account/3pid/email/requestToken", { ...body, send_attempt: 2 });
    expect(c.json.sid).toBe(a.json.sid);
    const second = await smtp.waitFor("attempts@example.org", 1);
    // A mail for a later address arrives after every earlier one was handed to SMTP.
    await requestToken("/account/3pid/email/requestToken", { client_secret: "secret-2b", email: "marker@example.org", send_attempt: 1 });
    await smtp.waitFor("marker@example.org");
    expect(smtp.countTo("attempts@example.org")).toBe(2);
    // The first mail's token was replaced by the second's.
    const firstLink = smtp.mails.find((m) => m.to.includes("attempts@example.org"))!.link!;
    expect((await fetchPage(firstLink)).status).toBe(400);
    const res = await fetchPage(second.link!);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("https://client.example/done");
  });

  it("answers alike whether or not the address is bound, and mails only when it may be used", async () => {
    const bob = await registerUser(t, "bob", "bob-pw");
    // alice@example.org belongs to alice: bob's request gets a sid, but no mail is sent.
    const taken = await requestToken("/account/3pid/email/requestToken", { client_secret: "bob-secret", email: "alice@example.org", send_attempt: 1 });
    const free = await requestToken("/account/3pid/email/requestToken", { client_secret: "bob-secret", email: "bob@example.org", send_attempt: 1 });
    expect([taken.status, Object.keys(taken.json)]).toEqual([free.status, Object.keys(free.json)]);
    // Password reset: an unknown address gets a sid too, and no mail.
    const unknown = await requestToken("/account/password/email/requestToken", { client_secret: "pw-secret", email: "nobody@example.org", send_attempt: 1 });
    expect([unknown.status, Object.keys(unknown.json)]).toEqual([200, ["sid"]]);
    // Registration with a bound address: the same.
    const reg = await requestToken("/register/email/requestToken", { client_secret: "reg-secret", email: "alice@example.org", send_attempt: 1 });
    expect([reg.status, Object.keys(reg.json)]).toEqual([200, ["sid"]]);
    await smtp.waitFor("bob@example.org");
    await requestToken("/account/3pid/email/requestToken", { client_secret: "marker", email: "marker2@example.org", send_attempt: 1 });
    await smtp.waitFor("marker2@example.org");
    expect(smtp.countTo("alice@example.org")).toBe(1); // only the one alice asked for
    expect(smtp.countTo("nobody@example.org")).toBe(0);
    // The unmailed session can never prove the address.
    const add = await t.call("POST", "/_matrix/client/v3/account/3pid", { token: bob.access_token, body: { three_pid_creds: { sid: taken.json.sid, client_secret: "bob-secret" } } });
    expect([add.status, add.json.errcode]).toEqual([400, "M_THREEPID_AUTH_FAILED"]);
  });

  it("refuses an address validated by one account for another, and deletes an address", async () => {
    const dora = await registerUser(t, "dora", "dora-pw");
    const sid = await validatedAddSession("dora@example.org", "dora-secret");
    const added = await t.call("POST", "/_matrix/client/v3/account/3pid", { token: dora.access_token, body: { three_pid_creds: { sid, client_secret: "dora-secret" } } });
    expect(added.status, JSON.stringify(added.json)).toBe(200);
    expect((await t.call("GET", "/_matrix/client/v3/account/3pid", { token: dora.access_token })).json.threepids.map((x: { address: string }) => x.address)).toEqual(["dora@example.org"]);
    const del = await t.call("POST", "/_matrix/client/v3/account/3pid/delete", { token: dora.access_token, body: { medium: "email", address: "Dora@example.org" } });
    expect(del.status).toBe(200);
    expectMatchesSpec(del, "POST", "/_matrix/client/v3/account/3pid/delete");
    expect(del.json).toEqual({ id_server_unbind_result: "no-support" });
    expect((await t.call("GET", "/_matrix/client/v3/account/3pid", { token: dora.access_token })).json.threepids).toEqual([]);
  });

  it("registers an account with a validated address", async () => {
    const res = await requestToken("/register/email/requestToken", { client_secret: "carol-secret", email: "carol@example.org", send_attempt: 1 });
    expect(res.status).toBe(200);
    const mail = await smtp.waitFor("carol@example.org");
    expect(mail.link).toContain("/_matrix/client/unstable/registration/email/submit_token?");
    expect((await fetchPage(mail.link!)).status).toBe(200);
    const first = await t.call("POST", "/_matrix/client/v3/register", { body: { username: "carol", password: "carol-pw" } });
    expect(first.status).toBe(401);
    expect(first.json.flows).toEqual([{ stages: ["m.login.dummy"] }, { stages: ["m.login.email.identity"] }]);
    const done = await t.call("POST", "/_matrix/client/v3/register", {
      body: { username: "carol", password: "carol-pw", auth: { type: "m.login.email.identity", threepid_creds: { sid: res.json.sid, client_secret: "carol-secret" }, session: first.json.session } },
    });
    expect(done.status, JSON.stringify(done.json)).toBe(200);
    const list = await t.call("GET", "/_matrix/client/v3/account/3pid", { token: done.json.access_token });
    expect(list.json.threepids.map((x: { address: string }) => x.address)).toEqual(["carol@example.org"]);
  });

  it("resets a password by e-mail: the link asks for a click, then the new password works and sessions end", async () => {
    const before = smtp.countTo("alice@example.org");
    const res = await requestToken("/account/password/email/requestToken", { client_secret: "reset-secret", email: "alice@example.org", send_attempt: 1 });
    expect(res.status).toBe(200);
    expectMatchesSpec(res, "POST", "/_matrix/client/v3/account/password/email/requestToken");
    const mail = await smtp.waitFor("alice@example.org", before);
    expect(mail.subject).toBe("[weft.test] Password reset");
    expect(mail.link).toContain("/_synapse/client/password_reset/email/submit_token?");

    const creds = { sid: res.json.sid, client_secret: "reset-secret" };
    const first = await t.call("POST", "/_matrix/client/v3/account/password", { body: { new_password: "alice-new-pw" } });
    expect(first.status).toBe(401);
    expect(first.json.flows).toEqual([{ stages: ["m.login.email.identity"] }]);
    // Opening the link only shows the confirmation form.
    const form = await fetchPage(mail.link!);
    expect(form.status).toBe(200);
    expect(await form.text()).toContain("<form method=\"post\"");
    const notYet = await t.call("POST", "/_matrix/client/v3/account/password", { body: { new_password: "alice-new-pw", auth: { type: "m.login.email.identity", threepid_creds: creds, session: first.json.session } } });
    expect(notYet.status).toBe(401);
    expect(notYet.json.errcode).toBe("M_THREEPID_AUTH_FAILED");
    const link = new URL(mail.link!);
    const confirmed = await fetchPage(`${link.origin}${link.pathname}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: link.searchParams.toString(),
    });
    expect(confirmed.status).toBe(200);

    const done = await t.call("POST", "/_matrix/client/v3/account/password", { body: { new_password: "alice-new-pw", auth: { type: "m.login.email.identity", threepid_creds: creds, session: first.json.session } } });
    expect(done.status, JSON.stringify(done.json)).toBe(200);
    expect((await t.call("GET", "/_matrix/client/v3/account/whoami", { token: alice.access_token })).status).toBe(401);
    const old = await t.call("POST", "/_matrix/client/v3/login", { body: { type: "m.login.password", user: "alice", password: "alice-pw" } });
    expect(old.status).toBe(403);
    alice = await loginUser(t, "alice", "alice-new-pw");
  });

  it("refuses bad requestToken input with the spec's errors", async () => {
    const cases: [Record<string, unknown>, number, string][] = [
      [{ email: "x@example.org", send_attempt: 1 }, 400, "M_MISSING_PARAM"],
      [{ client_secret: "has space", email: "x@example.org", send_attempt: 1 }, 400, "M_INVALID_PARAM"],
      [{ client_secret: "ok", email: "not-an-address", send_attempt: 1 }, 400, "M_INVALID_PARAM"],
      [{ client_secret: "ok", email: "a@b@c", send_attempt: 1 }, 400, "M_INVALID_PARAM"],
      [{ client_secret: "ok", email: "x@example.org" }, 400, "M_MISSING_PARAM"],
      [{ client_secret: "ok", email: "x@example.org", send_attempt: "1" }, 400, "M_INVALID_PARAM"],
      [{ client_secret: "ok", email: 5, send_attempt: 1 }, 400, "M_BAD_JSON"],
      [{ client_secret: "ok", email: "x@example.org", send_attempt: 1, next_link: "javascript:alert(1)" }, 400, "M_INVALID_PARAM"],
    ];
    for (const [body, status, errcode] of cases) {
      const res = await requestToken("/account/3pid/email/requestToken", body);
      expect([res.status, res.json.errcode], JSON.stringify(body)).toEqual([status, errcode]);
    }
    const sms = await requestToken("/register/msisdn/requestToken", { client_secret: "ok", country: "GB", phone_number: "7700900123", send_attempt: 1 });
    expect([sms.status, sms.json.errcode]).toEqual([400, "M_UNKNOWN"]);
    const incomplete = await fetchPage(`${t.baseUrl}/_matrix/client/unstable/add_threepid/email/submit_token?sid=x`);
    expect(incomplete.status).toBe(400);
    expect(smtp.countTo("x@example.org")).toBe(0);
  });
});

describe("e-mail without an SMTP configuration", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ config: { enable_3pid_changes: false } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("refuses to validate addresses, and refuses changes when enable_3pid_changes is false", async () => {
    const reg = await t.call("POST", "/_matrix/client/v3/register/email/requestToken", { body: { client_secret: "s", email: "a@example.org", send_attempt: 1 } });
    expect([reg.status, reg.json.errcode]).toEqual([400, "M_THREEPID_MEDIUM_NOT_SUPPORTED"]);
    const add = await t.call("POST", "/_matrix/client/v3/account/3pid/email/requestToken", { body: { client_secret: "s", email: "a@example.org", send_attempt: 1 } });
    expect([add.status, add.json.errcode]).toEqual([400, "M_FORBIDDEN"]);
    const u = await registerUser(t, "erin", "erin-pw");
    const del = await t.call("POST", "/_matrix/client/v3/account/3pid/delete", { token: u.access_token, body: { medium: "email", address: "a@example.org" } });
    expect([del.status, del.json.errcode]).toEqual([400, "M_FORBIDDEN"]);
    const flows = await t.call("POST", "/_matrix/client/v3/register", { body: { username: "fred", password: "p" } });
    expect(flows.json.flows).toEqual([{ stages: ["m.login.dummy"] }]);
  });
});
