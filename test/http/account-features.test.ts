// Server-side account features over HTTP, on SQLite and PostgreSQL: deactivation removes cross-signing
// keys, key backups, pushers and devices; erasure redacts the user's events for members who joined
// later but not for those who saw them; auto_join_rooms (autocreated by the first user, joined by the
// next and by guests); /.well-known/matrix/support from the support options, 404 without them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { crossSigningKeys } from "../helpers/e2ee.ts";
import { parseConfig } from "../../src/config/config.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const V3 = "/_matrix/client/v3";

describe.each(backends())("account features (%s)", (backend) => {
  describe("deactivation and erasure", () => {
    let t: TestServer;
    const call = (method: string, path: string, who: Session, body?: unknown) => t.call(method, path, { token: who.access_token, body });
    const count = async (sql: string, params: (string | boolean)[]) => Number((await t.hs.services.storage.sql.get<{ n: number | string }>(sql, params))!.n);

    beforeAll(async () => {
      t = await startTestServer({ backend, config: { ip_range_whitelist: ["127.0.0.0/8"] } });
    });
    afterAll(async () => {
      await t?.close();
    });

    it("removes cross-signing keys, key backups, pushers and devices", async () => {
      const alice = await registerUser(t, "alice");
      const bob = await registerUser(t, "bob");
      const room = (await call("POST", `${V3}/createRoom`, alice, { preset: "public_chat" })).json.room_id;
      await call("POST", `${V3}/join/${room}`, bob, {});
      expect((await call("POST", `${V3}/keys/device_signing/upload`, alice, crossSigningKeys(alice.user_id).body)).status).toBe(200);
      const version = (await call("POST", `${V3}/room_keys/version`, alice, { algorithm: "m.megolm_backup.v1.curve25519-aes-sha2", auth_data: { public_key: "abc" } })).json.version;
      expect(version).toBeDefined();
      const keys = { rooms: { [room]: { sessions: { s1: { first_message_index: 0, forwarded_count: 0, is_verified: false, session_data: { ciphertext: "x" } } } } } };
      expect((await call("PUT", `${V3}/room_keys/keys?version=${version}`, alice, keys)).status).toBe(200);
      const pusher = { pushkey: "pk1", kind: "http", app_id: "org.example.app", app_display_name: "Example", device_display_name: "Phone", lang: "en", data: { url: "http://127.0.0.1:9/_matrix/push/v1/notify" } };
      expect((await call("POST", `${V3}/pushers/set`, alice, pusher)).status).toBe(200);
      expect((await call("POST", `${V3}/keys/query`, bob, { device_keys: { [alice.user_id]: [] } })).json.master_keys[alice.user_id]).toBeDefined();
      expect(await count(`SELECT COUNT(*) AS n FROM pushers WHERE user_id = ?`, [alice.user_id])).toBe(1);

      const first = await call("POST", `${V3}/account/deactivate`, alice, {});
      const done = await call("POST", `${V3}/account/deactivate`, alice, { auth: { type: "m.login.password", identifier: { type: "m.id.user", user: "alice" }, password: "password", session: first.json.session } });
      expect(done.status, JSON.stringify(done.json)).toBe(200);

      const q = await call("POST", `${V3}/keys/query`, bob, { device_keys: { [alice.user_id]: [] } });
      expect(q.status).toBe(200);
      expect(q.json.master_keys?.[alice.user_id]).toBeUndefined();
      expect(q.json.self_signing_keys?.[alice.user_id]).toBeUndefined();
      expect(q.json.device_keys[alice.user_id] ?? {}).toEqual({});
      expect(await count(`SELECT COUNT(*) AS n FROM e2e_cross_signing_keys WHERE user_id = ?`, [alice.user_id])).toBe(0);
      expect(await count(`SELECT COUNT(*) AS n FROM e2e_room_keys WHERE user_id = ?`, [alice.user_id])).toBe(0);
      expect(await count(`SELECT COUNT(*) AS n FROM e2e_room_keys_versions WHERE user_id = ? AND deleted = ?`, [alice.user_id, false])).toBe(0);
      expect(await count(`SELECT COUNT(*) AS n FROM pushers WHERE user_id = ?`, [alice.user_id])).toBe(0);
      expect(await count(`SELECT COUNT(*) AS n FROM devices WHERE user_id = ?`, [alice.user_id])).toBe(0);
    });

    it("erase: members who saw the events keep them; members who join later get them redacted", async () => {
      const eve = await registerUser(t, "eve");
      const witness = await registerUser(t, "witness");
      const room = (await call("POST", `${V3}/createRoom`, eve, { preset: "public_chat" })).json.room_id;
      await call("POST", `${V3}/join/${room}`, witness, {});
      const sent = await call("PUT", `${V3}/rooms/${room}/send/m.room.message/t1`, eve, { msgtype: "m.text", body: "something to forget" });
      const plain = await registerUser(t, "plainer");
      const keep = (await call("POST", `${V3}/createRoom`, plain, { preset: "public_chat" })).json.room_id;
      const kept = await call("PUT", `${V3}/rooms/${keep}/send/m.room.message/t1`, plain, { msgtype: "m.text", body: "not erased" });

      const admin = await registerUser(t, "root");
      await t.hs.services.users.setAdmin(admin.user_id, true);
      expect((await call("POST", `/_synapse/admin/v1/deactivate/${eve.user_id}`, admin, { erase: true })).status).toBe(200);

      const late = await registerUser(t, "latecomer");
      await call("POST", `${V3}/join/${room}`, late, {});
      await call("POST", `${V3}/join/${keep}`, late, {});
      const seenLate = await call("GET", `${V3}/rooms/${room}/event/${sent.json.event_id}`, late);
      expect(seenLate.status).toBe(200);
      expect(seenLate.json.content).toEqual({});
      const lateMsgs = await call("GET", `${V3}/rooms/${room}/messages?dir=b&limit=50`, late);
      expect(lateMsgs.json.chunk.find((e: any) => e.event_id === sent.json.event_id).content).toEqual({});
      // A sender who was not erased keeps their history for newcomers.
      expect((await call("GET", `${V3}/rooms/${keep}/event/${kept.json.event_id}`, late)).json.content.body).toBe("not erased");
      // The witness was joined when it was sent.
      const seenWitness = await call("GET", `${V3}/rooms/${room}/event/${sent.json.event_id}`, witness);
      expect(seenWitness.json.content.body).toBe("something to forget");
      const witnessMsgs = await call("GET", `${V3}/rooms/${room}/messages?dir=b&limit=50`, witness);
      expect(witnessMsgs.json.chunk.find((e: any) => e.event_id === sent.json.event_id).content.body).toBe("something to forget");
    });
  });

  describe("auto_join_rooms", () => {
    let t: TestServer;
    let lobbyId: string;
    beforeAll(async () => {
      t = await startTestServer({ backend, config: { auto_join_rooms: ["#lobby:weft.test"], log_level: "silent" } });
    });
    afterAll(async () => {
      await t?.close();
    });

    it("the first user creates the missing room; later users and guests join it", async () => {
      const first = await registerUser(t, "first");
      const joined1 = await t.call("GET", `${V3}/joined_rooms`, { token: first.access_token });
      expect(joined1.json.joined_rooms).toHaveLength(1);
      lobbyId = joined1.json.joined_rooms[0];
      expect((await t.call("GET", `${V3}/directory/room/%23lobby:weft.test`)).json.room_id).toBe(lobbyId);

      const second = await registerUser(t, "second");
      expect((await t.call("GET", `${V3}/joined_rooms`, { token: second.access_token })).json.joined_rooms).toEqual([lobbyId]);
      // A guest is auto-joined where guests may join (the lobby's public_chat preset forbids them: the
      // registration still succeeds).
      const guest = await t.call("POST", `${V3}/register?kind=guest`, { body: {} });
      expect(guest.status).toBe(200);
      expect((await t.call("GET", `${V3}/joined_rooms`, { token: guest.json.access_token })).json.joined_rooms).toEqual([]);
      await t.call("PUT", `${V3}/rooms/${lobbyId}/state/m.room.guest_access`, { token: first.access_token, body: { guest_access: "can_join" } });
      const guest2 = await t.call("POST", `${V3}/register?kind=guest`, { body: {} });
      expect((await t.call("GET", `${V3}/joined_rooms`, { token: guest2.json.access_token })).json.joined_rooms).toEqual([lobbyId]);
    });

    it("without autocreate, missing rooms are skipped and registration still succeeds", async () => {
      const other = await startTestServer({ backend, config: { auto_join_rooms: ["#nowhere:weft.test", "!missing:weft.test"], autocreate_auto_join_rooms: false, log_level: "silent" } });
      try {
        const u = await registerUser(other, "someone");
        expect((await other.call("GET", `${V3}/joined_rooms`, { token: u.access_token })).json.joined_rooms).toEqual([]);
        expect((await other.call("GET", `${V3}/directory/room/%23nowhere:weft.test`)).status).toBe(404);
      } finally {
        await other.close();
      }
    });
  });

  describe("/.well-known/matrix/support", () => {
    it("serves the configured contacts and page, and 404 without them", async () => {
      const t = await startTestServer({
        backend,
        config: { support: { contacts: [{ role: "m.role.security", email_address: "security@weft.test" }], support_page: "https://weft.test/help" }, admin_contact: "mailto:admin@weft.test" },
      });
      try {
        const r = await t.call("GET", "/.well-known/matrix/support");
        expect(r.status).toBe(200);
        expect(r.json).toEqual({
          contacts: [{ role: "m.role.security", email_address: "security@weft.test" }, { role: "m.role.admin", email_address: "admin@weft.test" }],
          support_page: "https://weft.test/help",
        });
        expectMatchesSpec(r, "GET", "/.well-known/matrix/support");
      } finally {
        await t.close();
      }
      const bare = await startTestServer({ backend });
      try {
        const r = await bare.call("GET", "/.well-known/matrix/support");
        expect(r.status).toBe(404);
        expect(r.json.errcode).toBe("M_NOT_FOUND");
      } finally {
        await bare.close();
      }
    });
  });
});

describe("account feature options", () => {
  const base = { server_name: "weft.test" };
  it("refuses malformed support contacts, auto-join entries and account validity without a period", () => {
    expect(() => parseConfig({ ...base, support: { contacts: [{ email_address: "a@b.c" }] } })).toThrow(/support.contacts\[0\].role/);
    expect(() => parseConfig({ ...base, support: { contacts: [{ role: "m.role.admin" }] } })).toThrow(/matrix_id or email_address/);
    expect(() => parseConfig({ ...base, support: { support_page: "not a url" } })).toThrow(/support_page/);
    expect(() => parseConfig({ ...base, auto_join_rooms: ["lobby"] })).toThrow(/auto_join_rooms\[0\]/);
    expect(() => parseConfig({ ...base, autocreate_auto_join_room_preset: "open" })).toThrow(/autocreate_auto_join_room_preset/);
    expect(() => parseConfig({ ...base, account_validity: { enabled: true } })).toThrow(/account_validity.period/);
    expect(() => parseConfig({ ...base, dummy_events_threshold: 0 })).toThrow(/dummy_events_threshold/);
    expect(parseConfig(base).dummy_events_threshold).toBe(10);
  });
});
