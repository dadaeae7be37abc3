// The user admin API over HTTP on both prefixes, on SQLite and PostgreSQL: the user list (paging,
// filters, order, profile attributes), details, create or modify (201/200), deactivate with erase, reset
// password, admin flag, whois (admin API and client API), devices, joined rooms, memberships, login as a
// user — each refused with 403 M_FORBIDDEN for non-admins and with Synapse's errors for bad input.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request } from "undici";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { loginUser, registerUser, type Session } from "../helpers/users.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const V1 = ["/_synapse/admin/v1", "/_impl/admin/v1"] as const;
const V2 = ["/_synapse/admin/v2", "/_impl/admin/v2"] as const;

describe.each(backends())("user admin API (%s)", (backend) => {
  let t: TestServer;
  let admin: Session;
  let bob: Session;
  let carol: Session;
  const call = (method: string, path: string, body?: unknown, token = admin.access_token) => t.call(method, path, { token, body });

  beforeAll(async () => {
    t = await startTestServer({ backend, config: { password_config: { policy: { enabled: true, minimum_length: 8, require_digit: true } } } });
    admin = await registerUser(t, "admin", "adminpass1");
    await t.hs.services.users.setAdmin(admin.user_id, true);
    bob = await registerUser(t, "bob", "bobpass123");
    carol = await registerUser(t, "carol", "carolpass1");
    await call("PUT", `/_matrix/client/v3/profile/${carol.user_id}/displayname`, { displayname: "zeta carol" }, carol.access_token);
    await t.call("POST", "/_matrix/client/v3/register?kind=guest", { body: {} });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("refuses every call of a non-admin with 403 M_FORBIDDEN, and without a token with 401", async () => {
    const calls: [string, string, unknown?][] = [
      ["GET", `${V2[0]}/users`],
      ["GET", `${V2[1]}/users/${bob.user_id}`],
      ["PUT", `${V2[0]}/users/@new:weft.test`, { password: "whatever12" }],
      ["POST", `${V1[0]}/deactivate/${carol.user_id}`, {}],
      ["POST", `${V1[1]}/reset_password/${carol.user_id}`, { new_password: "another123" }],
      ["GET", `${V1[0]}/whois/${carol.user_id}`],
      ["GET", `${V2[0]}/users/${carol.user_id}/devices`],
      ["GET", `${V1[0]}/users/${carol.user_id}/joined_rooms`],
      ["GET", `${V1[0]}/users/${carol.user_id}/memberships`],
      ["GET", `${V1[0]}/users/${carol.user_id}/admin`],
      ["PUT", `${V1[0]}/users/${bob.user_id}/admin`, { admin: true }],
      ["POST", `${V1[0]}/users/${carol.user_id}/login`, {}],
      ["GET", `${V1[1]}/server_version`],
    ];
    for (const [method, path, body] of calls) {
      const r = await call(method, path, body, bob.access_token);
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.json.errcode).toBe("M_FORBIDDEN");
      const anon = await t.call(method, path, { body });
      expect(anon.status, `${method} ${path}`).toBe(401);
      expect(anon.json.errcode).toBe("M_MISSING_TOKEN");
    }
    // Nothing changed.
    expect(await t.hs.services.users.exists("@new:weft.test")).toBe(false);
    expect((await t.hs.services.users.get(bob.user_id))!.isAdmin).toBe(false);
    expect((await t.hs.services.users.get(carol.user_id))!.deactivated).toBe(false);
  });

  it("lists users with their profile attributes, total and paging", async () => {
    for (const prefix of V2) {
      const r = await call("GET", `${prefix}/users?guests=false`);
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      expect(r.json.total).toBe(3);
      expect(r.json.next_token).toBeUndefined();
      expect(r.json.users.map((u: any) => u.name)).toEqual(["@admin:weft.test", "@bob:weft.test", "@carol:weft.test"]);
      const c = r.json.users[2];
      expect(c).toMatchObject({ name: "@carol:weft.test", is_guest: false, admin: false, user_type: null, deactivated: false, erased: false, shadow_banned: false, displayname: "zeta carol", avatar_url: null, locked: false });
      expect(c.creation_ts).toBeGreaterThan(1_600_000_000_000); // ms in the list
    }
    const all = await call("GET", `${V2[0]}/users`);
    expect(all.json.total).toBe(4); // the guest too
    expect(all.json.users.filter((u: any) => u.is_guest)).toHaveLength(1);

    const page1 = await call("GET", `${V2[0]}/users?guests=false&limit=2`);
    expect(page1.json.users.map((u: any) => u.name)).toEqual(["@admin:weft.test", "@bob:weft.test"]);
    expect(page1.json.next_token).toBe("2");
    const page2 = await call("GET", `${V2[0]}/users?guests=false&limit=2&from=${page1.json.next_token}`);
    expect(page2.json.users.map((u: any) => u.name)).toEqual(["@carol:weft.test"]);
    expect(page2.json.next_token).toBeUndefined();
    expect(page2.json.total).toBe(3);
  });

  it("filters by name (localpart or display name) and user_id, by admins, and orders both ways", async () => {
    expect((await call("GET", `${V2[0]}/users?name=zeta`)).json.users.map((u: any) => u.name)).toEqual(["@carol:weft.test"]);
    expect((await call("GET", `${V2[0]}/users?name=BO`)).json.users.map((u: any) => u.name)).toEqual(["@bob:weft.test"]);
    expect((await call("GET", `${V2[0]}/users?user_id=%25`)).json.total).toBe(0); // % is no wildcard
    expect((await call("GET", `${V2[0]}/users?user_id=admin`)).json.users.map((u: any) => u.name)).toEqual(["@admin:weft.test"]);
    expect((await call("GET", `${V2[0]}/users?admins=true`)).json.users.map((u: any) => u.name)).toEqual(["@admin:weft.test"]);
    const back = await call("GET", `${V2[0]}/users?guests=false&dir=b`);
    expect(back.json.users.map((u: any) => u.name)).toEqual(["@carol:weft.test", "@bob:weft.test", "@admin:weft.test"]);
    const byName = await call("GET", `${V2[0]}/users?guests=false&order_by=displayname&dir=b`);
    expect(byName.json.users[0].name).toBe("@carol:weft.test"); // "zeta carol" > "bob" > "admin" (byte order)
    const byAdmin = await call("GET", `${V2[0]}/users?guests=false&order_by=admin&dir=b`);
    expect(byAdmin.json.users[0].name).toBe("@admin:weft.test");
  });

  it("refuses bad paging and ordering parameters with M_INVALID_PARAM", async () => {
    for (const q of ["from=-1", "limit=-5", "limit=abc", "order_by=nonsense", "dir=x", "guests=maybe"]) {
      const r = await call("GET", `${V2[0]}/users?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.json.errcode, q).toBe("M_INVALID_PARAM");
    }
  });

  it("shows one account's details; unknown, remote and malformed ids get Synapse's errors", async () => {
    const r = await call("GET", `${V2[1]}/users/${carol.user_id}`);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ name: carol.user_id, displayname: "zeta carol", admin: false, deactivated: false, erased: false, threepids: [], external_ids: [], appservice_id: null, is_guest: false });
    expect(r.json.creation_ts).toBeLessThan(10_000_000_000); // seconds here, as Synapse
    expect(typeof r.json.last_seen_ts).toBe("number");

    const unknown = await call("GET", `${V2[0]}/users/@nobody:weft.test`);
    expect(unknown.status).toBe(404);
    expect(unknown.json.errcode).toBe("M_NOT_FOUND");
    const remote = await call("GET", `${V2[0]}/users/@someone:elsewhere.test`);
    expect(remote.status).toBe(400);
    expect(remote.json.errcode).toBe("M_INVALID_PARAM");
    const bad = await call("GET", `${V2[0]}/users/not-a-user-id`);
    expect(bad.status).toBe(400);
    expect(bad.json.errcode).toBe("M_INVALID_PARAM");
  });

  it("creates an account with PUT (201), which can log in; modifies it (200)", async () => {
    const created = await call("PUT", `${V2[0]}/users/@dave:weft.test`, { password: "davepass12", displayname: "Dave", admin: false, avatar_url: "mxc://weft.test/abc" });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    expect(created.json).toMatchObject({ name: "@dave:weft.test", displayname: "Dave", avatar_url: "mxc://weft.test/abc", admin: false, deactivated: false });
    const dave = await loginUser(t, "dave", "davepass12");
    expect(dave.user_id).toBe("@dave:weft.test");

    const changed = await call("PUT", `${V2[1]}/users/@dave:weft.test`, { displayname: "", admin: true, user_type: "bot" });
    expect(changed.status, JSON.stringify(changed.json)).toBe(200);
    expect(changed.json).toMatchObject({ displayname: null, admin: true, user_type: "bot" });
    // The token still works and now carries admin rights.
    expect((await call("GET", `${V2[0]}/users/@dave:weft.test`, undefined, dave.access_token)).status).toBe(200);
  });

  it("refuses bad PUT bodies and leaves the account alone", async () => {
    const cases: [unknown, string][] = [
      [{ password: 5 }, "M_INVALID_PARAM"],
      [{ admin: "yes" }, "M_INVALID_PARAM"],
      [{ deactivated: 1 }, "M_INVALID_PARAM"],
      [{ user_type: "wizard" }, "M_INVALID_PARAM"],
      [{ avatar_url: "http://x/y" }, "M_INVALID_PARAM"],
      [{ threepids: "a@b.c" }, "M_INVALID_PARAM"],
      [{ password: "short1" }, "M_PASSWORD_TOO_SHORT"],
      [{ password: "nodigitshere" }, "M_PASSWORD_NO_DIGIT"],
    ];
    for (const [body, errcode] of cases) {
      const r = await call("PUT", `${V2[0]}/users/@erin:weft.test`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.errcode, JSON.stringify(body)).toBe(errcode);
    }
    expect(await t.hs.services.users.exists("@erin:weft.test")).toBe(false);
    const notJson = await t.call("PUT", `${V2[0]}/users/@erin:weft.test`, { token: admin.access_token, raw: "{nope", headers: { "content-type": "application/json" } });
    expect(notJson.status).toBe(400);
    expect(notJson.json.errcode).toBe("M_NOT_JSON");
    const remote = await call("PUT", `${V2[0]}/users/@erin:elsewhere.test`, {});
    expect(remote.status).toBe(400);
    const self = await call("PUT", `${V2[0]}/users/${admin.user_id}`, { admin: false });
    expect(self.status).toBe(400);
    expect((await t.hs.services.users.get(admin.user_id))!.isAdmin).toBe(true);
  });

  it("sets and replaces an account's threepids and external ids; one taken by another account is 409", async () => {
    const made = await call("PUT", `${V2[0]}/users/@gina:weft.test`, {
      password: "ginapass1",
      threepids: [{ medium: "email", address: "Gina@Example.ORG" }, { medium: "msisdn", address: "447700900001" }],
      external_ids: [{ auth_provider: "oidc-corp", external_id: "g-1" }],
    });
    expect(made.status, JSON.stringify(made.json)).toBe(201);
    const got = (await call("GET", `${V2[0]}/users/@gina:weft.test`)).json;
    expect(got.threepids.map((t: any) => [t.medium, t.address])).toEqual([["email", "gina@example.org"], ["msisdn", "447700900001"]]);
    expect(typeof got.threepids[0].added_at).toBe("number");
    expect(got.external_ids).toEqual([{ auth_provider: "oidc-corp", external_id: "g-1" }]);
    // The user sees the address through the client API too.
    const gina = await loginUser(t, "gina", "ginapass1");
    expect((await t.call("GET", "/_matrix/client/v3/account/3pid", { token: gina.access_token })).json.threepids.map((x: any) => x.address)).toEqual(["gina@example.org", "447700900001"]);
    // A list replaces: the msisdn goes, the external id changes.
    const replaced = await call("PUT", `${V2[0]}/users/@gina:weft.test`, { threepids: [{ medium: "email", address: "gina@example.org" }], external_ids: [{ auth_provider: "oidc-corp", external_id: "g-2" }] });
    expect(replaced.status).toBe(200);
    const after = (await call("GET", `${V2[0]}/users/@gina:weft.test`)).json;
    expect(after.threepids.map((t: any) => t.address)).toEqual(["gina@example.org"]);
    expect(after.external_ids).toEqual([{ auth_provider: "oidc-corp", external_id: "g-2" }]);
    // Another account may not take them; nothing changes.
    const taken = await call("PUT", `${V2[0]}/users/@hank:weft.test`, { password: "hankpass1", threepids: [{ medium: "email", address: "GINA@example.org" }] });
    expect([taken.status, taken.json.errcode]).toEqual([409, "M_THREEPID_IN_USE"]);
    expect(await t.hs.services.users.exists("@hank:weft.test")).toBe(false);
    const takenExt = await call("PUT", `${V2[0]}/users/@hank:weft.test`, { password: "hankpass1", external_ids: [{ auth_provider: "oidc-corp", external_id: "g-2" }] });
    expect(takenExt.status).toBe(409);
    const bad = await call("PUT", `${V2[0]}/users/@gina:weft.test`, { threepids: [{ medium: "fax", address: "1" }] });
    expect([bad.status, bad.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    // Deactivation removes the account's addresses (as Synapse): the address is free again.
    expect((await call("POST", `${V1[0]}/deactivate/@gina:weft.test`, {})).status).toBe(200);
    expect((await call("GET", `${V2[0]}/users/@gina:weft.test`)).json.threepids).toEqual([]);
    expect(await t.hs.services.threepids.owner("email", "gina@example.org")).toBeNull();
  });

  it("resets a password (policy applies; devices logged out unless asked not to)", async () => {
    const frank = await registerUser(t, "frank", "frankpass1");
    const weak = await call("POST", `${V1[0]}/reset_password/${frank.user_id}`, { new_password: "weak" });
    expect(weak.status).toBe(400);
    expect(weak.json.errcode).toBe("M_PASSWORD_TOO_SHORT");
    const missing = await call("POST", `${V1[0]}/reset_password/${frank.user_id}`, {});
    expect(missing.status).toBe(400);
    expect(missing.json.errcode).toBe("M_MISSING_PARAM");
    expect((await call("POST", `${V1[0]}/reset_password/@ghost:weft.test`, { new_password: "ghostpass1" })).status).toBe(404);

    const keep = await call("POST", `${V1[1]}/reset_password/${frank.user_id}`, { new_password: "frankpass2", logout_devices: false });
    expect(keep.status).toBe(200);
    expect(keep.json).toEqual({});
    expect((await t.call("GET", "/_matrix/client/v3/account/whoami", { token: frank.access_token })).status).toBe(200);
    await loginUser(t, "frank", "frankpass2");

    const out = await call("POST", `${V1[0]}/reset_password/${frank.user_id}`, { new_password: "frankpass3" });
    expect(out.status).toBe(200);
    expect((await t.call("GET", "/_matrix/client/v3/account/whoami", { token: frank.access_token })).status).toBe(401);
    const old = await t.call("POST", "/_matrix/client/v3/login", { body: { type: "m.login.password", identifier: { type: "m.id.user", user: "frank" }, password: "frankpass2" } });
    expect(old.status).toBe(403);
  });

  it("grants and reads admin rights; an admin cannot demote themselves", async () => {
    const grace = await registerUser(t, "grace", "gracepass1");
    expect((await call("GET", `${V1[0]}/users/${grace.user_id}/admin`)).json).toEqual({ admin: false });
    expect((await call("PUT", `${V1[0]}/users/${grace.user_id}/admin`, { admin: true })).status).toBe(200);
    expect((await call("GET", `${V1[1]}/users/${grace.user_id}/admin`)).json).toEqual({ admin: true });
    expect((await call("GET", `${V2[0]}/users`, undefined, grace.access_token)).status).toBe(200);
    const bad = await call("PUT", `${V1[0]}/users/${grace.user_id}/admin`, { admin: "yes" });
    expect(bad.status).toBe(400);
    const self = await call("PUT", `${V1[0]}/users/${admin.user_id}/admin`, { admin: false });
    expect(self.status).toBe(400);
    expect((await call("GET", `${V1[0]}/users/${admin.user_id}/admin`)).json).toEqual({ admin: true });
  });

  it("whois: sessions with their connections, on the admin API and the client API", async () => {
    const w = await call("GET", `${V1[0]}/whois/${bob.user_id}`);
    expect(w.status).toBe(200);
    expect(w.json.user_id).toBe(bob.user_id);
    expect(Object.keys(w.json.devices)).toEqual([bob.device_id]);
    const conn = w.json.devices[bob.device_id].sessions[0].connections[0];
    expect(conn).toMatchObject({ ip: expect.any(String), last_seen: expect.any(Number) });

    const client = await call("GET", `/_matrix/client/v3/admin/whois/${bob.user_id}`);
    expect(client.status).toBe(200);
    expectMatchesSpec(client, "GET", `/_matrix/client/v3/admin/whois/${bob.user_id}`);
    // A user may ask about themselves, not about others.
    expect((await call("GET", `/_matrix/client/v3/admin/whois/${bob.user_id}`, undefined, bob.access_token)).status).toBe(200);
    const other = await call("GET", `/_matrix/client/v3/admin/whois/${carol.user_id}`, undefined, bob.access_token);
    expect(other.status).toBe(403);
    expect(other.json.errcode).toBe("M_FORBIDDEN");
  });

  it("whois of a device that never sent a User-Agent matches the spec (no null user_agent)", async () => {
    const dave = await registerUser(t, "dave-no-agent", "password-dave-1");
    // undici's request sends no User-Agent header (fetch would send one).
    const raw = await request(`${t.baseUrl}/_matrix/client/v3/account/whoami`, { headers: { authorization: `Bearer ${dave.access_token}` } });
    expect(raw.statusCode).toBe(200);
    await raw.body.dump();
    const w = await call("GET", `/_matrix/client/v3/admin/whois/${dave.user_id}`);
    expect(w.status).toBe(200);
    expectMatchesSpec(w, "GET", `/_matrix/client/v3/admin/whois/${dave.user_id}`);
    const conn = w.json.devices[dave.device_id].sessions[0].connections[0];
    expect(conn.last_seen).toEqual(expect.any(Number));
    expect(conn).not.toHaveProperty("user_agent", null);
  });

  it("lists a user's devices, joined rooms and memberships", async () => {
    const d = await call("GET", `${V2[0]}/users/${bob.user_id}/devices`);
    expect(d.status).toBe(200);
    expect(d.json.total).toBe(1);
    expect(d.json.devices[0]).toMatchObject({ device_id: bob.device_id, user_id: bob.user_id });

    const room = await call("POST", "/_matrix/client/v3/createRoom", { preset: "public_chat" }, bob.access_token);
    const left = await call("POST", "/_matrix/client/v3/createRoom", {}, bob.access_token);
    await call("POST", `/_matrix/client/v3/rooms/${left.json.room_id}/leave`, {}, bob.access_token);
    const j = await call("GET", `${V1[1]}/users/${bob.user_id}/joined_rooms`);
    expect(j.json).toEqual({ joined_rooms: [room.json.room_id], total: 1 });
    const m = await call("GET", `${V1[0]}/users/${bob.user_id}/memberships`);
    expect(m.json).toEqual({ memberships: { [room.json.room_id]: "join", [left.json.room_id]: "leave" } });
    expect((await call("GET", `${V2[0]}/users/@nobody:weft.test/devices`)).status).toBe(404);
    expect((await call("GET", `${V1[0]}/users/bad/joined_rooms`)).status).toBe(400);
  });

  it("logs in as a user: a token of theirs with no device; never as oneself", async () => {
    const r = await call("POST", `${V1[0]}/users/${carol.user_id}/login`, {});
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const who = await t.call("GET", "/_matrix/client/v3/account/whoami", { token: r.json.access_token });
    expect(who.json.user_id).toBe(carol.user_id);
    expect(who.json.device_id).toBeUndefined();
    expect((await call("GET", `${V2[0]}/users/${carol.user_id}/devices`)).json.total).toBe(1); // no new device

    const past = await call("POST", `${V1[0]}/users/${carol.user_id}/login`, { valid_until_ms: 1000 });
    expect(past.status).toBe(400);
    const badType = await call("POST", `${V1[0]}/users/${carol.user_id}/login`, { valid_until_ms: "soon" });
    expect(badType.status).toBe(400);
    const self = await call("POST", `${V1[0]}/users/${admin.user_id}/login`, {});
    expect(self.status).toBe(400);
    expect((await call("POST", `${V1[0]}/users/@nobody:weft.test/login`, {})).status).toBe(404);
  });

  it("deactivates (with erase): tokens end, profile blanked, the user leaves the list unless asked", async () => {
    const heidi = await registerUser(t, "heidi", "heidipass1");
    await call("PUT", `/_matrix/client/v3/profile/${heidi.user_id}/avatar_url`, { avatar_url: "mxc://weft.test/h" }, heidi.access_token);
    const bad = await call("POST", `${V1[0]}/deactivate/${heidi.user_id}`, { erase: "yes" });
    expect(bad.status).toBe(400);
    expect((await t.call("GET", "/_matrix/client/v3/account/whoami", { token: heidi.access_token })).status).toBe(200);

    const r = await call("POST", `${V1[1]}/deactivate/${heidi.user_id}`, { erase: true });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ id_server_unbind_result: "success" });
    expect((await t.call("GET", "/_matrix/client/v3/account/whoami", { token: heidi.access_token })).status).toBe(401);
    const details = await call("GET", `${V2[0]}/users/${heidi.user_id}`);
    expect(details.json).toMatchObject({ deactivated: true, erased: true, displayname: null, avatar_url: null });
    expect((await call("GET", `${V2[0]}/users?name=heidi`)).json.total).toBe(0);
    expect((await call("GET", `${V2[0]}/users?name=heidi&deactivated=true`)).json.users[0]).toMatchObject({ name: heidi.user_id, deactivated: true });
    expect((await call("POST", `${V1[0]}/deactivate/@nobody:weft.test`, {})).status).toBe(404);
    expect((await call("POST", `${V1[0]}/deactivate/@x:elsewhere.test`, {})).status).toBe(400);

    // Reactivation needs a password; with one the account logs in again.
    const noPw = await call("PUT", `${V2[0]}/users/${heidi.user_id}`, { deactivated: false });
    expect(noPw.status).toBe(400);
    const back = await call("PUT", `${V2[0]}/users/${heidi.user_id}`, { deactivated: false, password: "heidipass2" });
    expect(back.status, JSON.stringify(back.json)).toBe(200);
    expect(back.json.deactivated).toBe(false);
    await loginUser(t, "heidi", "heidipass2");
  });

  it("answers the server version to admins", async () => {
    const r = await call("GET", `${V1[0]}/server_version`);
    expect(r.status).toBe(200);
    expect(r.json.server_version).toMatch(/^\d+\.\d+\.\d+/);
  });
});
