// The GraphQL end-to-end encryption fields one by one, on each storage backend: each refuses bad input with
// the REST face's errcode in `extensions.errcode` and stores nothing; what one face writes the other reads
// (keys, backups); and syncUpdates' typed to-device messages, deleted only once acknowledged (an older
// `since` gets them again), with device list changes and key counts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { V3, crossSigningKeys, deviceKeysFor, otk, signed } from "../helpers/e2ee.ts";
import { createRoom } from "../helpers/rooms.ts";
import { errcode, gql, subscribe, wsClient } from "./client.ts";

const UPLOAD = `mutation ($input: KeysUploadInput!) { uploadKeys(input: $input) { oneTimeKeyCounts { algorithm count } } }`;
const COUNTS = `{ viewer { oneTimeKeyCounts { algorithm count } unusedFallbackKeyTypes } }`;
const QUERY = `query ($users: [KeysQueryUserInput!]!) { queryKeys(users: $users) { users { userId devices { deviceId keys } masterKey selfSigningKey userSigningKey } failures { serverName } } }`;
const CLAIM = `mutation ($claims: [KeyClaimInput!]!) { claimKeys(claims: $claims) { oneTimeKeys { userId deviceId keyId key } failures { serverName } } }`;
const TO_DEVICE = `mutation ($t: String!, $txn: String!, $m: [ToDeviceMessageInput!]!) { sendToDevice(eventType: $t, txnId: $txn, messages: $m) }`;
const CROSS = `mutation ($keys: CrossSigningKeysInput!, $auth: JSONObject) { uploadCrossSigningKeys(keys: $keys, auth: $auth) }`;
const SIGS = `mutation ($s: [SignedKeyInput!]!) { uploadSignatures(signatures: $s) { userId keyId errcode error } }`;
const BACKUP = `query ($v: String) { keyBackup(version: $v) { version algorithm authData count etag } }`;
const CREATE = `mutation ($alg: String!, $a: JSON!) { createKeyBackupVersion(algorithm: $alg, authData: $a) }`;
const UPDATE = `mutation ($v: String!, $alg: String!, $a: JSON!) { updateKeyBackupVersion(version: $v, algorithm: $alg, authData: $a) }`;
const DELETE = `mutation ($v: String!) { deleteKeyBackupVersion(version: $v) }`;
const PUT = `mutation ($v: String!, $k: [RoomKeyBackupInput!]!) { putRoomKeys(version: $v, keys: $k) { count etag } }`;
const KEYS = `query ($v: String!, $r: String, $s: String) { roomKeys(version: $v, roomId: $r, sessionId: $s) { roomId sessionId firstMessageIndex forwardedCount isVerified sessionData } }`;
const DELETE_KEYS = `mutation ($v: String!, $r: String, $s: String) { deleteRoomKeys(version: $v, roomId: $r, sessionId: $s) { count etag } }`;
const SYNC = `subscription ($since: String) { syncUpdates(since: $since) { nextBatch toDevice { sender type content } deviceLists { changed left } oneTimeKeyCounts { algorithm count } unusedFallbackKeyTypes } }`;

const ALG = "m.megolm_backup.v1.curve25519-aes-sha2";
const key = (n: number, extra: Record<string, unknown> = {}) => ({ roomId: "!r:weft.test", sessionId: `s${n}`, firstMessageIndex: n, forwardedCount: 0, isVerified: false, sessionData: { ciphertext: `c${n}` }, ...extra });

/** The first update of `sub` that carries to-device messages (other updates may come first). */
async function withToDevice(sub: ReturnType<typeof subscribe>, after: any = undefined): Promise<any> {
  const from = after === undefined ? 1 : sub.results.findIndex((r) => r.data.syncUpdates === after) + 2;
  for (let n = from; n <= from + 10; n++) {
    await sub.until(n, 20000);
    const u = sub.results[n - 1].data.syncUpdates;
    if (u.toDevice.length > 0) return u;
  }
  throw new Error("no update with to-device messages");
}

