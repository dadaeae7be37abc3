// Profiles over HTTP: reading (authentication optional), setting displayname and avatar_url with
// Synapse's limits, guests, admins, deactivated and remote users, the config switches — on SQLite and
// PostgreSQL, under r0 and v3 and both brands.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { loginUser, registerUser, type Session } from "../helpers/users.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import type { ProfileChange } from "../../src/domain/profile/profile.ts";
import type { Invalidation } from "../../src/domain/cache/invalidation.ts";

const V3 = "/_matrix/client/v3";
const ALICE = "@alice:weft.test";

describe.each(backends())("profiles on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let bob: Session;

  beforeAll(async () => {
    t = await startTestServer({ backend });
    alice = await registerUser(t, "alice");
    bob = await registerUser(t, "bob");
  });
  afterAll(async () => {
    await t?.close();
  });

  it("reads a profile without authentication, fields omitted when unset", async () => {
    for (const p of [`${V3}/profile/${ALICE}`, `${V3}/profile/${encodeURIComponent(ALICE)}`, `/_proto/client/r0/profile/${ALICE}`]) {
      const res = await t.call("GET", p);
      expect(res.status, p).toBe(200);
      expectMatchesSpec(res, "GET", p);
      expect(res.json).toEqual({ displayname: "alice" });
    }
    const authed = await t.call("GET", `${V3}/profile/${ALICE}`, { token: bob.access_token });
    expect(authed.json).toEqual({ displayname: "alice" });
    const badToken = await t.call("GET", `${V3}/profile/${ALICE}`, { token: "nope" });
    expect([badToken.status, badToken.json.errcode]).toEqual([401, "M_UNKNOWN_TOKEN"]);

    const name = await t.call("GET", `/_matrix/client/r0/profile/${ALICE}/displayname`);
    expect([name.status, name.json]).toEqual([200, { displayname: "alice" }]);
    expectMatchesSpec(name, "GET", `${V3}/profile/${ALICE}/displayname`);
    // A field the user never set: 200 `{}`, as Synapse 1.163 answers (the spec allows it beside a 404,
    // MSC4537; the 404 is for unknown users here).
    const avatar = await t.call("GET", `${V3}/profile/${ALICE}/avatar_url`);
    expect([avatar.status, avatar.json]).toEqual([200, {}]);
  });

  it("sets and clears displayname and avatar_url, publishing the change and running the hooks", async () => {
    const seen: Invalidation[] = [];
    const unsubscribe = t.hs.services.invalidations.subscribe((m) => seen.push(m));
    const changes: ProfileChange[] = [];
    const hook = async (_s: unknown, c: ProfileChange) => { changes.push(c); };
    const hooks = t.hs.services.extensions.profileChanged;
    hooks.push(hook);
    try {
      const put = await t.call("PUT", `${V3}/profile/${ALICE}/displayname`, { token: alice.access_token, body: { displayname: "  Alice A  " } });
      expect([put.status, put.json]).toEqual([200, {}]);
      expectMatchesSpec(put, "PUT", `${V3}/profile/${ALICE}/displayname`);
      const av = await t.call("PUT", `/_proto/client/r0/profile/${encodeURIComponent(ALICE)}/avatar_url`, { token: alice.access_token, body: { avatar_url: "mxc://weft.test/abc" } });
      expect([av.status, av.json]).toEqual([200, {}]);

      const res = await t.call("GET", `${V3}/profile/${ALICE}`);
      expect(res.json).toEqual({ displayname: "Alice A", avatar_url: "mxc://weft.test/abc" });
      expectMatchesSpec(res, "GET", `${V3}/profile/${ALICE}`);
      expect((await t.call("GET", `${V3}/profile/${ALICE}/avatar_url`)).json).toEqual({ avatar_url: "mxc://weft.test/abc" });

      expect(seen.filter((m) => m.kind === "profile")).toEqual([{ kind: "profile", userId: ALICE }, { kind: "profile", userId: ALICE }]);
      expect(changes.map((c) => [c.userId, c.field, c.requester.userId, c.profile])).toEqual([
        [ALICE, "displayname", ALICE, { displayname: "Alice A" }],
        [ALICE, "avatar_url", ALICE, { displayname: "Alice A", avatar_url: "mxc://weft.test/abc" }],
      ]);

      // An empty string clears a field.
      expect((await t.call("PUT", `${V3}/profile/${ALICE}/displayname`, { token: alice.access_token, body: { displayname: "" } })).status).toBe(200);
      const noName = await t.call("GET", `${V3}/profile/${ALICE}/displayname`);
      expect([noName.status, noName.json]).toEqual([200, {}]);
      expect((await t.call("GET", `${V3}/profile/${ALICE}`)).json).toEqual({ avatar_url: "mxc://weft.test/abc" });
      // With nothing left, there is no profile information: 404 (spec, and Synapse).
      expect((await t.call("PUT", `${V3}/profile/${ALICE}/avatar_url`, { token: alice.access_token, body: { avatar_url: "" } })).status).toBe(200);
      const empty = await t.call("GET", `${V3}/profile/${ALICE}`);
      expect([empty.status, empty.json.errcode]).toEqual([404, "M_NOT_FOUND"]);

      expect((await t.call("PUT", `${V3}/profile/${ALICE}/displayname`, { token: alice.access_token, body: { displayname: "Alice" } })).status).toBe(200);
    } finally {
      unsubscribe();
      hooks.splice(hooks.indexOf(hook), 1);
    }
  });

  it("validates PUT bodies with Synapse's codes and limits", async () => {
    const put = (field: string, body?: unknown) => t.call("PUT", `${V3}/profile/${ALICE}/${field}`, { token: alice.access_token, body });
    const cases: [string, unknown, number, string][] = [
      ["displayname", {}, 400, "M_MISSING_PARAM"],
      ["displayname", { displayname: 12 }, 400, "M_INVALID_PARAM"],
      ["displayname", { displayname: null }, 400, "M_INVALID_PARAM"],
      ["displayname", { displayname: ["x"] }, 400, "M_INVALID_PARAM"],
      ["displayname", { displayname: "x".repeat(257) }, 400, "M_TOO_LARGE"],
      ["displayname", undefined, 400, "M_NOT_JSON"],
      ["avatar_url", { avatar_url: 1 }, 400, "M_INVALID_PARAM"],
      ["avatar_url", { other: "mxc://a/b" }, 400, "M_MISSING_PARAM"],
      ["avatar_url", { avatar_url: `mxc://weft.test/${"a".repeat(1000)}` }, 400, "M_TOO_LARGE"],
      // The spec: an avatar_url MUST be an MXC URI (GET /profile's schema allows nothing else).
      ["avatar_url", { avatar_url: "javascript:alert(1)" }, 400, "M_INVALID_PARAM"],
      ["avatar_url", { avatar_url: "https://example.org/a.png" }, 400, "M_INVALID_PARAM"],
      ["avatar_url", { avatar_url: "mxc://" }, 400, "M_INVALID_PARAM"],
      ["avatar_url", { avatar_url: "mxc://weft.test/a/b" }, 400, "M_INVALID_PARAM"],
    ];
    for (const [field, body, status, errcode] of cases) {
      const res = await put(field, body);
      expect([res.status, res.json.errcode], `${field} ${JSON.stringify(body)?.slice(0, 60)}`).toEqual([status, errcode]);
    }
    // The limits themselves are allowed (counted in characters, not bytes).
    expect((await put("displayname", { displayname: "é".repeat(256) })).status).toBe(200);
    expect((await put("avatar_url", { avatar_url: `mxc://weft.test/${"a".repeat(1000 - 16)}` })).status).toBe(200);
    expect((await t.call("GET", `${V3}/profile/${ALICE}/displayname`)).json.displayname).toBe("é".repeat(256));
    expect((await put("displayname", { displayname: "Alice" })).status).toBe(200);
  });

  it("serves a stored avatar_url that is not an MXC URI (set before the check, or by an admin) as no avatar", async () => {
    const carol = await registerUser(t, "carol_old_avatar");
    await t.hs.services.users.setProfileField(t.hs.services.db, carol.user_id, "avatarUrl", "https://example.org/old.png");
    await t.hs.services.users.setProfileField(t.hs.services.db, carol.user_id, "displayname", "Carol");
    const whole = await t.call("GET", `${V3}/profile/${encodeURIComponent(carol.user_id)}`);
    expect([whole.status, whole.json]).toEqual([200, { displayname: "Carol" }]);
    expectMatchesSpec(whole, "GET", `${V3}/profile/{userId}`);
    const field = await t.call("GET", `${V3}/profile/${encodeURIComponent(carol.user_id)}/avatar_url`);
    expect([field.status, field.json]).toEqual([200, {}]);
  });

  it("only lets users change their own profile (and server admins any local one)", async () => {
    const other = await t.call("PUT", `${V3}/profile/@bob:weft.test/displayname`, { token: alice.access_token, body: { displayname: "Bobby" } });
    expect([other.status, other.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    const otherAvatar = await t.call("PUT", `${V3}/profile/@bob:weft.test/avatar_url`, { token: alice.access_token, body: { avatar_url: "mxc://x/y" } });
    expect([otherAvatar.status, otherAvatar.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    const remote = await t.call("PUT", `${V3}/profile/@alice:elsewhere.test/displayname`, { token: alice.access_token, body: { displayname: "x" } });
    expect([remote.status, remote.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    const noToken = await t.call("PUT", `${V3}/profile/${ALICE}/displayname`, { body: { displayname: "x" } });
    expect([noToken.status, noToken.json.errcode]).toEqual([401, "M_MISSING_TOKEN"]);
    const invalid = await t.call("PUT", `${V3}/profile/alice/displayname`, { token: alice.access_token, body: { displayname: "x" } });
    expect([invalid.status, invalid.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    expect((await t.call("GET", `${V3}/profile/@bob:weft.test`)).json).toEqual({ displayname: "bob" });

    await registerUser(t, "admin");
    await t.hs.services.users.setAdmin("@admin:weft.test", true);
    const admin = await loginUser(t, "admin");
    const byAdmin = await t.call("PUT", `${V3}/profile/@bob:weft.test/displayname`, { token: admin.access_token, body: { displayname: "Robert" } });
    expect(byAdmin.status).toBe(200);
    expect((await t.call("GET", `${V3}/profile/@bob:weft.test`)).json).toEqual({ displayname: "Robert" });
    const missing = await t.call("PUT", `${V3}/profile/@nobody:weft.test/displayname`, { token: admin.access_token, body: { displayname: "x" } });
    expect([missing.status, missing.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
  });

  it("answers 404 for unknown and deactivated users, 502 for a remote server that cannot be reached, 400 for invalid ids", async () => {
    for (const suffix of ["", "/displayname", "/avatar_url"]) {
      const res = await t.call("GET", `${V3}/profile/${encodeURIComponent("@nobody:weft.test")}${suffix}`);
      expect([res.status, res.json.errcode], `@nobody${suffix}`).toEqual([404, "M_NOT_FOUND"]);
      // elsewhere.test does not resolve (test servers' DNS never leaves the machine): Synapse's 502.
      const remote = await t.call("GET", `${V3}/profile/${encodeURIComponent("@alice:elsewhere.test")}${suffix}`);
      expect([remote.status, remote.json.errcode], `@alice:elsewhere.test${suffix}`).toEqual([502, "M_UNKNOWN"]);
      for (const bad of ["alice", "@nocolon", "@a:bad_server!"]) {
        const res = await t.call("GET", `${V3}/profile/${encodeURIComponent(bad)}${suffix}`);
        expect([res.status, res.json.errcode], `${bad}${suffix}`).toEqual([400, "M_INVALID_PARAM"]);
      }
    }

    const carol = await registerUser(t, "carol");
    expect((await t.call("PUT", `${V3}/profile/@carol:weft.test/avatar_url`, { token: carol.access_token, body: { avatar_url: "mxc://weft.test/c" } })).status).toBe(200);
    const first = await t.call("POST", `${V3}/account/deactivate`, { token: carol.access_token, body: {} });
    const done = await t.call("POST", `${V3}/account/deactivate`, {
      token: carol.access_token,
      body: { auth: { type: "m.login.password", identifier: { type: "m.id.user", user: "carol" }, password: "password", session: first.json.session } },
    });
    expect(done.status, JSON.stringify(done.json)).toBe(200);
    for (const suffix of ["", "/displayname", "/avatar_url"]) {
      const res = await t.call("GET", `${V3}/profile/@carol:weft.test${suffix}`, { token: alice.access_token });
      expect([res.status, res.json.errcode], suffix).toEqual([404, "M_NOT_FOUND"]);
    }
  });

  it("lets guests read profiles and set their display name, not an avatar", async () => {
    const reg = await t.call("POST", `${V3}/register?kind=guest`, { body: {} });
    const guest = reg.json as Session;
    const mine = await t.call("GET", `${V3}/profile/${encodeURIComponent(guest.user_id)}`, { token: guest.access_token });
    expect([mine.status, mine.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    const name = await t.call("PUT", `${V3}/profile/${encodeURIComponent(guest.user_id)}/displayname`, { token: guest.access_token, body: { displayname: "Visitor" } });
    expect(name.status).toBe(200);
    expect((await t.call("GET", `${V3}/profile/${encodeURIComponent(guest.user_id)}`, { token: guest.access_token })).json).toEqual({ displayname: "Visitor" });
    const avatar = await t.call("PUT", `${V3}/profile/${encodeURIComponent(guest.user_id)}/avatar_url`, { token: guest.access_token, body: { avatar_url: "mxc://x/y" } });
    expect([avatar.status, avatar.json.errcode]).toEqual([403, "M_GUEST_ACCESS_FORBIDDEN"]);
    expect((await t.call("GET", `${V3}/profile/${ALICE}`, { token: guest.access_token })).status).toBe(200);
  });
});

describe.each(backends())("profile settings on %s", (backend) => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  it("refuses changes with enable_set_displayname / enable_set_avatar_url off (a first avatar is allowed, as Synapse)", async () => {
    const t = await startTestServer({ backend, config: { enable_set_displayname: false, enable_set_avatar_url: false } });
    servers.push(t);
    const alice = await registerUser(t, "alice");
    const name = await t.call("PUT", `${V3}/profile/${ALICE}/displayname`, { token: alice.access_token, body: { displayname: "New" } });
    expect([name.status, name.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    const firstAvatar = await t.call("PUT", `${V3}/profile/${ALICE}/avatar_url`, { token: alice.access_token, body: { avatar_url: "mxc://weft.test/a" } });
    expect(firstAvatar.status).toBe(200);
    const change = await t.call("PUT", `${V3}/profile/${ALICE}/avatar_url`, { token: alice.access_token, body: { avatar_url: "mxc://weft.test/b" } });
    expect([change.status, change.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    expect((await t.call("GET", `${V3}/profile/${ALICE}`)).json).toEqual({ displayname: "alice", avatar_url: "mxc://weft.test/a" });
  });

  it("limits lookups to users sharing a room with limit_profile_requests_to_users_who_share_rooms", async () => {
    const t = await startTestServer({ backend, config: { limit_profile_requests_to_users_who_share_rooms: true } });
    servers.push(t);
    const alice = await registerUser(t, "alice");
    const bob = await registerUser(t, "bob");
    const carol = await registerUser(t, "carol");
    const get = (who: string, token?: string, suffix = "") => t.call("GET", `${V3}/profile/${encodeURIComponent(who)}${suffix}`, { token });

    for (const suffix of ["", "/displayname"]) {
      expect((await get(ALICE, alice.access_token, suffix)).status).toBe(200);
      const anon = await get(ALICE, undefined, suffix);
      expect([anon.status, anon.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
      const stranger = await get(ALICE, bob.access_token, suffix);
      expect([stranger.status, stranger.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
      // Unknown users look the same as strangers: existence is not disclosed.
      const unknown = await get("@nobody:weft.test", bob.access_token, suffix);
      expect([unknown.status, unknown.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    }

    const db = t.hs.services.db;
    await db.roomMembership.create({ data: { roomId: "!shared:weft.test", userId: ALICE, membership: "join", eventId: "$a" } });
    await db.roomMembership.create({ data: { roomId: "!shared:weft.test", userId: "@bob:weft.test", membership: "join", eventId: "$b" } });
    await db.roomMembership.create({ data: { roomId: "!shared:weft.test", userId: "@carol:weft.test", membership: "leave", eventId: "$c" } });
    const shared = await get(ALICE, bob.access_token);
    expect([shared.status, shared.json]).toEqual([200, { displayname: "alice" }]);
    expect((await get(ALICE, bob.access_token, "/displayname")).json).toEqual({ displayname: "alice" });
    const left = await get(ALICE, carol.access_token);
    expect([left.status, left.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
  });
});
