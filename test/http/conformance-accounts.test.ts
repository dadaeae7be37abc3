// Accounts and keys as a mature client-server test suite uses them (issue 16), on SQLite and PostgreSQL:
// a completed registration session reused (idempotent registration), a guest upgrading to a full account,
// device keys without a valid self-signature and a key backup whose auth_data is not an object.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectError } from "../helpers/e2ee.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("client-server conformance: accounts on %s", (backend) => {
  const { t, users: { alice } } = withServer({ backend, users: ["alice"] });

  async function registerTwice(body: Record<string, unknown>) {
    const first = await t.call("POST", `${V3}/register`, { body });
    expect(first.status).toBe(401);
    const auth = { type: "m.login.dummy", session: first.json.session };
    const one = await t.call("POST", `${V3}/register`, { body: { ...body, auth } });
    expect(one.status, JSON.stringify(one.json)).toBe(200);
    const two = await t.call("POST", `${V3}/register`, { body: { ...body, auth } });
    return { one, two };
  }

  it("answers a retry with a completed registration session with the same account, logged in again", async () => {
    const users = await t.hs.services.db.user.count();
    const { one, two } = await registerTwice({ password: "sUp3rs3kr1t" });
    expect(two.status, JSON.stringify(two.json)).toBe(200);
    expect(two.json.user_id).toBe(one.json.user_id);
    expect(two.json.access_token).not.toBe(one.json.access_token);
    expect(await t.hs.services.db.user.count()).toBe(users + 1);
    const who = await t.call("GET", `${V3}/account/whoami`, { token: two.json.access_token });
    expect(who.json.user_id).toBe(one.json.user_id);

    // With a username: the taken name is the session's own account, not M_USER_IN_USE.
    const named = await registerTwice({ username: "idempotent", password: "sUp3rs3kr1t" });
    expect(named.two.status, JSON.stringify(named.two.json)).toBe(200);
    expect(named.two.json.user_id).toBe("@idempotent:weft.test");
    // Another session still cannot take that name.
    const other = await t.call("POST", `${V3}/register`, { body: { username: "idempotent", password: "x", auth: { type: "m.login.dummy" } } });
    expectError(other, 400, "M_USER_IN_USE");
  });

  it("upgrades a guest to a full account that keeps its user id and may do what guests may not", async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat" }); // no guest access
    const guest = (await t.call("POST", `${V3}/register?kind=guest`, { body: {} })).json;
    expectError(await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: guest.access_token, body: {} }), 403, "M_FORBIDDEN");
    const localpart = String(guest.user_id).slice(1).split(":")[0]!;
    expectError(await t.call("POST", `${V3}/createRoom`, { token: guest.access_token, body: {} }), 403, "M_GUEST_ACCESS_FORBIDDEN");

    // Another guest's token cannot upgrade this account.
    const other = (await t.call("POST", `${V3}/register?kind=guest`, { body: {} })).json;
    expectError(await t.call("POST", `${V3}/register`, { body: { username: localpart, password: "SIR_Arthur_David", guest_access_token: other.access_token } }), 403, "M_FORBIDDEN");
    expectError(await t.call("POST", `${V3}/register`, { body: { username: localpart, password: "x", guest_access_token: alice.access_token } }), 403, "M_FORBIDDEN");

    const body = { username: localpart, password: "SIR_Arthur_David", guest_access_token: guest.access_token };
    const first = await t.call("POST", `${V3}/register`, { body });
    expect(first.status, JSON.stringify(first.json)).toBe(401);
    const done = await t.call("POST", `${V3}/register`, { body: { ...body, auth: { type: "m.login.dummy" } } });
    expect(done.status, JSON.stringify(done.json)).toBe(200);
    expect(done.json.user_id).toBe(guest.user_id);

    const who = await t.call("GET", `${V3}/account/whoami`, { token: done.json.access_token });
    expect(who.json).toMatchObject({ user_id: guest.user_id, is_guest: false });
    // The old guest token now belongs to a full user too (as in Synapse).
    expect((await t.call("GET", `${V3}/account/whoami`, { token: guest.access_token })).json.is_guest).toBe(false);
    // A room closed to guests is open to the upgraded account, and so is createRoom.
    const join = await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: done.json.access_token, body: {} });
    expect(join.status, JSON.stringify(join.json)).toBe(200);
    expect((await t.call("POST", `${V3}/createRoom`, { token: done.json.access_token, body: {} })).status).toBe(200);
    // And it logs in with its new password.
    const login = await t.call("POST", `${V3}/login`, { body: { type: "m.login.password", identifier: { type: "m.id.user", user: localpart }, password: "SIR_Arthur_David" } });
    expect(login.status, JSON.stringify(login.json)).toBe(200);
    // Upgrading twice is no upgrade.
    expectError(await t.call("POST", `${V3}/register`, { body: { ...body, auth: { type: "m.login.dummy" } } }), 403, "M_FORBIDDEN");
  });

  it("stores device keys without a valid self-signature (clients verify it) and serves them as uploaded", async () => {
    const keys = {
      user_id: alice.user_id,
      device_id: alice.device_id,
      algorithms: ["m.olm.v1.curve25519-aes-sha2"],
      keys: { [`curve25519:${alice.device_id}`]: "placeholder", [`ed25519:${alice.device_id}`]: "placeholder" },
      signatures: { [alice.user_id]: { [`ed25519:${alice.device_id}`]: "not-a-signature" } },
    };
    const res = await t.call("POST", `${V3}/keys/upload`, { token: alice.access_token, body: { device_keys: keys } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const q = await t.call("POST", `${V3}/keys/query`, { token: alice.access_token, body: { device_keys: { [alice.user_id]: [] } } });
    expect(q.json.device_keys[alice.user_id][alice.device_id]).toMatchObject(keys);
    // The spec's required fields still are (one missing: M_MISSING_PARAM, as Synapse).
    const { signatures: _s, ...unsigned } = keys;
    expectError(await t.call("POST", `${V3}/keys/upload`, { token: alice.access_token, body: { device_keys: unsigned } }), 400, "M_MISSING_PARAM");
  });

  it("stores a key backup whose auth_data is not an object, and replaces it", async () => {
    const create = await t.call("POST", `${V3}/room_keys/version`, { token: alice.access_token, body: { algorithm: "m.megolm_backup.v1", auth_data: "anopaquestring" } });
    expect(create.status, JSON.stringify(create.json)).toBe(200);
    const version = create.json.version as string;
    const got = await t.call("GET", `${V3}/room_keys/version/${version}`, { token: alice.access_token });
    expect(got.json).toMatchObject({ algorithm: "m.megolm_backup.v1", auth_data: "anopaquestring", version });
    const put = await t.call("PUT", `${V3}/room_keys/version/${version}`, { token: alice.access_token, body: { algorithm: "m.megolm_backup.v1", auth_data: "adifferentopaquestring", version } });
    expect(put.status, JSON.stringify(put.json)).toBe(200);
    expect((await t.call("GET", `${V3}/room_keys/version`, { token: alice.access_token })).json.auth_data).toBe("adifferentopaquestring");
  });
});
