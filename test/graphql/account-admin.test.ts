// The GraphQL face of issue 19's account features, on SQLite and PostgreSQL, checked against the REST
// face on the same server: third-party identifiers (requestEmailToken with a real SMTP receiver, the
// mailed link, addThreepid with user-interactive auth, viewer.threepids, deleteThreepid), login flows with
// the SSO identity providers and the SSO redirect URL (a real OpenID provider on loopback), and account
// validity. Refusals carry the same errcodes as REST.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, freePort, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { startSmtp, type TestSmtp } from "../helpers/smtp.ts";
import { startOidcProvider, type TestOidcProvider } from "../helpers/oidc.ts";
import { errcode, gql } from "./client.ts";

const REQUEST = `mutation ($purpose: EmailTokenPurpose!, $secret: String!, $email: String!, $attempt: Int!) {
  requestEmailToken(purpose: $purpose, clientSecret: $secret, email: $email, sendAttempt: $attempt) }`;
const ADD = `mutation ($secret: String!, $sid: String!, $auth: JSONObject) { addThreepid(clientSecret: $secret, sid: $sid, auth: $auth) }`;
const DELETE = `mutation ($medium: String!, $address: String!) { deleteThreepid(medium: $medium, address: $address) }`;
const THREEPIDS = `{ viewer { threepids { medium address validatedAt addedAt } accountValidity { enabled expiresAt } } }`;

