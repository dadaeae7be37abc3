// Requests a mature client-server test suite makes that Weft used to refuse (issue 16), on SQLite and
// PostgreSQL: sending without a transaction id (and its JSON number checks), OpenID tokens and the
// federation userinfo exchange, the /account/3pid endpoints and their errors, the unstable
// device_signing alias, a profile field never set, extra content in a join, the answers' Content-Type,
// invalid UTF-8, deleting a device with another user's credentials, redacting across rooms and upgrading
// a room that does not exist.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { loginUser, registerUser } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { crossSigningKeys, expectError } from "../helpers/e2ee.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("client-server conformance: requests on %s", (backend) => {
  const { t, users: { alice, bob } } = withServer({ backend, users: ["alice", "bob"] });

  async function eventCount(roomId: string): Promise<number> {
    return t.hs.services.db.event.count({ where: { roomId } });
  }

  it("sends with POST and no transaction id: each request is a new event", async () => {
    const roomId = await createRoom(t, alice);
    const p = `${V3}/rooms/${enc(roomId)}/send/m.room.message`;
    const one = await t.call("POST", p, { token: alice.access_token, body: { msgtype: "m.text", body: "old client" } });
    expect(one.status, JSON.stringify(one.json)).toBe(200);
    expect(one.json.event_id).toMatch(/^\$/);
    const two = await t.call("POST", `/_matrix/client/r0/rooms/${enc(roomId)}/send/m.room.message`, { token: alice.access_token, body: { msgtype: "m.text", body: "old client" } });
    expect(two.status).toBe(200);
    expect(two.json.event_id).not.toBe(one.json.event_id);
    const ev = await t.call("GET", `${V3}/rooms/${enc(roomId)}/event/${enc(one.json.event_id)}`, { token: alice.access_token });
    expect(ev.json.content).toEqual({ msgtype: "m.text", body: "old client" });
    // A redaction without a transaction id too.
    const red = await t.call("POST", `${V3}/rooms/${enc(roomId)}/redact/${enc(two.json.event_id)}`, { token: alice.access_token, body: { reason: "dup" } });
    expect(red.status, JSON.stringify(red.json)).toBe(200);
    expect((await t.call("GET", `${V3}/rooms/${enc(roomId)}/event/${enc(two.json.event_id)}`, { token: alice.access_token })).json.content).toEqual({});
  });

  it("refuses floats, integers out of the canonical range and non-JSON numbers in sent content, storing nothing", async () => {
    const roomId = await createRoom(t, alice, { room_version: "6" });
    const p = `${V3}/rooms/${enc(roomId)}/send/sytest.dummy`;
    const before = await eventCount(roomId);
    for (const body of [2 ** 53, -(2 ** 53), 1.1, { nested: [0.5] }]) {
      expectError(await t.call("POST", p, { token: alice.access_token, body: { msgtype: "sytest.dummy", body } }), 400, "M_BAD_JSON");
      expectError(await t.call("PUT", `${p}/n${Math.random()}`, { token: alice.access_token, body: { msgtype: "sytest.dummy", body } }), 400, "M_BAD_JSON");
    }
    for (const raw of ['{"body": NaN}', '{"body": Infinity}', '{"body": -Infinity}']) {
      const res = await t.call("POST", p, { token: alice.access_token, raw, headers: { "content-type": "application/json" } });
      expectError(res, 400, "M_NOT_JSON");
    }
    // The limits themselves are fine.
    expect((await t.call("POST", p, { token: alice.access_token, body: { body: 2 ** 53 - 1, neg: -(2 ** 53 - 1) } })).status).toBe(200);
    expect(await eventCount(roomId)).toBe(before + 1);
    // Oversized content is M_TOO_LARGE on this path too.
    expectError(await t.call("POST", p, { token: alice.access_token, body: { body: "x".repeat(70_000) } }), 413, "M_TOO_LARGE");
  });

  it("issues OpenID tokens that the federation userinfo endpoint exchanges for the user id, under both brands", async () => {
    const p = `${V3}/user/${enc(alice.user_id)}/openid/request_token`;
    const res = await t.call("POST", p, { token: alice.access_token, body: {} });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "POST", p);
    expect(res.json).toMatchObject({ token_type: "Bearer", matrix_server_name: "weft.test", expires_in: 3600 });
    for (const brand of ["_matrix", "_proto"]) {
      const info = await t.call("GET", `/${brand}/federation/v1/openid/userinfo?access_token=${enc(res.json.access_token)}`);
      expect([info.status, info.json]).toEqual([200, { sub: alice.user_id }]);
    }
    expectMatchesSpec(await t.call("GET", `/_matrix/federation/v1/openid/userinfo?access_token=${enc(res.json.access_token)}`), "GET", "/_matrix/federation/v1/openid/userinfo");
    // Not another user's; not a guest's; a forged or missing token is refused.
    expectError(await t.call("POST", `${V3}/user/${enc(bob.user_id)}/openid/request_token`, { token: alice.access_token, body: {} }), 403, "M_FORBIDDEN");
    const guest = await t.call("POST", `${V3}/register?kind=guest`, { body: {} });
    expectError(await t.call("POST", `${V3}/user/${enc(guest.json.user_id)}/openid/request_token`, { token: guest.json.access_token, body: {} }), 403, "M_GUEST_ACCESS_FORBIDDEN");
    const [u, e] = String(res.json.access_token).split(".");
    const forged = `${Buffer.from(bob.user_id).toString("base64url")}.${e}.${String(res.json.access_token).split(".")[2]}`;
    expect(u).not.toBe(forged.split(".")[0]);
    expectError(await t.call("GET", `/_matrix/federation/v1/openid/userinfo?access_token=${enc(forged)}`), 401, "M_UNKNOWN_TOKEN");
    expectError(await t.call("GET", `/_matrix/federation/v1/openid/userinfo?access_token=${enc(alice.access_token)}`), 401, "M_UNKNOWN_TOKEN");
    expectError(await t.call("GET", "/_matrix/federation/v1/openid/userinfo"), 401, "M_MISSING_TOKEN");
  });

  it("serves /account/3pid and its add, bind, unbind and delete with their errors", async () => {
    const list = await t.call("GET", `${V3}/account/3pid`, { token: alice.access_token });
    expect([list.status, list.json]).toEqual([200, { threepids: [] }]);
    expectMatchesSpec(list, "GET", `${V3}/account/3pid`);

    const creds = { client_secret: "secret123", sid: "nosuchsession" };
    const addPath = `${V3}/account/3pid/add`;
    const first = await t.call("POST", addPath, { token: alice.access_token, body: creds });
    expect(first.status).toBe(401);
    expect(first.json.flows).toEqual([{ stages: ["m.login.password"] }]);
    const auth = { type: "m.login.password", identifier: { type: "m.id.user", user: "alice" }, password: "password", session: first.json.session };
    expectError(await t.call("POST", addPath, { token: alice.access_token, body: { ...creds, auth } }), 400, "M_THREEPID_AUTH_FAILED");
    expectError(await t.call("POST", addPath, { token: alice.access_token, body: { sid: "x" } }), 400, "M_MISSING_PARAM");
    expectError(await t.call("POST", addPath, { token: alice.access_token, body: { sid: "x", client_secret: "not valid!" } }), 400, "M_INVALID_PARAM");
    expectError(await t.call("POST", `${V3}/account/3pid`, { token: alice.access_token, body: { three_pid_creds: creds } }), 400, "M_THREEPID_AUTH_FAILED");
    expectError(await t.call("POST", `${V3}/account/3pid`, { token: alice.access_token, body: {} }), 400, "M_MISSING_PARAM");

    // An identity server at an address this server may not reach (loopback is in ip_range_blacklist).
    const bind = { ...creds, id_server: "127.0.0.1:1", id_access_token: "abc" };
    expectError(await t.call("POST", `${V3}/account/3pid/bind`, { token: alice.access_token, body: bind }), 400, "M_SERVER_NOT_TRUSTED");
    expectError(await t.call("POST", `${V3}/account/3pid/bind`, { token: alice.access_token, body: { ...bind, id_server: "https://id.example.org" } }), 400, "M_INVALID_PARAM");
    expectError(await t.call("POST", `${V3}/account/3pid/bind`, { token: alice.access_token, body: { ...bind, id_server: undefined } }), 400, "M_MISSING_PARAM");

    for (const what of ["unbind", "delete"]) {
      const p = `${V3}/account/3pid/${what}`;
      const res = await t.call("POST", p, { token: alice.access_token, body: { medium: "email", address: "alice@example.org" } });
      expect([res.status, res.json], what).toEqual([200, { id_server_unbind_result: "no-support" }]);
      expectMatchesSpec(res, "POST", p);
      expectError(await t.call("POST", p, { token: alice.access_token, body: { medium: "pigeon", address: "x" } }), 400, "M_INVALID_PARAM");
      expectError(await t.call("POST", p, { token: alice.access_token, body: { medium: "email" } }), 400, "M_MISSING_PARAM");
    }
    const guest = await t.call("POST", `${V3}/register?kind=guest`, { body: {} });
    expectError(await t.call("GET", `${V3}/account/3pid`, { token: guest.json.access_token }), 403, "M_GUEST_ACCESS_FORBIDDEN");
    expectError(await t.call("GET", `${V3}/account/3pid`), 401, "M_MISSING_TOKEN");
  });

  it("serves cross-signing key upload under /unstable too", async () => {
    const carol = await registerUser(t, "carol");
    const keys = crossSigningKeys(carol.user_id);
    const p = "/_matrix/client/unstable/keys/device_signing/upload";
    // The first upload needs no UIA (as on /v3).
    const done = await t.call("POST", p, { token: carol.access_token, body: keys.body });
    expect(done.status, JSON.stringify(done.json)).toBe(200);
    const q = await t.call("POST", `${V3}/keys/query`, { token: carol.access_token, body: { device_keys: { [carol.user_id]: [] } } });
    expect(q.json.master_keys[carol.user_id].keys).toEqual(keys.body.master_key.keys);
  });

  it("answers a profile field the user never set with {}, as Synapse 1.163; an unknown user with 404", async () => {
    for (const prefix of [V3, "/_matrix/client/r0"]) {
      const res = await t.call("GET", `${prefix}/profile/${enc(bob.user_id)}/avatar_url`);
      expect([res.status, res.json]).toEqual([200, {}]);
    }
    expectError(await t.call("GET", `${V3}/profile/${enc("@nobody:weft.test")}/avatar_url`), 404, "M_NOT_FOUND");
  });

  it("puts the extra keys of a join request into the member event (third_party_signed aside)", async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat" });
    const res = await t.call("POST", `${V3}/join/${enc(roomId)}`, {
      token: bob.access_token,
      body: { reason: "hello", "org.example.flair": { colour: "teal" }, third_party_signed: { sender: "x", mxid: "y", token: "z", signatures: {} } },
    });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const member = await t.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(bob.user_id)}`, { token: bob.access_token });
    expect(member.json).toEqual({ membership: "join", displayname: "bob", reason: "hello", "org.example.flair": { colour: "teal" } });
    // The same join again changes nothing; other content is a new member event.
    const count = await eventCount(roomId);
    await t.call("POST", `${V3}/rooms/${enc(roomId)}/join`, { token: bob.access_token, body: { reason: "hello", "org.example.flair": { colour: "teal" } } });
    expect(await eventCount(roomId)).toBe(count);
    await t.call("POST", `${V3}/rooms/${enc(roomId)}/join`, { token: bob.access_token, body: { "org.example.flair": { colour: "red" } } });
    const after = await t.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(bob.user_id)}`, { token: bob.access_token });
    expect(after.json).toEqual({ membership: "join", displayname: "bob", "org.example.flair": { colour: "red" } });
  });

  it("sends JSON as Content-Type: application/json without a charset", async () => {
    const ok = await t.call("GET", `${V3}/account/whoami`, { token: alice.access_token });
    expect(ok.headers.get("content-type")).toBe("application/json");
    const err = await t.call("GET", `${V3}/account/whoami`);
    expect(err.headers.get("content-type")).toBe("application/json");
    const versions = await t.call("GET", "/_matrix/client/versions");
    expect(versions.headers.get("content-type")).toBe("application/json");
  });

  it("refuses a body that is not valid UTF-8 with M_NOT_JSON, storing nothing", async () => {
    const roomId = await createRoom(t, alice);
    const before = await eventCount(roomId);
    const bytes = Buffer.concat([Buffer.from('{"msgtype":"m.text","body":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]);
    const res = await fetch(`${t.baseUrl}${V3}/rooms/${enc(roomId)}/send/m.room.message/utf8`, {
      method: "PUT",
      headers: { authorization: `Bearer ${alice.access_token}`, "content-type": "application/json" },
      body: bytes,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { errcode: string }).errcode).toBe("M_NOT_JSON");
    expect(await eventCount(roomId)).toBe(before);
    // Valid multi-byte UTF-8 is fine.
    const good = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/utf8b`, { token: alice.access_token, body: { msgtype: "m.text", body: "é😀" } });
    expect(good.status).toBe(200);
  });

  it("refuses to delete a device with another user's credentials (403), then deletes it with the owner's", async () => {
    const dave = await registerUser(t, "dave");
    const eve = await registerUser(t, "eve");
    const second = await loginUser(t, "dave", "password", { device_id: "login_device" });
    const p = `${V3}/devices/${second.device_id}`;
    const eveAuth = { type: "m.login.password", identifier: { type: "m.id.user", user: eve.user_id }, password: "password" };
    expectError(await t.call("DELETE", p, { token: dave.access_token, body: { auth: eveAuth } }), 403, "M_FORBIDDEN");
    expect((await t.call("GET", p, { token: dave.access_token })).status).toBe(200);
    // A wrong password of another user is still a failed stage (401), not a refusal.
    expect((await t.call("DELETE", p, { token: dave.access_token, body: { auth: { ...eveAuth, password: "wrong" } } })).status).toBe(401);
    const daveAuth = { type: "m.login.password", identifier: { type: "m.id.user", user: dave.user_id }, password: "password" };
    expect((await t.call("DELETE", p, { token: dave.access_token, body: { auth: daveAuth } })).status).toBe(200);
    expectError(await t.call("GET", p, { token: dave.access_token }), 404, "M_NOT_FOUND");
  });

  it("refuses to redact an event of another room (400) and to upgrade a room that does not exist (404)", async () => {
    const a = await createRoom(t, alice);
    const b = await createRoom(t, alice);
    const sent = await t.call("PUT", `${V3}/rooms/${enc(b)}/send/m.room.message/r1`, { token: alice.access_token, body: { msgtype: "m.text", body: "b" } });
    const before = await eventCount(a);
    const res = await t.call("PUT", `${V3}/rooms/${enc(a)}/redact/${enc(sent.json.event_id)}/r2`, { token: alice.access_token, body: {} });
    expect(res.status, JSON.stringify(res.json)).toBe(400);
    expect(typeof res.json.errcode).toBe("string");
    expect(await eventCount(a)).toBe(before);
    expectError(await t.call("POST", `${V3}/rooms/${enc("!nosuchroom:weft.test")}/upgrade`, { token: alice.access_token, body: { new_version: "10" } }), 404, "M_NOT_FOUND");
  });
});
