// Cross-signing over HTTP on SQLite and PostgreSQL, with real Ed25519 signatures made here: uploading
// master/self-signing/user-signing keys (first time without UIA, identical re-upload without UIA,
// replacement behind UIA), their refusals, signature uploads (devices by the self-signing key, the
// master key by a device, another user's master key by the user-signing key) with per-key failures,
// what /keys/query then shows to whom, and the device-list stream moving.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { loginUser, registerUser, type Session } from "../helpers/users.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { V3, crossSigningKeys, expectError, keyPair, signed, uploadDeviceKeys, type CrossSigning } from "../helpers/e2ee.ts";
import { currentDeviceListPosition } from "../../src/domain/e2ee/sync-data.ts";

const passwordAuth = (user: string, session: string) => ({ type: "m.login.password", identifier: { type: "m.id.user", user }, password: "password", session });

describe.each(backends())("cross-signing on %s", (backend) => {
  let t: TestServer;

  beforeAll(async () => {
    t = await startTestServer({ backend });
  });
  afterAll(async () => {
    await t?.close();
  });

  const upload = (who: Session, body: Record<string, unknown>) => t.call("POST", `${V3}/keys/device_signing/upload`, { token: who.access_token, body });
  const sigUpload = (who: Session, body: Record<string, unknown>) => t.call("POST", `${V3}/keys/signatures/upload`, { token: who.access_token, body });
  const query = (who: Session, users: string[]) => t.call("POST", `${V3}/keys/query`, { token: who.access_token, body: { device_keys: Object.fromEntries(users.map((u) => [u, []])) } });

  async function setUp(name: string): Promise<{ who: Session; cs: CrossSigning }> {
    const who = await registerUser(t, name);
    const cs = crossSigningKeys(who.user_id);
    const res = await upload(who, cs.body);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return { who, cs };
  }

  describe("POST /keys/device_signing/upload", () => {
    it("stores the first keys without UIA; /keys/query shows master and self-signing keys to all, the user-signing key to its owner", async () => {
      const alice = await registerUser(t, "alice");
      const bob = await registerUser(t, "bob");
      const cs = crossSigningKeys(alice.user_id);
      const p0 = await currentDeviceListPosition(t.hs.services);
      const res = await upload(alice, cs.body);
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expectMatchesSpec(res, "POST", `${V3}/keys/device_signing/upload`);
      expect(res.json).toEqual({});
      expect(await currentDeviceListPosition(t.hs.services)).toBeGreaterThan(p0);

      const mine = await query(alice, [alice.user_id]);
      expectMatchesSpec(mine, "POST", `${V3}/keys/query`);
      expect(mine.json.master_keys[alice.user_id]).toEqual(cs.body.master_key);
      expect(mine.json.self_signing_keys[alice.user_id]).toEqual(cs.body.self_signing_key);
      expect(mine.json.user_signing_keys[alice.user_id]).toEqual(cs.body.user_signing_key);
      const theirs = await query(bob, [alice.user_id]);
      expect(theirs.json.master_keys[alice.user_id]).toEqual(cs.body.master_key);
      expect(theirs.json.user_signing_keys).toEqual({});

      // The same keys again: no UIA, nothing changes.
      const again = await upload(alice, cs.body);
      expect(again.status, JSON.stringify(again.json)).toBe(200);
    });

    it("requires UIA to replace existing keys", async () => {
      const { who, cs } = await setUp("carol");
      const next = crossSigningKeys(who.user_id);
      const first = await upload(who, next.body);
      expect(first.status, JSON.stringify(first.json)).toBe(401);
      expect(first.json.flows).toEqual([{ stages: ["m.login.password"] }]);
      expect((await query(who, [who.user_id])).json.master_keys[who.user_id]).toEqual(cs.body.master_key);
      const done = await upload(who, { ...next.body, auth: passwordAuth("carol", first.json.session) });
      expect(done.status, JSON.stringify(done.json)).toBe(200);
      expect((await query(who, [who.user_id])).json.master_keys[who.user_id]).toEqual(next.body.master_key);
    });

    it("refuses keys badly signed, of another user, with a wrong usage, or without any master key", async () => {
      const dave = await registerUser(t, "dave");
      const cs = crossSigningKeys(dave.user_id);
      const stranger = keyPair();
      const badSsk = signed({ ...cs.body.self_signing_key, signatures: undefined }, dave.user_id, `ed25519:${cs.master.pub}`, stranger);
      expectError(await upload(dave, { ...cs.body, self_signing_key: badSsk }), 400, "M_INVALID_SIGNATURE");
      expectError(await upload(dave, { self_signing_key: cs.body.self_signing_key }), 400, "M_MISSING_PARAM");
      expectError(await upload(dave, { master_key: { ...cs.body.master_key, user_id: "@other:weft.test" } }), 400, "M_INVALID_PARAM");
      expectError(await upload(dave, { master_key: { ...cs.body.master_key, usage: ["self_signing"] } }), 400, "M_INVALID_PARAM");
      expectError(await upload(dave, { master_key: { ...cs.body.master_key, keys: { "ed25519:abc": "abc" } } }), 400, "M_INVALID_PARAM");
      expectError(await upload(dave, { master_key: "nope" }), 400, "M_BAD_JSON");
      expect((await query(dave, [dave.user_id])).json.master_keys).toEqual({});
      // A key whose public key is one of the user's device ids is refused.
      const clash = keyPair();
      const res = await t.call("POST", `${V3}/login`, { body: { type: "m.login.password", identifier: { type: "m.id.user", user: "dave" }, password: "password", device_id: clash.pub } });
      expect(res.status).toBe(200);
      const key = { user_id: dave.user_id, usage: ["master"], keys: { [`ed25519:${clash.pub}`]: clash.pub } };
      expectError(await upload(dave, { master_key: key }), 403, "M_FORBIDDEN");
    });
  });

  describe("POST /keys/signatures/upload", () => {
    it("a key id \"__proto__\" in the body is a failure like any other (not lost as the failures object's prototype)", async () => {
      const { who } = await setUp("mallory");
      // An own "__proto__" key, as JSON.parse makes it (an object literal would set the prototype instead).
      const body = JSON.parse(`{${JSON.stringify(who.user_id)}: {"__proto__": {"signatures": {}}, "constructor": {"signatures": {}}}}`);
      const res = await sigUpload(who, body);
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expectMatchesSpec(res, "POST", `${V3}/keys/signatures/upload`);
      expect(Object.keys(res.json.failures[who.user_id]).sort()).toEqual(["__proto__", "constructor"]);
      expect(res.json.failures[who.user_id]["constructor"].errcode).toMatch(/^M_/);
    });

    it("stores a device signed by the self-signing key and the master key signed by a device; /keys/query merges them", async () => {
      const { who, cs } = await setUp("erin");
      const dev = await uploadDeviceKeys(t, who);
      const other = await loginUser(t, "erin");
      await uploadDeviceKeys(t, other);
      const p0 = await currentDeviceListPosition(t.hs.services);
      const deviceSig = signed(dev.keys, who.user_id, `ed25519:${cs.ssk.pub}`, cs.ssk);
      const masterSig = signed(cs.body.master_key, who.user_id, `ed25519:${who.device_id}`, dev.ed);
      const res = await sigUpload(who, { [who.user_id]: { [who.device_id]: deviceSig, [cs.master.pub]: masterSig } });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expectMatchesSpec(res, "POST", `${V3}/keys/signatures/upload`);
      expect(res.json).toEqual({ failures: {} });
      expect(await currentDeviceListPosition(t.hs.services)).toBeGreaterThan(p0);

      const q = await query(other, [who.user_id]);
      expect(q.json.device_keys[who.user_id][who.device_id].signatures[who.user_id]).toEqual((deviceSig as any).signatures[who.user_id]);
      expect(q.json.master_keys[who.user_id].signatures[who.user_id][`ed25519:${who.device_id}`]).toBe((masterSig as any).signatures[who.user_id][`ed25519:${who.device_id}`]);
    });

    it("reports per-key failures: bad signatures, unknown devices, changed content, missing signing keys", async () => {
      const { who, cs } = await setUp("frank");
      const dev = await uploadDeviceKeys(t, who);
      const stranger = keyPair();
      const forged = signed(dev.keys, who.user_id, `ed25519:${cs.ssk.pub}`, stranger);
      const altered = signed({ ...dev.keys, algorithms: ["x"] }, who.user_id, `ed25519:${cs.ssk.pub}`, cs.ssk);
      const unknown = signed({ ...dev.keys, device_id: "NOSUCH" }, who.user_id, `ed25519:${cs.ssk.pub}`, cs.ssk);
      const res = await sigUpload(who, { [who.user_id]: { [who.device_id]: forged, NOSUCH: unknown, X: { no: "signatures" } } });
      expect(res.status).toBe(200);
      expectMatchesSpec(res, "POST", `${V3}/keys/signatures/upload`);
      expect(res.json.failures[who.user_id][who.device_id].errcode).toBe("M_INVALID_SIGNATURE");
      expect(res.json.failures[who.user_id].NOSUCH.errcode).toBe("M_NOT_FOUND");
      expect(res.json.failures[who.user_id].X.errcode).toBe("M_INVALID_SIGNATURE");
      const res2 = await sigUpload(who, { [who.user_id]: { [who.device_id]: altered } });
      expect(res2.json.failures[who.user_id][who.device_id].errcode).toBe("M_INVALID_SIGNATURE");
      const q = await query(who, [who.user_id]);
      expect(Object.keys(q.json.device_keys[who.user_id][who.device_id].signatures[who.user_id])).toEqual([`ed25519:${who.device_id}`]);

      // Without cross-signing keys, a device signature cannot be checked.
      const plain = await registerUser(t, "gina");
      const pdev = await uploadDeviceKeys(t, plain);
      const r3 = await sigUpload(plain, { [plain.user_id]: { [plain.device_id]: signed(pdev.keys, plain.user_id, "ed25519:whatever", stranger) } });
      expect(r3.json.failures[plain.user_id][plain.device_id].errcode).toBe("M_NOT_FOUND");
      expectError(await sigUpload(plain, { [plain.user_id]: "x" }), 400, "M_INVALID_PARAM");
      expectError(await sigUpload(plain, { "not-a-user": {} }), 400, "M_INVALID_PARAM");
    });

    it("signs another user's master key with the user-signing key: only the signer sees the signature", async () => {
      const { who: hank, cs: hcs } = await setUp("hank");
      const { who: ivy, cs: ics } = await setUp("ivy");
      const judy = await registerUser(t, "judy");
      const p0 = await currentDeviceListPosition(t.hs.services);
      const sig = signed(ics.body.master_key, hank.user_id, `ed25519:${hcs.usk.pub}`, hcs.usk);
      const res = await sigUpload(hank, { [ivy.user_id]: { [ics.master.pub]: sig, SOMETHINGELSE: sig } });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expect(res.json.failures).toEqual({ [ivy.user_id]: { SOMETHINGELSE: expect.objectContaining({ errcode: "M_NOT_FOUND" }) } });
      const p1 = await currentDeviceListPosition(t.hs.services);
      expect(p1).toBeGreaterThan(p0);
      // Only hank hears that ivy changed.
      expect(await t.hs.services.e2ee.deviceListChangedUsers(hank.user_id, p0, p1)).toEqual([ivy.user_id]);
      expect(await t.hs.services.e2ee.deviceListChangedUsers(judy.user_id, p0, p1)).toEqual([]);

      const seenByHank = (await query(hank, [ivy.user_id])).json.master_keys[ivy.user_id];
      expect(seenByHank.signatures[hank.user_id][`ed25519:${hcs.usk.pub}`]).toBe((sig as any).signatures[hank.user_id][`ed25519:${hcs.usk.pub}`]);
      const seenByJudy = (await query(judy, [ivy.user_id])).json.master_keys[ivy.user_id];
      expect(seenByJudy).toEqual(ics.body.master_key);

      const forged = signed(ics.body.master_key, hank.user_id, `ed25519:${hcs.usk.pub}`, keyPair());
      const bad = await sigUpload(hank, { [ivy.user_id]: { [ics.master.pub]: forged } });
      expect(bad.json.failures[ivy.user_id][ics.master.pub].errcode).toBe("M_INVALID_SIGNATURE");
      const remote = await sigUpload(hank, { "@zed:other.example": { KEY: sig } });
      expect(remote.json.failures["@zed:other.example"].KEY.errcode).toBe("M_NOT_FOUND");
    });
  });
});