describe.each(backends())("GraphQL E2EE fields (%s)", (backend) => {
  let t: TestServer;
  let alice: Session;
  let bob: Session;
  let txn = 0;
  const as = (who: Session, query: string, variables?: Record<string, unknown>) => gql(t, query, variables, who.access_token);

  beforeAll(async () => {
    t = await startTestServer({ backend });
    alice = await registerUser(t, "alice");
    bob = await registerUser(t, "bob");
  });
  afterAll(async () => { await t?.close(); });

  it("uploadKeys and the viewer's key counts; bad keys refused and nothing stored", async () => {
    const dev = deviceKeysFor(alice);
    const up = await as(alice, UPLOAD, { input: { deviceKeys: dev.keys, oneTimeKeys: { "signed_curve25519:A1": otk(alice, dev, 1), "signed_curve25519:A2": otk(alice, dev, 2) }, fallbackKeys: { "signed_curve25519:F1": otk(alice, dev, 3, true) } } });
    expect(up.body).toEqual({ data: { uploadKeys: { oneTimeKeyCounts: [{ algorithm: "signed_curve25519", count: 2 }] } } });
    expect((await as(alice, COUNTS)).body.data.viewer).toEqual({ oneTimeKeyCounts: [{ algorithm: "signed_curve25519", count: 2 }], unusedFallbackKeyTypes: ["signed_curve25519"] });
    // REST reads what GraphQL wrote.
    const rest = await t.call("POST", `${V3}/keys/query`, { token: bob.access_token, body: { device_keys: { [alice.user_id]: [] } } });
    expect(rest.json.device_keys[alice.user_id][alice.device_id].keys).toEqual(dev.keys.keys);

    const bad = [
      { deviceKeys: { ...dev.keys, device_id: "OTHER" }, oneTimeKeys: { "signed_curve25519:B1": otk(alice, dev, 4) } },
      { oneTimeKeys: { nocolon: otk(alice, dev, 5) } },
      { oneTimeKeys: { "signed_curve25519:B2": 12 } },
      { fallbackKeys: { "signed_curve25519:F2": { ...otk(alice, dev, 6, true), fallback: "yes" } } },
    ];
    for (const input of bad) {
      const r = await as(alice, UPLOAD, { input });
      expect(errcode(r.body), JSON.stringify(input)).toBe("M_BAD_JSON");
      expect(r.body.data?.uploadKeys ?? null).toBeNull();
    }
    expect(errcode((await as(alice, UPLOAD, { input: { oneTimeKeys: { "signed_curve25519:A1": otk(alice, dev, 9) } } })).body)).toBe("M_INVALID_PARAM"); // reused id, other content
    expect(errcode((await as(alice, UPLOAD, { input: { oneTimeKeys: "no" } })).body)).toBe("M_BAD_JSON"); // not an object: refused by the scalar
    expect(errcode((await gql(t, UPLOAD, { input: {} })).body)).toBe("M_MISSING_TOKEN");
    expect((await as(alice, COUNTS)).body.data.viewer.oneTimeKeyCounts).toEqual([{ algorithm: "signed_curve25519", count: 2 }]);
  });

  it("queryKeys and claimKeys: local keys, remote servers as failures, malformed ids refused", async () => {
    const q = await as(bob, QUERY, { users: [{ userId: alice.user_id, deviceIds: [alice.device_id] }, { userId: "@nobody:weft.test" }] });
    expect(q.body.errors).toBeUndefined();
    const users = new Map<string, any>(q.body.data.queryKeys.users.map((u: any) => [u.userId, u]));
    expect(users.get(alice.user_id).devices.map((d: any) => d.deviceId)).toEqual([alice.device_id]);
    expect(users.get("@nobody:weft.test")).toEqual({ userId: "@nobody:weft.test", devices: [], masterKey: null, selfSigningKey: null, userSigningKey: null });
    expect(errcode((await as(bob, QUERY, { users: [{ userId: "not-a-user" }] })).body)).toBe("M_INVALID_PARAM");

    const c1 = await as(bob, CLAIM, { claims: [{ userId: alice.user_id, deviceId: alice.device_id, algorithm: "signed_curve25519" }, { userId: alice.user_id, deviceId: "NOSUCH", algorithm: "signed_curve25519" }] });
    expect(c1.body.data.claimKeys.oneTimeKeys).toHaveLength(1);
    expect(c1.body.data.claimKeys.oneTimeKeys[0]).toMatchObject({ userId: alice.user_id, deviceId: alice.device_id, keyId: "signed_curve25519:A1" });
    expect(c1.body.data.claimKeys.oneTimeKeys[0].key.key).toEqual(expect.any(String));
    expect(errcode((await as(bob, CLAIM, { claims: [{ userId: "not-a-user", deviceId: "D", algorithm: "signed_curve25519" }] })).body)).toBe("M_INVALID_PARAM");
    expect((await as(alice, COUNTS)).body.data.viewer.oneTimeKeyCounts).toEqual([{ algorithm: "signed_curve25519", count: 1 }]);
  });

  it("sendToDevice arrives typed in syncUpdates; deleted only once acknowledged (acknowledgeToDevice, or a since past it)", async () => {
    const ACK = `mutation ($upTo: String!) { acknowledgeToDevice(upTo: $upTo) }`;
    const ping = async (n: number) =>
      expect((await as(alice, TO_DEVICE, { t: "org.example.ping", txn: `t${++txn}`, m: [{ userId: bob.user_id, deviceId: bob.device_id, content: { n } }] })).body).toEqual({ data: { sendToDevice: true } });
    const c = wsClient(t, { authorization: `Bearer ${bob.access_token}` });
    try {
      const live = subscribe(c, SYNC, {});
      await live.until(1);
      const since = live.results[0].data.syncUpdates.nextBatch;
      await ping(1);
      const u1 = await withToDevice(live);
      expect(u1.toDevice).toEqual([{ sender: alice.user_id, type: "org.example.ping", content: { n: 1 } }]);
      expect(u1.deviceLists).toEqual({ changed: [], left: [] });
      expect(u1.oneTimeKeyCounts).toEqual([{ algorithm: "signed_curve25519", count: 0 }]);
      // The next update delivers only the new message, and reading it acknowledged nothing.
      await ping(2);
      const u2 = await withToDevice(live, u1);
      expect(u2.toDevice.map((e: any) => e.content)).toEqual([{ n: 2 }]);
      live.stop();
      const again = subscribe(c, SYNC, { since });
      expect((await withToDevice(again)).toDevice.map((e: any) => e.content)).toEqual([{ n: 1 }, { n: 2 }]);
      again.stop();

      // Acknowledged up to u1: from the start only the second is left.
      expect((await as(bob, ACK, { upTo: u1.nextBatch })).body).toEqual({ data: { acknowledgeToDevice: true } });
      const left = subscribe(c, SYNC, { since });
      expect((await withToDevice(left)).toDevice.map((e: any) => e.content)).toEqual([{ n: 2 }]);
      left.stop();
      // Subscribing with a since past it acknowledges it too, as /sync's since does.
      const past = subscribe(c, SYNC, { since: u2.nextBatch });
      await ping(3);
      expect((await withToDevice(past)).toDevice.map((e: any) => e.content)).toEqual([{ n: 3 }]);
      past.stop();
      const rest = await t.call("GET", `${V3}/sync?since=${encodeURIComponent(since)}&timeout=0`, { token: bob.access_token });
      expect(rest.json.to_device.events.map((e: any) => e.content)).toEqual([{ n: 3 }]);
    } finally {
      await c.dispose();
    }
    expect(errcode((await as(bob, ACK, { upTo: "nonsense" })).body)).toBe("M_INVALID_PARAM");
    expect(errcode((await as(alice, TO_DEVICE, { t: "m.test", txn: `t${++txn}`, m: [{ userId: "not-a-user", deviceId: "D", content: {} }] })).body)).toBe("M_INVALID_PARAM");
    expect(errcode((await gql(t, TO_DEVICE, { t: "m.test", txn: `t${++txn}`, m: [] })).body)).toBe("M_MISSING_TOKEN");
  });

  it("syncUpdates' deviceLists: changed when a room-mate's keys change, left when no room is shared any more", async () => {
    const carol = await registerUser(t, "carol");
    const roomId = await createRoom(t, alice, { invite: [carol.user_id] });
    expect((await t.call("POST", `${V3}/join/${encodeURIComponent(roomId)}`, { token: carol.access_token, body: {} })).status).toBe(200);
    const c = wsClient(t, { authorization: `Bearer ${alice.access_token}` });
    try {
      const live = subscribe(c, SYNC, {});
      await live.until(1);
      const find = async (pred: (u: any) => boolean, what: string) => {
        for (let n = 2; n <= 12; n++) {
          await live.until(n, 20000);
          const u = live.results[n - 1].data.syncUpdates;
          if (pred(u)) return u;
        }
        throw new Error(`no update with ${what}`);
      };
      const up = await as(carol, UPLOAD, { input: { deviceKeys: deviceKeysFor(carol).keys } });
      expect(up.body.errors).toBeUndefined();
      expect((await find((u) => u.deviceLists.changed.includes(carol.user_id), "carol changed")).deviceLists.left).toEqual([]);
      expect((await t.call("POST", `${V3}/rooms/${encodeURIComponent(roomId)}/leave`, { token: carol.access_token, body: {} })).status).toBe(200);
      expect((await find((u) => u.deviceLists.left.includes(carol.user_id), "carol left")).deviceLists.changed).not.toContain(carol.user_id);
      live.stop();
    } finally {
      await c.dispose();
    }
  });

  it("uploadCrossSigningKeys and uploadSignatures: refusals, then keys and a signature stored", async () => {
    const cs = crossSigningKeys(alice.user_id);
    const keys = { masterKey: cs.body.master_key, selfSigningKey: cs.body.self_signing_key, userSigningKey: cs.body.user_signing_key };
    expect(errcode((await as(alice, CROSS, { keys: { ...keys, masterKey: { ...keys.masterKey, user_id: bob.user_id } } })).body)).toBe("M_INVALID_PARAM");
    expect(errcode((await as(alice, CROSS, { keys: { selfSigningKey: keys.selfSigningKey } })).body)).toBe("M_MISSING_PARAM");
    const forged = signed({ ...(cs.body.self_signing_key as any), signatures: undefined }, alice.user_id, `ed25519:${cs.master.pub}`, cs.ssk);
    expect(errcode((await as(alice, CROSS, { keys: { ...keys, selfSigningKey: forged } })).body)).toBe("M_INVALID_SIGNATURE");
    expect((await as(bob, QUERY, { users: [{ userId: alice.user_id }] })).body.data.queryKeys.users[0].masterKey).toBeNull();
    expect((await as(alice, CROSS, { keys })).body).toEqual({ data: { uploadCrossSigningKeys: true } });
    // Re-sending the same keys needs no authentication; replacing them does (REST's 401 in the extensions).
    expect((await as(alice, CROSS, { keys })).body).toEqual({ data: { uploadCrossSigningKeys: true } });
    const other = crossSigningKeys(alice.user_id);
    const asked = await as(alice, CROSS, { keys: { masterKey: other.body.master_key } });
    expect(errcode(asked.body)).toBe("M_UNAUTHORIZED");
    expect(asked.body.errors![0].extensions).toMatchObject({ flows: [{ stages: ["m.login.password"] }], session: expect.any(String) });

    const dev = await t.call("POST", `${V3}/keys/query`, { token: alice.access_token, body: { device_keys: { [alice.user_id]: [alice.device_id] } } });
    const { unsigned: _u, ...deviceKeys } = dev.json.device_keys[alice.user_id][alice.device_id];
    const good = signed(deviceKeys, alice.user_id, `ed25519:${cs.ssk.pub}`, cs.ssk);
    const res = await as(alice, SIGS, { s: [{ userId: alice.user_id, keyId: alice.device_id, signed: good }, { userId: alice.user_id, keyId: "NOSUCH", signed: good }] });
    expect(res.body.data.uploadSignatures).toEqual([{ userId: alice.user_id, keyId: "NOSUCH", errcode: "M_NOT_FOUND", error: expect.any(String) }]);
    const devices = await as(alice, `{ viewer { devices { deviceId crossSigned } } }`);
    expect(devices.body.data.viewer.devices.find((d: any) => d.deviceId === alice.device_id).crossSigned).toBe(true);
    expect(errcode((await as(alice, SIGS, { s: [{ userId: "not-a-user", keyId: "K", signed: {} }] })).body)).toBe("M_INVALID_PARAM");
  });

  it("key backup versions and keys: errors as REST's, storage unchanged by refusals, REST reads what GraphQL wrote", async () => {
    expect((await as(bob, BACKUP, {})).body).toEqual({ data: { keyBackup: null } });
    expect(errcode((await as(bob, CREATE, { alg: "", a: {} })).body)).toBe("M_BAD_JSON");
    expect((await as(bob, BACKUP, {})).body.data.keyBackup).toBeNull();
    const old = (await as(bob, CREATE, { alg: ALG, a: { public_key: "old" } })).body.data.createKeyBackupVersion as string;
    const v = (await as(bob, CREATE, { alg: ALG, a: { public_key: "abc" } })).body.data.createKeyBackupVersion as string;
    expect(Number(v)).toBeGreaterThan(Number(old));
    expect((await as(bob, BACKUP, {})).body.data.keyBackup).toEqual({ version: v, algorithm: ALG, authData: { public_key: "abc" }, count: 0, etag: "0" });
    expect((await as(bob, BACKUP, { v: "999" })).body.data.keyBackup).toBeNull();

    expect((await as(bob, UPDATE, { v, alg: ALG, a: { public_key: "def" } })).body).toEqual({ data: { updateKeyBackupVersion: true } });
    expect(errcode((await as(bob, UPDATE, { v, alg: "m.other", a: {} })).body)).toBe("M_INVALID_PARAM");
    expect(errcode((await as(bob, UPDATE, { v: "999", alg: ALG, a: {} })).body)).toBe("M_NOT_FOUND");

    expect((await as(bob, PUT, { v, k: [key(1), key(2)] })).body.data.putRoomKeys).toEqual({ count: 2, etag: "1" });
    const wrong = await as(bob, PUT, { v: old, k: [key(3)] });
    expect(errcode(wrong.body)).toBe("M_WRONG_ROOM_KEYS_VERSION");
    expect(wrong.body.errors![0].extensions!.current_version).toBe(v);
    expect(errcode((await as(bob, PUT, { v: "999", k: [key(3)] })).body)).toBe("M_NOT_FOUND");
    expect(errcode((await as(bob, PUT, { v, k: [key(3, { firstMessageIndex: -1 })] })).body)).toBe("M_BAD_JSON");
    expect(errcode((await as(bob, PUT, { v, k: [key(3, { firstMessageIndex: "x" })] })).body)).toBe("M_BAD_JSON"); // refused by Int
    // A worse key (higher first message index) does not replace a stored one.
    expect((await as(bob, PUT, { v, k: [key(2, { firstMessageIndex: 9 })] })).body.data.putRoomKeys).toEqual({ count: 2, etag: "1" });

    const all = (await as(bob, KEYS, { v })).body.data.roomKeys;
    expect(all.map((k: any) => k.sessionId).sort()).toEqual(["s1", "s2"]);
    expect((await as(bob, KEYS, { v, r: "!r:weft.test", s: "s2" })).body.data.roomKeys).toEqual([{ roomId: "!r:weft.test", sessionId: "s2", firstMessageIndex: 2, forwardedCount: 0, isVerified: false, sessionData: { ciphertext: "c2" } }]);
    expect(errcode((await as(bob, KEYS, { v, s: "s2" })).body)).toBe("M_MISSING_PARAM");
    expect(errcode((await as(bob, KEYS, { v, r: "!r:weft.test", s: "nosuch" })).body)).toBe("M_NOT_FOUND");
    expect(errcode((await as(bob, KEYS, { v: "999" })).body)).toBe("M_NOT_FOUND");
    const rest = await t.call("GET", `${V3}/room_keys/keys?version=${v}`, { token: bob.access_token });
    expect(Object.keys(rest.json.rooms["!r:weft.test"].sessions).sort()).toEqual(["s1", "s2"]);

    expect((await as(bob, DELETE_KEYS, { v, r: "!r:weft.test", s: "s1" })).body.data.deleteRoomKeys.count).toBe(1);
    expect(errcode((await as(bob, DELETE_KEYS, { v, s: "s1" })).body)).toBe("M_MISSING_PARAM");
    expect(errcode((await as(bob, DELETE_KEYS, { v: "999" })).body)).toBe("M_NOT_FOUND");
    expect((await as(bob, DELETE, { v })).body).toEqual({ data: { deleteKeyBackupVersion: true } });
    expect(errcode((await as(bob, DELETE, { v: "abc" })).body)).toBe("M_NOT_FOUND");
    // The newest version left is the current one again; with none left there is no backup.
    expect((await as(bob, BACKUP, {})).body.data.keyBackup.version).toBe(old);
    expect((await as(bob, DELETE, { v: old })).body.data.deleteKeyBackupVersion).toBe(true);
    expect((await as(bob, BACKUP, {})).body.data.keyBackup).toBeNull();
  });
});