describe.each(backends())("account administration over GraphQL (%s)", (backend) => {
  let t: TestServer;
  let smtp: TestSmtp;
  let idp: TestOidcProvider;
  let alice: Session;

  beforeAll(async () => {
    smtp = await startSmtp();
    const port = await freePort();
    idp = await startOidcProvider(`http://127.0.0.1:${port}/_synapse/client/oidc/callback`, [{ sub: "u-zed", preferred_username: "zed", name: "Zed" }]);
    t = await startTestServer({
      backend,
      port,
      config: {
        public_baseurl: `http://127.0.0.1:${port}/`,
        email: { smtp_host: "127.0.0.1", smtp_port: smtp.port, enable_tls: false, notif_from: "Weft <noreply@weft.test>" },
        rc_3pid_validation: { per_second: 1000, burst_count: 1000 },
        account_validity: { enabled: true, period: "30d" },
        allow_guest_access: true,
        oidc_providers: [{
          idp_id: "test", idp_name: "Test IdP", idp_brand: "test", issuer: idp.issuer, client_id: idp.clientId, client_secret: idp.clientSecret,
          scopes: ["openid", "profile"], user_profile_method: "userinfo_endpoint", skip_verification: true,
          user_mapping_provider: { config: { localpart_template: "{{ user.preferred_username }}" } },
        }],
      },
    });
    alice = await registerUser(t, "alice", "alice-pw");
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
    await idp?.close();
  });

  it("adds, lists and deletes an e-mail address as REST does", async () => {
    const before = smtp.countTo("alice@example.org");
    const requested = await gql(t, REQUEST, { purpose: "ADD", secret: "gql-secret", email: "Alice@Example.org", attempt: 1 });
    expect(requested.body.errors).toBeUndefined();
    const sid = requested.body.data.requestEmailToken as string;
    expect(sid).toMatch(/.+/);
    const mail = await smtp.waitFor("alice@example.org", before);
    expect((await fetch(mail.link!, { redirect: "manual" })).status).toBe(200);

    // UIA: the first call names the flows and a session; the second completes with the password.
    const first = await gql(t, ADD, { secret: "gql-secret", sid }, alice.access_token);
    expect(errcode(first.body)).toBe("M_UNAUTHORIZED");
    const uia = first.body.errors![0]!.extensions!;
    expect(uia.flows).toEqual([{ stages: ["m.login.password"] }]);
    const wrong = await gql(t, ADD, { secret: "gql-secret", sid, auth: { type: "m.login.password", session: uia.session, identifier: { type: "m.id.user", user: "alice" }, password: "nope" } }, alice.access_token);
    expect(errcode(wrong.body)).toBe("M_FORBIDDEN");
    const added = await gql(t, ADD, { secret: "gql-secret", sid, auth: { type: "m.login.password", session: uia.session, identifier: { type: "m.id.user", user: "alice" }, password: "alice-pw" } }, alice.access_token);
    expect(added.body.errors).toBeUndefined();
    expect(added.body.data.addThreepid).toBe(true);

    const listed = await gql(t, THREEPIDS, {}, alice.access_token);
    const rest = await t.call("GET", "/_matrix/client/v3/account/3pid", { token: alice.access_token });
    expect(listed.body.data.viewer.threepids).toEqual(rest.json.threepids.map((x: any) => ({ medium: x.medium, address: x.address, validatedAt: x.validated_at, addedAt: x.added_at })));
    expect(listed.body.data.viewer.threepids.map((x: any) => x.address)).toEqual(["alice@example.org"]);

    const deleted = await gql(t, DELETE, { medium: "email", address: "alice@example.org" }, alice.access_token);
    expect(deleted.body.data.deleteThreepid).toBe("no-support");
    expect((await t.call("GET", "/_matrix/client/v3/account/3pid", { token: alice.access_token })).json.threepids).toEqual([]);
  });

  it("refuses what REST refuses, with the same errcodes", async () => {
    const rest = (path: string, body: unknown, token?: string) => t.call("POST", `/_matrix/client/v3${path}`, { body, token });
    // No token.
    expect(errcode((await gql(t, THREEPIDS)).body)).toBe("M_MISSING_TOKEN");
    expect(errcode((await gql(t, DELETE, { medium: "email", address: "a@b.c" })).body)).toBe("M_MISSING_TOKEN");
    // Bad input.
    const badSecret = await gql(t, REQUEST, { purpose: "ADD", secret: "has space", email: "x@example.org", attempt: 1 });
    expect(errcode(badSecret.body)).toBe((await rest("/account/3pid/email/requestToken", { client_secret: "has space", email: "x@example.org", send_attempt: 1 })).json.errcode);
    expect(errcode(badSecret.body)).toBe("M_INVALID_PARAM");
    const badMedium = await gql(t, DELETE, { medium: "pigeon", address: "x" }, alice.access_token);
    expect(errcode(badMedium.body)).toBe((await rest("/account/3pid/delete", { medium: "pigeon", address: "x" }, alice.access_token)).json.errcode);
    // A session never validated cannot be spent.
    const unvalidated = await gql(t, REQUEST, { purpose: "ADD", secret: "s2", email: "never@example.org", attempt: 1 });
    const sid = unvalidated.body.data.requestEmailToken;
    const first = await gql(t, ADD, { secret: "s2", sid }, alice.access_token);
    const done = await gql(t, ADD, { secret: "s2", sid, auth: { type: "m.login.password", session: first.body.errors![0]!.extensions!.session, identifier: { type: "m.id.user", user: "alice" }, password: "alice-pw" } }, alice.access_token);
    expect(errcode(done.body)).toBe("M_THREEPID_AUTH_FAILED");
    // A guest may not touch third-party identifiers.
    const guest = await t.call("POST", "/_matrix/client/v3/register?kind=guest", { body: {} });
    expect(guest.status).toBe(200);
    expect(errcode((await gql(t, THREEPIDS, {}, guest.json.access_token)).body)).toBe((await t.call("GET", "/_matrix/client/v3/account/3pid", { token: guest.json.access_token })).json.errcode);
  });

  it("lists the login flows with the identity providers, and gives the SSO redirect URL", async () => {
    const q = await gql(t, `{ loginFlows { type getLoginToken identityProviders { id name icon brand } } }`);
    const rest = (await t.call("GET", "/_matrix/client/v3/login")).json.flows as any[];
    expect(q.body.data.loginFlows.map((f: any) => f.type)).toEqual(rest.map((f) => f.type));
    const sso = q.body.data.loginFlows.find((f: any) => f.type === "m.login.sso");
    expect(sso.identityProviders).toEqual([{ id: "oidc-test", name: "Test IdP", icon: null, brand: "test" }]);

    const url = await gql(t, `query ($idp: String, $to: String!) { ssoRedirectUrl(idpId: $idp, redirectUrl: $to) }`, { idp: "oidc-test", to: "http://client.example/done" });
    expect(url.body.errors).toBeUndefined();
    const href = url.body.data.ssoRedirectUrl as string;
    expect(href).toBe(`${t.baseUrl}/_matrix/client/v3/login/sso/redirect/oidc-test?redirectUrl=${encodeURIComponent("http://client.example/done")}`);
    // The URL works: it sends the browser to the provider, as the REST endpoint does.
    const followed = await fetch(href, { redirect: "manual" });
    expect(followed.status).toBe(302);
    expect(followed.headers.get("location")).toContain(idp.issuer);

    const unknown = await gql(t, `{ ssoRedirectUrl(idpId: "nope", redirectUrl: "http://client.example/") }`);
    expect(errcode(unknown.body)).toBe((await t.call("GET", "/_matrix/client/v3/login/sso/redirect/nope?redirectUrl=http%3A%2F%2Fclient.example%2F")).json.errcode);
    expect(errcode(unknown.body)).toBe("M_NOT_FOUND");
    expect(errcode((await gql(t, `{ ssoRedirectUrl(idpId: "oidc-test", redirectUrl: "not a url") }`)).body)).toBe("M_INVALID_PARAM");
  });

  it("tells the viewer when the account expires", async () => {
    const q = await gql(t, THREEPIDS, {}, alice.access_token);
    const stored = await t.hs.services.storage.sql.get<{ expiration_ts: number | string }>(`SELECT expiration_ts FROM account_validity WHERE user_id = ?`, [alice.user_id]);
    expect(q.body.data.viewer.accountValidity).toEqual({ enabled: true, expiresAt: Number(stored!.expiration_ts) });
  });
});
