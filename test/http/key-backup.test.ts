// Server-side key backups over HTTP on SQLite and PostgreSQL (v3 and r0): versions (create, current,
// by id, update, delete), keys per backup / room / session with the replacement rule (verified beats
// unverified, then lower first_message_index, then lower forwarded_count), etags and counts, writes to
// a stale version (M_WRONG_ROOM_KEYS_VERSION), the required `version` parameter and missing data.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { V3, expectError } from "../helpers/e2ee.ts";

const R0 = "/_matrix/client/r0";
const enc = encodeURIComponent;
const ROOM = "!room:weft.test";
const authData = { public_key: "abcdefg", signatures: { "@alice:weft.test": { "ed25519:DEV": "sig" } } };
const key = (first_message_index: number, forwarded_count: number, is_verified: boolean, tag = "x") => ({
  first_message_index, forwarded_count, is_verified, session_data: { ephemeral: "e", ciphertext: tag, mac: "m" },
});

describe.each(backends())("key backup on %s", (backend) => {
  let t: TestServer;
  let n = 0;

  beforeAll(async () => {
    t = await startTestServer({ backend });
  });
  afterAll(async () => {
    await t?.close();
  });

  const user = () => registerUser(t, `kb${++n}`);
  const call = (who: Session, method: string, path: string, body?: unknown) => t.call(method, path, { token: who.access_token, body });
  async function newVersion(who: Session): Promise<string> {
    const res = await call(who, "POST", `${V3}/room_keys/version`, { algorithm: "m.megolm_backup.v1.curve25519-aes-sha2", auth_data: authData });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "POST", `${V3}/room_keys/version`);
    return res.json.version as string;
  }

  describe("versions", () => {
    it("creates versions, reads the current one and one by id, updates auth_data, deletes", async () => {
      const u = await user();
      expectError(await call(u, "GET", `${V3}/room_keys/version`), 404, "M_NOT_FOUND");
      const v1 = await newVersion(u);
      const cur = await call(u, "GET", `${V3}/room_keys/version`);
      expect(cur.status).toBe(200);
      expectMatchesSpec(cur, "GET", `${V3}/room_keys/version`);
      expect(cur.json).toEqual({ algorithm: "m.megolm_backup.v1.curve25519-aes-sha2", auth_data: authData, count: 0, etag: "0", version: v1 });
      const v2 = await newVersion(u);
      expect(v2).not.toBe(v1);
      expect((await call(u, "GET", `${V3}/room_keys/version`)).json.version).toBe(v2);
      const byId = await call(u, "GET", `${V3}/room_keys/version/${v1}`);
      expectMatchesSpec(byId, "GET", `${V3}/room_keys/version/${v1}`);
      expect(byId.json.version).toBe(v1);

      const put = await call(u, "PUT", `${V3}/room_keys/version/${v2}`, { algorithm: "m.megolm_backup.v1.curve25519-aes-sha2", auth_data: { public_key: "new" }, version: v2 });
      expect(put.status, JSON.stringify(put.json)).toBe(200);
      expectMatchesSpec(put, "PUT", `${V3}/room_keys/version/${v2}`);
      expect((await call(u, "GET", `${V3}/room_keys/version/${v2}`)).json.auth_data).toEqual({ public_key: "new" });
      expectError(await call(u, "PUT", `${V3}/room_keys/version/${v2}`, { algorithm: "m.megolm_backup.v1.curve25519-aes-sha2", auth_data: {}, version: v1 }), 400, "M_INVALID_PARAM");
      expectError(await call(u, "PUT", `${V3}/room_keys/version/${v2}`, { algorithm: "other.algorithm", auth_data: {} }), 400, "M_INVALID_PARAM");
      expectError(await call(u, "PUT", `${V3}/room_keys/version/999`, { algorithm: "m.megolm_backup.v1.curve25519-aes-sha2", auth_data: {} }), 404, "M_NOT_FOUND");

      const del = await call(u, "DELETE", `${V3}/room_keys/version/${v2}`);
      expect(del.status).toBe(200);
      expectMatchesSpec(del, "DELETE", `${V3}/room_keys/version/${v2}`);
      expect((await call(u, "DELETE", `${V3}/room_keys/version/${v2}`)).status).toBe(200); // already deleted: still fine
      expectError(await call(u, "GET", `${V3}/room_keys/version/${v2}`), 404, "M_NOT_FOUND");
      expect((await call(u, "GET", `${V3}/room_keys/version`)).json.version).toBe(v1);
      expectError(await call(u, "DELETE", `${V3}/room_keys/version/12345`), 404, "M_NOT_FOUND");
      expectError(await call(u, "GET", `${V3}/room_keys/version/notanumber`), 404, "M_NOT_FOUND");
      // Another user sees none of it.
      const other = await user();
      expectError(await call(other, "GET", `${V3}/room_keys/version/${v1}`), 404, "M_NOT_FOUND");
    });

    it("refuses a version without algorithm or auth_data, and guests", async () => {
      const u = await user();
      expectError(await call(u, "POST", `${V3}/room_keys/version`, { auth_data: {} }), 400, "M_MISSING_PARAM");
      expectError(await call(u, "POST", `${V3}/room_keys/version`, { algorithm: "a" }), 400, "M_MISSING_PARAM");
      expectError(await call(u, "POST", `${V3}/room_keys/version`, { algorithm: 1, auth_data: {} }), 400, "M_BAD_JSON");
      expectError(await call(u, "POST", `${V3}/room_keys/version`, { algorithm: "", auth_data: {} }), 400, "M_BAD_JSON");
      expectError(await call(u, "GET", `${V3}/room_keys/version`), 404, "M_NOT_FOUND");
      const guest = await t.call("POST", `${V3}/register?kind=guest`, { body: {} });
      expectError(await t.call("GET", `${V3}/room_keys/version`, { token: guest.json.access_token }), 403, "M_GUEST_ACCESS_FORBIDDEN");
    });
  });

  describe("keys", () => {
    it("stores, reads and deletes keys per backup, room and session, with etag and count", async () => {
      const u = await user();
      const v = await newVersion(u);
      const q = `?version=${v}`;
      const one = await call(u, "PUT", `${V3}/room_keys/keys/${enc(ROOM)}/s1${q}`, key(0, 0, false));
      expect(one.status, JSON.stringify(one.json)).toBe(200);
      expectMatchesSpec(one, "PUT", `${V3}/room_keys/keys/${enc(ROOM)}/s1`);
      expect(one.json).toEqual({ etag: "1", count: 1 });
      const room = await call(u, "PUT", `${V3}/room_keys/keys/${enc(ROOM)}${q}`, { sessions: { s2: key(1, 0, false) } });
      expectMatchesSpec(room, "PUT", `${V3}/room_keys/keys/${enc(ROOM)}`);
      expect(room.json).toEqual({ etag: "2", count: 2 });
      const all = await call(u, "PUT", `${R0}/room_keys/keys${q}`, { rooms: { "!other:weft.test": { sessions: { s3: key(2, 1, true) } } } });
      expect(all.status, JSON.stringify(all.json)).toBe(200);
      expectMatchesSpec(all, "PUT", `${V3}/room_keys/keys`);
      expect(all.json).toEqual({ etag: "3", count: 3 });
      expect((await call(u, "GET", `${V3}/room_keys/version`)).json).toMatchObject({ count: 3, etag: "3" });

      const got = await call(u, "GET", `${V3}/room_keys/keys${q}`);
      expectMatchesSpec(got, "GET", `${V3}/room_keys/keys`);
      expect(got.json).toEqual({ rooms: { [ROOM]: { sessions: { s1: key(0, 0, false), s2: key(1, 0, false) } }, "!other:weft.test": { sessions: { s3: key(2, 1, true) } } } });
      const gotRoom = await call(u, "GET", `${V3}/room_keys/keys/${enc(ROOM)}${q}`);
      expectMatchesSpec(gotRoom, "GET", `${V3}/room_keys/keys/${enc(ROOM)}`);
      expect(Object.keys(gotRoom.json.sessions)).toEqual(["s1", "s2"]);
      const gotOne = await call(u, "GET", `${R0}/room_keys/keys/${enc(ROOM)}/s2${q}`);
      expectMatchesSpec(gotOne, "GET", `${V3}/room_keys/keys/${enc(ROOM)}/s2`);
      expect(gotOne.json).toEqual(key(1, 0, false));
      // Missing data: a session is M_NOT_FOUND, a room is an empty map (spec and Synapse).
      expectError(await call(u, "GET", `${V3}/room_keys/keys/${enc(ROOM)}/nosuch${q}`), 404, "M_NOT_FOUND");
      expect((await call(u, "GET", `${V3}/room_keys/keys/${enc("!empty:weft.test")}${q}`)).json).toEqual({ sessions: {} });

      const delOne = await call(u, "DELETE", `${V3}/room_keys/keys/${enc(ROOM)}/s1${q}`);
      expectMatchesSpec(delOne, "DELETE", `${V3}/room_keys/keys/${enc(ROOM)}/s1`);
      expect(delOne.json).toEqual({ etag: "4", count: 2 });
      const delRoom = await call(u, "DELETE", `${V3}/room_keys/keys/${enc(ROOM)}${q}`);
      expect(delRoom.json).toEqual({ etag: "5", count: 1 });
      const delAll = await call(u, "DELETE", `${V3}/room_keys/keys${q}`);
      expectMatchesSpec(delAll, "DELETE", `${V3}/room_keys/keys`);
      expect(delAll.json).toEqual({ etag: "6", count: 0 });
      expect((await call(u, "GET", `${V3}/room_keys/keys${q}`)).json).toEqual({ rooms: {} });
    });

    it("replaces a stored session only with a better one; the etag moves only when keys change", async () => {
      const u = await user();
      const v = await newVersion(u);
      const put = (k: unknown) => call(u, "PUT", `${V3}/room_keys/keys/${enc(ROOM)}/s?version=${v}`, k);
      const get = async () => (await call(u, "GET", `${V3}/room_keys/keys/${enc(ROOM)}/s?version=${v}`)).json;
      expect((await put(key(5, 2, false, "a"))).json).toEqual({ etag: "1", count: 1 });
      expect((await put(key(6, 0, false, "worse index"))).json.etag).toBe("1");
      expect((await put(key(5, 3, false, "more forwarded"))).json.etag).toBe("1");
      expect((await get()).session_data.ciphertext).toBe("a");
      expect((await put(key(5, 1, false, "fewer forwards"))).json.etag).toBe("2");
      expect((await get()).session_data.ciphertext).toBe("fewer forwards");
      expect((await put(key(3, 9, false, "lower index"))).json.etag).toBe("3");
      expect((await put(key(9, 9, true, "verified"))).json.etag).toBe("4");
      expect((await put(key(0, 0, false, "unverified never wins"))).json.etag).toBe("4");
      expect(await get()).toEqual(key(9, 9, true, "verified"));
      expect((await put(key(8, 9, true, "verified, lower index"))).json.etag).toBe("5");
    });

    it("room and session ids named like Object.prototype's members are stored and read back like any other", async () => {
      // REST fuzz seed 3839774002: a key stored under the room "__proto__" made GET /room_keys/keys a 500.
      const u = await user();
      const v = await newVersion(u);
      for (const [room, session] of [["__proto__", "s1"], ["constructor", "__proto__"], [ROOM, "toString"]] as const) {
        const res = await call(u, "PUT", `${V3}/room_keys/keys/${enc(room)}/${enc(session)}?version=${v}`, key(1, 0, false, `${room}/${session}`));
        expect(res.status, JSON.stringify(res.json)).toBe(200);
      }
      const all = await call(u, "GET", `${V3}/room_keys/keys?version=${v}`);
      expect(all.status, JSON.stringify(all.json)).toBe(200);
      expectMatchesSpec(all, "GET", `${V3}/room_keys/keys`);
      const rooms = all.json.rooms;
      expect(Object.keys(rooms).sort()).toEqual([ROOM, "__proto__", "constructor"].sort());
      expect(Object.keys(rooms["constructor"].sessions)).toEqual(["__proto__"]);
      const one = await call(u, "GET", `${V3}/room_keys/keys/constructor?version=${v}`);
      expect(one.status).toBe(200);
      expect(Object.keys(one.json.sessions)).toEqual(["__proto__"]);
    });

    it("stores session_data in the shapes clients send (any JSON, as Synapse) and answers it as sent", async () => {
      const u = await user();
      const v = await newVersion(u);
      const q = `?version=${v}`;
      const shapes: [string, unknown][] = [["opaque", "anopaquestring"], ["object", { ciphertext: "c", mac: "m", ephemeral: "e" }], ["list", ["a", 1]], ["number", 7], ["empty", {}]];
      for (const [sid, data] of shapes) {
        const res = await call(u, "PUT", `${V3}/room_keys/keys/${enc(ROOM)}/${sid}${q}`, { first_message_index: 3, forwarded_count: 0, is_verified: false, session_data: data });
        expect(res.status, JSON.stringify(res.json)).toBe(200);
        expectMatchesSpec(res, "PUT", `${V3}/room_keys/keys/${enc(ROOM)}/${sid}`);
      }
      for (const [sid, data] of shapes) {
        const got = await call(u, "GET", `${V3}/room_keys/keys/${enc(ROOM)}/${sid}${q}`);
        expect(got.json).toEqual({ first_message_index: 3, forwarded_count: 0, is_verified: false, session_data: data });
      }
      expect((await call(u, "GET", `${V3}/room_keys/version`)).json.count).toBe(shapes.length);
    });

    it("a backup deleted and created again starts empty", async () => {
      const u = await user();
      const v = await newVersion(u);
      const put = await call(u, "PUT", `${V3}/room_keys/keys/${enc("!abcd")}/1234?version=${v}`, { first_message_index: 3, forwarded_count: 0, is_verified: false, session_data: "areallyopaquestring" });
      expect(put.status, JSON.stringify(put.json)).toBe(200);
      expect((await call(u, "GET", `${V3}/room_keys/keys?version=${v}`)).json).toEqual({ rooms: { "!abcd": { sessions: { "1234": { first_message_index: 3, forwarded_count: 0, is_verified: false, session_data: "areallyopaquestring" } } } } });
      expect((await call(u, "DELETE", `${V3}/room_keys/version/${v}`)).status).toBe(200);
      const again = await newVersion(u);
      expect(again).not.toBe(v);
      const keys = await call(u, "GET", `${V3}/room_keys/keys?version=${again}`);
      expect([keys.status, keys.json]).toEqual([200, { rooms: {} }]);
      expect((await call(u, "GET", `${V3}/room_keys/version`)).json).toMatchObject({ version: again, count: 0 });
    });

    it("writes only to the current version; the version parameter is required; bad bodies change nothing", async () => {
      const u = await user();
      const v1 = await newVersion(u);
      const v2 = await newVersion(u);
      const stale = await call(u, "PUT", `${V3}/room_keys/keys/${enc(ROOM)}/s?version=${v1}`, key(0, 0, false));
      expectError(stale, 403, "M_WRONG_ROOM_KEYS_VERSION");
      expect(stale.json.current_version).toBe(v2);
      expectError(await call(u, "PUT", `${V3}/room_keys/keys/${enc(ROOM)}/s?version=777`, key(0, 0, false)), 404, "M_NOT_FOUND");
      for (const [method, body] of [["PUT", key(0, 0, false)], ["GET", undefined], ["DELETE", undefined]] as const) {
        const res = await call(u, method, `${V3}/room_keys/keys/${enc(ROOM)}/s`, body);
        expectError(res, 400, "M_MISSING_PARAM");
        expect(res.json.error).toMatch(/version.*must be given/);
      }
      expectError(await call(u, "GET", `${V3}/room_keys/keys?version=777`), 404, "M_NOT_FOUND");
      expectError(await call(u, "DELETE", `${V3}/room_keys/keys?version=777`), 404, "M_NOT_FOUND");
      const q = `?version=${v2}`;
      expectError(await call(u, "PUT", `${V3}/room_keys/keys/${enc(ROOM)}/s${q}`, { first_message_index: 0, forwarded_count: 0, is_verified: false }), 400, "M_MISSING_PARAM");
      expectError(await call(u, "PUT", `${V3}/room_keys/keys/${enc(ROOM)}/s${q}`, { ...key(0, 0, false), is_verified: "yes" }), 400, "M_BAD_JSON");
      expectError(await call(u, "PUT", `${V3}/room_keys/keys/${enc(ROOM)}/s${q}`, { ...key(0, 0, false), first_message_index: -1 }), 400, "M_BAD_JSON");
      expectError(await call(u, "PUT", `${V3}/room_keys/keys/${enc(ROOM)}${q}`, { sessions: "x" }), 400, "M_BAD_JSON");
      expectError(await call(u, "PUT", `${V3}/room_keys/keys${q}`, {}), 400, "M_MISSING_PARAM");
      // A batch with one bad session stores nothing.
      expectError(await call(u, "PUT", `${V3}/room_keys/keys${q}`, { rooms: { [ROOM]: { sessions: { ok: key(0, 0, false), bad: { ...key(0, 0, false), forwarded_count: "many" } } } } }), 400, "M_BAD_JSON");
      expect((await call(u, "GET", `${V3}/room_keys/version`)).json).toMatchObject({ count: 0, etag: "0" });
    });
  });
});
