// The account's sessions and security, knocking, forgetting and capabilities on the GraphQL face, on
// SQLite and PostgreSQL: knockRoom and forgetRoom as REST reads the room; logoutAll ends every session;
// changePassword and deactivateAccount answer AuthRequired until the password stage comes as `auth`
// (a wrong password changes nothing); usernameAvailable and capabilities agree with REST. Bad input
// answers the REST face's errcode with extensions.code.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { createRoom } from "../helpers/rooms.ts";
import { gql } from "./client.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const WHOAMI = `${V3}/account/whoami`;

describe.each(backends())("GraphQL account security, knocking and capabilities on %s", (backend) => {
  const { t, users: { alice, bob, carol, erin, erin2, frank } } = withServer({ backend, users: ["alice", "bob", "carol", "erin", "frank"], logins: { erin2: "erin" } });

  const ok = async (query: string, variables: Record<string, unknown>, token: string | undefined) => {
    const res = await gql(t, query, variables, token);
    expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
    return res.body.data;
  };
  const status = async (token: string) => (await t.call("GET", WHOAMI, { token })).status;
  const login = (user: string, password: string) =>
    t.call("POST", `${V3}/login`, { body: { type: "m.login.password", identifier: { type: "m.id.user", user }, password } });
  const password = (user: string, pw: string) => ({ type: "m.login.password", identifier: { type: "m.id.user", user }, password: pw });

  it("knockRoom knocks as REST reads the member; knocking on a public room is refused", async () => {
    const roomId = await createRoom(t, alice, { initial_state: [{ type: "m.room.join_rules", state_key: "", content: { join_rule: "knock" } }] });
    const knocked = await ok(`mutation ($r: String!) { knockRoom(roomIdOrAlias: $r, reason: "let me in") { roomId } }`, { r: roomId }, bob.access_token);
    expect(knocked.knockRoom.roomId).toBe(roomId);
    const member = await t.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(bob.user_id)}`, { token: alice.access_token });
    expect(member.json).toMatchObject({ membership: "knock", reason: "let me in" });

    const open = await createRoom(t, alice, { preset: "public_chat" });
    const refused = await gql(t, `mutation ($r: String!) { knockRoom(roomIdOrAlias: $r) { roomId } }`, { r: open }, bob.access_token);
    expect(refused.body.errors?.[0]?.extensions).toMatchObject({ errcode: "M_FORBIDDEN", code: "FORBIDDEN" });
    expect((await t.call("GET", `${V3}/rooms/${enc(open)}/state/m.room.member/${enc(bob.user_id)}`, { token: alice.access_token })).status).toBe(404);
  });

  it("forgetRoom: refused while joined, then the left room is gone from sync", async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat" });
    expect((await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} })).status).toBe(200);
    const inRoom = await gql(t, `mutation ($r: String!) { forgetRoom(roomId: $r) }`, { r: roomId }, bob.access_token);
    expect(inRoom.body.errors?.[0]?.extensions?.errcode).toBe("M_UNKNOWN");
    expect((await t.call("POST", `${V3}/rooms/${enc(roomId)}/leave`, { token: bob.access_token, body: {} })).status).toBe(200);
    const left = async () => {
      const sync = await t.call("GET", `${V3}/sync?timeout=0&filter=${enc(JSON.stringify({ room: { include_leave: true } }))}`, { token: bob.access_token });
      return Object.keys(sync.json.rooms?.leave ?? {});
    };
    expect(await left()).toContain(roomId);
    expect((await ok(`mutation ($r: String!) { forgetRoom(roomId: $r) }`, { r: roomId }, bob.access_token)).forgetRoom).toBe(true);
    expect(await left()).not.toContain(roomId);
  });

  it("logoutAll ends every session of the viewer's", async () => {
    expect(await status(erin2.access_token)).toBe(200);
    expect((await ok(`mutation { logoutAll }`, {}, erin.access_token)).logoutAll).toBe(true);
    expect(await status(erin.access_token)).toBe(401);
    expect(await status(erin2.access_token)).toBe(401);
  });

  it("changePassword: AuthRequired, a wrong password changes nothing, the right one changes it", async () => {
    const Q = `mutation ($pw: String!, $auth: AuthInput) { changePassword(newPassword: $pw, logoutDevices: false, auth: $auth) {
      __typename ... on PasswordChanged { otherDevicesLoggedOut } ... on AuthRequired { flows { stages } session completed errcode } } }`;
    const first = (await ok(Q, { pw: "n3w-Passw0rd!" }, frank.access_token)).changePassword;
    expect(first).toMatchObject({ __typename: "AuthRequired", completed: [], errcode: null });
    expect(first.flows).toContainEqual({ stages: ["m.login.password"] });
    const wrong = (await ok(Q, { pw: "n3w-Passw0rd!", auth: { ...password(frank.user_id, "nope"), session: first.session } }, frank.access_token)).changePassword;
    expect(wrong).toMatchObject({ __typename: "AuthRequired", errcode: "M_FORBIDDEN" });
    expect((await login("frank", "password")).status).toBe(200);
    const done = (await ok(Q, { pw: "n3w-Passw0rd!", auth: { ...password(frank.user_id, "password"), session: first.session } }, frank.access_token)).changePassword;
    expect(done).toEqual({ __typename: "PasswordChanged", otherDevicesLoggedOut: false });
    expect((await login("frank", "password")).status).toBe(403);
    expect((await login("frank", "n3w-Passw0rd!")).status).toBe(200);
    expect(await status(frank.access_token)).toBe(200);
  });

  it("deactivateAccount: AuthRequired first, then the account is gone", async () => {
    const Q = `mutation ($auth: AuthInput) { deactivateAccount(auth: $auth) { __typename ... on AccountDeactivated { idServerUnbindResult } ... on AuthRequired { session errcode } } }`;
    const first = (await ok(Q, {}, carol.access_token)).deactivateAccount;
    expect(first.__typename).toBe("AuthRequired");
    expect(await status(carol.access_token)).toBe(200);
    const done = (await ok(Q, { auth: { ...password(carol.user_id, "password"), session: first.session } }, carol.access_token)).deactivateAccount;
    expect(done).toEqual({ __typename: "AccountDeactivated", idServerUnbindResult: "no-support" });
    expect(await status(carol.access_token)).toBe(401);
    expect((await login("carol", "password")).status).toBe(403);
  });

  it("usernameAvailable and capabilities agree with REST; an invalid username is M_INVALID_USERNAME", async () => {
    expect((await ok(`{ usernameAvailable(username: "alice") }`, {}, undefined)).usernameAvailable).toBe(false);
    expect((await t.call("GET", `${V3}/register/available?username=alice`)).json.errcode).toBe("M_USER_IN_USE");
    expect((await ok(`{ usernameAvailable(username: "nobody-yet") }`, {}, undefined)).usernameAvailable).toBe(true);
    expect((await t.call("GET", `${V3}/register/available?username=nobody-yet`)).json).toEqual({ available: true });
    const bad = await gql(t, `{ usernameAvailable(username: "no spaces!") }`, {});
    expect(bad.body.errors?.[0]?.extensions).toMatchObject({ errcode: "M_INVALID_USERNAME", code: "BAD_USER_INPUT" });

    const caps = (await ok(`{ capabilities { changePassword defaultRoomVersion roomVersions { id stability } setDisplayname setAvatarUrl threepidChanges getLoginToken forgetForcedUponLeave all } }`, {}, alice.access_token)).capabilities;
    const rest = (await t.call("GET", `${V3}/capabilities`, { token: alice.access_token })).json.capabilities;
    expect(caps.all).toEqual(rest);
    expect(caps.changePassword).toBe(rest["m.change_password"].enabled);
    expect(caps.defaultRoomVersion).toBe(rest["m.room_versions"].default);
    expect(Object.fromEntries(caps.roomVersions.map((v: { id: string; stability: string }) => [v.id, v.stability]))).toEqual(rest["m.room_versions"].available);
    expect([caps.setDisplayname, caps.setAvatarUrl, caps.threepidChanges, caps.getLoginToken, caps.forgetForcedUponLeave]).toEqual(
      ["m.set_displayname", "m.set_avatar_url", "m.3pid_changes", "m.get_login_token", "m.forget_forced_upon_leave"].map((k) => rest[k].enabled),
    );
    const noToken = await gql(t, `{ capabilities { changePassword } }`, {});
    expect(noToken.body.errors?.[0]?.extensions).toMatchObject({ errcode: "M_MISSING_TOKEN", code: "UNAUTHENTICATED" });
  });
});
