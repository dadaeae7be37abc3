// Account locking (MSC3939, spec v1.12) and suspension (MSC3823, v1.13) over HTTP on SQLite and
// PostgreSQL, set through the spec's admin endpoints (v1.18: /_matrix/client/v1/admin/{lock,suspend}, and
// MSC4323's unstable paths) and Synapse's admin API (PUT /v2/users {locked}, PUT /v1/suspend): a locked
// account gets 401 M_USER_LOCKED with soft_logout on every request but logout, and cannot log in; a
// suspended one reads, leaves and redacts its own events but cannot send, join, knock, invite, ban,
// create rooms, upload or change its profile (403 M_USER_SUSPENDED), and nothing it tried was stored;
// unlocking and unsuspending give everything back at once. Responses are checked against the spec's
// OpenAPI definitions; the admin endpoints' errors are the spec's; `m.account_moderation` is in
// /capabilities for admins only; GraphQL's accountModeration / setAccountLocked / setAccountSuspended do the same.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { loginUser, registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { gql } from "../graphql/client.ts";

const V3 = "/_matrix/client/v3";
const ADMIN = "/_matrix/client/v1/admin";
const enc = encodeURIComponent;

describe.each(backends())("account moderation on %s", (backend) => {
  let t: TestServer;
  let admin: Session;
  let other: Session;
  let txn = 0;

  beforeAll(async () => {
    t = await startTestServer({ backend });
    admin = await registerUser(t, "boss", "bosspass1");
    await t.hs.services.users.setAdmin(admin.user_id, true);
    other = await registerUser(t, "other");
  });
  afterAll(async () => {
    await t?.close();
  });

  const set = async (path: "lock" | "suspend", userId: string, value: boolean, token = admin.access_token) => {
    const key = path === "lock" ? "locked" : "suspended";
    const url = `${ADMIN}/${path}/${enc(userId)}`;
    const res = await t.call("PUT", url, { token, body: { [key]: value } });
    expectMatchesSpec(res, "PUT", url);
    return res;
  };
  const send = (who: Session, roomId: string, body = "hi") => t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/m${++txn}`, { token: who.access_token, body: { msgtype: "m.text", body } });

  it("a locked account: 401 M_USER_LOCKED with soft_logout everywhere but logout, no login; unlocking restores it", async () => {
    const lee = await registerUser(t, "lee");
    const res = await set("lock", lee.user_id, true);
    expect([res.status, res.json]).toEqual([200, { locked: true }]);
    const get = await t.call("GET", `${ADMIN}/lock/${enc(lee.user_id)}`, { token: admin.access_token });
    expectMatchesSpec(get, "GET", `${ADMIN}/lock/${enc(lee.user_id)}`);
    expect(get.json).toEqual({ locked: true });
    for (const [method, path] of [["GET", `${V3}/account/whoami`], ["GET", `${V3}/sync?timeout=0`], ["POST", `${V3}/createRoom`]] as const) {
      const r = await t.call(method, path, { token: lee.access_token, body: method === "POST" ? {} : undefined });
      expect([path, r.status, r.json.errcode, r.json.soft_logout]).toEqual([path, 401, "M_USER_LOCKED", true]);
    }
    const login = await t.call("POST", `${V3}/login`, { body: { type: "m.login.password", identifier: { type: "m.id.user", user: "lee" }, password: "password" } });
    expect([login.status, login.json.errcode, login.json.soft_logout]).toEqual([401, "M_USER_LOCKED", true]);
    // Synapse's admin API shows it.
    expect((await t.call("GET", `/_synapse/admin/v2/users/${enc(lee.user_id)}`, { token: admin.access_token })).json.locked).toBe(true);
    // Unlocked (here through Synapse's admin API): the same token works again.
    expect((await t.call("PUT", `/_synapse/admin/v2/users/${enc(lee.user_id)}`, { token: admin.access_token, body: { locked: false } })).status).toBe(200);
    expect((await t.call("GET", `${V3}/account/whoami`, { token: lee.access_token })).json.user_id).toBe(lee.user_id);
    // Locked again, it may still log out.
    await set("lock", lee.user_id, true);
    expect((await t.call("POST", `${V3}/logout`, { token: lee.access_token, body: {} })).status).toBe(200);
    expect((await t.call("GET", `${V3}/account/whoami`, { token: lee.access_token })).json.errcode).toBe("M_UNKNOWN_TOKEN");
  });

  it("a suspended account reads, leaves and redacts its own events; sends, joins, invites, creates, uploads and profile changes are refused", async () => {
    const sue = await registerUser(t, "sue");
    const room = await createRoom(t, other, { preset: "public_chat" });
    const second = await createRoom(t, other, { preset: "public_chat" });
    expect((await t.call("POST", `${V3}/join/${enc(room)}`, { token: sue.access_token, body: {} })).status).toBe(200);
    const mine = (await send(sue, room, "before")).json.event_id as string;
    const theirs = (await send(other, room, "theirs")).json.event_id as string;
    // Through Synapse's admin API.
    const s1 = await t.call("PUT", `/_synapse/admin/v1/suspend/${enc(sue.user_id)}`, { token: admin.access_token, body: { suspend: true } });
    expect([s1.status, s1.json]).toEqual([200, { [`user_${sue.user_id}_suspended`]: true }]);
    expect((await t.call("GET", `${ADMIN}/suspend/${enc(sue.user_id)}`, { token: admin.access_token })).json).toEqual({ suspended: true });
    const before = (await t.call("GET", `${V3}/rooms/${enc(room)}/messages?dir=b&limit=50`, { token: sue.access_token })).json.chunk.length;

    const refused: [string, string, string, unknown][] = [
      ["send", "PUT", `${V3}/rooms/${enc(room)}/send/m.room.message/x${++txn}`, { msgtype: "m.text", body: "nope" }],
      ["state", "PUT", `${V3}/rooms/${enc(room)}/state/org.example.state/`, { a: 1 }],
      ["join", "POST", `${V3}/join/${enc(second)}`, {}],
      ["knock", "POST", `${V3}/knock/${enc(second)}`, {}],
      ["invite", "POST", `${V3}/rooms/${enc(room)}/invite`, { user_id: admin.user_id }],
      ["ban", "POST", `${V3}/rooms/${enc(room)}/ban`, { user_id: other.user_id }],
      ["createRoom", "POST", `${V3}/createRoom`, {}],
      ["displayname", "PUT", `${V3}/profile/${enc(sue.user_id)}/displayname`, { displayname: "Sue!" }],
      ["redact theirs", "PUT", `${V3}/rooms/${enc(room)}/redact/${enc(theirs)}/r${++txn}`, {}],
    ];
    for (const [name, method, path, body] of refused) {
      const r = await t.call(method, path, { token: sue.access_token, body });
      expect([name, r.status, r.json.errcode]).toEqual([name, 403, "M_USER_SUSPENDED"]);
    }
    const upload = await t.call("POST", "/_matrix/media/v3/upload", { token: sue.access_token, raw: "bytes", headers: { "content-type": "text/plain" } });
    expect([upload.status, upload.json.errcode]).toEqual([403, "M_USER_SUSPENDED"]);
    // Nothing was stored: the room's history is as before, the profile unchanged.
    expect((await t.call("GET", `${V3}/rooms/${enc(room)}/messages?dir=b&limit=50`, { token: sue.access_token })).json.chunk.length).toBe(before);
    expect((await t.call("GET", `${V3}/profile/${enc(sue.user_id)}/displayname`)).json.displayname).toBe("sue");
    // Reading works; redacting its own event works; leaving works.
    expect((await t.call("GET", `${V3}/sync?timeout=0`, { token: sue.access_token })).status).toBe(200);
    expect((await t.call("PUT", `${V3}/rooms/${enc(room)}/redact/${enc(mine)}/r${++txn}`, { token: sue.access_token, body: {} })).status).toBe(200);
    expect((await t.call("POST", `${V3}/rooms/${enc(room)}/leave`, { token: sue.access_token, body: {} })).status).toBe(200);
    // Unsuspended (through the spec's endpoint): joining works at once.
    const s2 = await set("suspend", sue.user_id, false);
    expect(s2.json).toEqual({ suspended: false });
    expect((await t.call("POST", `${V3}/join/${enc(second)}`, { token: sue.access_token, body: {} })).status).toBe(200);
    expect((await send(sue, second)).status).toBe(200);
  });

  it("the admin endpoints' errors are the spec's; the capability is for admins only; the unstable paths answer too", async () => {
    const target = await registerUser(t, "target");
    const cases: [string, string, Session, unknown, number, string][] = [
      ["PUT", `${ADMIN}/suspend/${enc(target.user_id)}`, other, { suspended: true }, 403, "M_FORBIDDEN"],
      ["GET", `${ADMIN}/lock/${enc(target.user_id)}`, other, undefined, 403, "M_FORBIDDEN"],
      ["PUT", `${ADMIN}/lock/${enc(admin.user_id)}`, admin, { locked: true }, 403, "M_FORBIDDEN"],
      ["PUT", `${ADMIN}/suspend/${enc("@someone:elsewhere.example")}`, admin, { suspended: true }, 400, "M_INVALID_PARAM"],
      ["GET", `${ADMIN}/suspend/${enc(`@nobody:${t.config.server_name}`)}`, admin, undefined, 404, "M_NOT_FOUND"],
      ["PUT", `${ADMIN}/lock/${enc(target.user_id)}`, admin, { locked: "yes" }, 400, "M_BAD_JSON"],
    ];
    for (const [method, path, who, body, status, errcode] of cases) {
      const r = await t.call(method, path, { token: who.access_token, body });
      expect({ path, status: r.status, errcode: r.json.errcode }).toEqual({ path, status, errcode });
      expectMatchesSpec(r, method, path);
    }
    // Another admin may not be suspended.
    const second = await registerUser(t, "admin2");
    await t.hs.services.users.setAdmin(second.user_id, true);
    expect((await t.call("PUT", `${ADMIN}/suspend/${enc(second.user_id)}`, { token: admin.access_token, body: { suspended: true } })).json.errcode).toBe("M_FORBIDDEN");
    expect((await t.call("GET", `${V3}/account/whoami`, { token: target.access_token })).status).toBe(200);
    const caps = await t.call("GET", `${V3}/capabilities`, { token: (await loginUser(t, "boss", "bosspass1")).access_token });
    expect(caps.json.capabilities["m.account_moderation"]).toEqual({ suspend: true, lock: true });
    expect((await t.call("GET", `${V3}/capabilities`, { token: other.access_token })).json.capabilities["m.account_moderation"]).toBeUndefined();
    const unstable = await t.call("PUT", `/_matrix/client/unstable/uk.timedout.msc4323/admin/suspend/${enc(target.user_id)}`, { token: admin.access_token, body: { suspended: true } });
    expect([unstable.status, unstable.json]).toEqual([200, { suspended: true }]);
    // GraphQL's face of the same operations.
    const locked = await gql(t, `mutation ($u: String!) { setAccountLocked(userId: $u, locked: true) }`, { u: target.user_id }, admin.access_token);
    expect(locked.body).toEqual({ data: { setAccountLocked: true } });
    const flags = await gql(t, `query ($u: String!) { accountModeration(userId: $u) { userId locked suspended } }`, { u: target.user_id }, admin.access_token);
    expect(flags.body.data.accountModeration).toEqual({ userId: target.user_id, locked: true, suspended: true });
    expect((await t.call("GET", `${V3}/account/whoami`, { token: target.access_token })).json.errcode).toBe("M_USER_LOCKED");
    const denied = await gql(t, `mutation ($u: String!) { setAccountSuspended(userId: $u, suspended: false) }`, { u: target.user_id }, other.access_token);
    expect(denied.body.errors?.[0]?.extensions?.errcode).toBe("M_FORBIDDEN");
  });
});
