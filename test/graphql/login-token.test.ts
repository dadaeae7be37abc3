// createLoginToken (with its typed UIA), registrationTokenValid and mediaUploadSizeLimit on the GraphQL
// face, on SQLite and PostgreSQL: the token GraphQL hands out logs a new device in over REST; the
// validity and the upload limit agree with REST; refusals carry REST's errcode and extensions.code.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { gql } from "./client.ts";

const V3 = "/_matrix/client/v3";
const V1 = "/_matrix/client/v1";
const CREATE = `mutation ($auth: AuthInput) { createLoginToken(auth: $auth) { __typename ... on LoginToken { loginToken expiresInMs } ... on AuthRequired { session flows { stages } } } }`;

describe.each(backends())("GraphQL login tokens and media config on %s", (backend) => {
  const { t, users: { alice } } = withServer({ backend, users: ["alice"], config: { login_via_existing_session: { enabled: true, require_ui_auth: true } } });

  it("createLoginToken: AuthRequired, then a token that logs in another device", async () => {
    const first = await gql(t, CREATE, {}, alice.access_token);
    expect(first.body.errors).toBeUndefined();
    const required = first.body.data.createLoginToken;
    expect(required.__typename).toBe("AuthRequired");
    expect(required.flows).toContainEqual({ stages: ["m.login.password"] });
    const auth = { type: "m.login.password", session: required.session, identifier: { type: "m.id.user", user: alice.user_id }, password: "password" };
    const done = await gql(t, CREATE, { auth }, alice.access_token);
    expect(done.body.errors, JSON.stringify(done.body.errors)).toBeUndefined();
    const token = done.body.data.createLoginToken;
    expect(token.__typename).toBe("LoginToken");
    expect(token.expiresInMs).toBe(5 * 60_000);
    const login = await t.call("POST", `${V3}/login`, { body: { type: "m.login.token", token: token.loginToken } });
    expect(login.status, JSON.stringify(login.json)).toBe(200);
    expect(login.json.user_id).toBe(alice.user_id);
    // Single use.
    expect((await t.call("POST", `${V3}/login`, { body: { type: "m.login.token", token: token.loginToken } })).status).toBe(403);
  });

  it("mediaUploadSizeLimit is REST's m.upload.size; registrationTokenValid is refused while tokens are off", async () => {
    const res = await gql(t, `{ mediaUploadSizeLimit }`, {}, alice.access_token);
    expect(res.body.data.mediaUploadSizeLimit).toBe((await t.call("GET", `${V1}/media/config`, { token: alice.access_token })).json["m.upload.size"]);
    const off = await gql(t, `{ registrationTokenValid(token: "abc") }`, {});
    expect(off.body.errors?.[0]?.extensions).toMatchObject({ errcode: "M_FORBIDDEN", code: "FORBIDDEN" });
    const noToken = await gql(t, `{ mediaUploadSizeLimit }`, {});
    expect(noToken.body.errors?.[0]?.extensions).toMatchObject({ errcode: "M_MISSING_TOKEN", code: "UNAUTHENTICATED" });
  });
});

describe.each(backends())("GraphQL registration token validity on %s", (backend) => {
  const { t } = withServer({ backend, config: { registration_requires_token: true } });

  it("an unknown token is not valid, as REST answers", async () => {
    const res = await gql(t, `{ registrationTokenValid(token: "nosuchtoken") }`, {});
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.registrationTokenValid).toBe(false);
    expect((await t.call("GET", `${V1}/register/m.login.registration_token/validity?token=nosuchtoken`)).json).toEqual({ valid: false });
    const bad = await gql(t, `{ registrationTokenValid(token: 5) }`, {});
    expect(bad.body.errors?.[0]?.extensions?.code).toBe("GRAPHQL_VALIDATION_FAILED");
  });
});
