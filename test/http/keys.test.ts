// Device keys over HTTP on SQLite and PostgreSQL: upload (self-signed device keys, one-time keys,
// fallback keys; different device keys replacing the stored ones) and its refusals (Synapse's errcodes), query (all or some devices, display names, remote users as
// failures), claim (one-time keys consumed, then the fallback key reused until replaced), key changes
// between stream positions and sync-style tokens, and the clean-up when a device is deleted.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { loginUser, registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { V3, deviceKeysFor, expectError, otk, signed, uploadDeviceKeys, uploadKeys, keyPair } from "../helpers/e2ee.ts";
import { currentDeviceListPosition, deviceListChanges, oneTimeKeyCounts, unusedFallbackKeyTypes } from "../../src/domain/e2ee/sync-data.ts";
import { formatSyncToken, zeroToken } from "../../src/domain/sync/token.ts";

const enc = encodeURIComponent;

describe.each(backends())("keys on %s", (backend) => {
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

  const query = (who: Session, device_keys: Record<string, string[]>) => t.call("POST", `${V3}/keys/query`, { token: who.access_token, body: { device_keys } });
  const claim = (who: Session, one_time_keys: Record<string, Record<string, string>>) => t.call("POST", `${V3}/keys/claim`, { token: who.access_token, body: { one_time_keys } });

  describe("POST /keys/upload", () => {
    it("stores self-signed device keys and answers the one-time key counts (signed_curve25519 always)", async () => {
      const s = await loginUser(t, "alice");
      const dev = deviceKeysFor(s);
      const res = await uploadKeys(t, s, { device_keys: dev.keys });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expectMatchesSpec(res, "POST", `${V3}/keys/upload`);
      expect(res.json).toEqual({ one_time_key_counts: { signed_curve25519: 0 } });
      const q = await query(alice, { [alice.user_id]: [s.device_id] });
      expect(q.json.device_keys[alice.user_id][s.device_id]).toEqual({ ...dev.keys, unsigned: {} });
      // The same keys again are fine (a retried request).
      expect((await uploadKeys(t, s, { device_keys: dev.keys })).status).toBe(200);
    });

    it("refuses invalid device keys with M_BAD_JSON (one missing field: M_MISSING_PARAM), as Synapse, storing nothing", async () => {
      const s = await loginUser(t, "alice");
      const dev = deviceKeysFor(s);
      const k = dev.keys as any;
      const resign = (body: Record<string, unknown>) => signed({ ...body, signatures: undefined } as Record<string, unknown>, body.user_id as string, `ed25519:${s.device_id}`, dev.ed);
      const otks = { "my_algorithm:my_id_1": "KIhHVkAQi8r41aPNql2zTqQsInpFa8XdslQLC8F8BHc" };
      // algorithms, keys and signatures are required (sytest "Rejects invalid device keys").
      expectError(await uploadKeys(t, s, { device_keys: { user_id: s.user_id, device_id: s.device_id }, one_time_keys: otks }), 400, "M_BAD_JSON");
      expectError(await uploadKeys(t, s, { device_keys: resign({ ...k, user_id: bob.user_id }) }), 400, "M_BAD_JSON");
      expectError(await uploadKeys(t, s, { device_keys: resign({ ...k, device_id: "OTHERDEVICE" }) }), 400, "M_BAD_JSON");
      // (A missing or invalid self-signature is the receiving clients' to judge: test/http/conformance-accounts.test.ts.)
      expectError(await uploadKeys(t, s, { device_keys: { ...k, signatures: "no" } }), 400, "M_BAD_JSON");
      expectError(await uploadKeys(t, s, { device_keys: { ...k, signatures: { [s.user_id]: { x: 1 } } } }), 400, "M_BAD_JSON");
      expectError(await uploadKeys(t, s, { device_keys: { ...k, algorithms: "no" } }), 400, "M_BAD_JSON");
      expectError(await uploadKeys(t, s, { device_keys: { ...k, keys: { a: 1 } } }), 400, "M_BAD_JSON");
      expectError(await uploadKeys(t, s, { device_keys: { ...k, user_id: 5 } }), 400, "M_BAD_JSON");
      expectError(await uploadKeys(t, s, { device_keys: "no" }), 400, "M_BAD_JSON");
      expectError(await uploadKeys(t, s, { device_keys: { ...k, keys: undefined } }), 400, "M_MISSING_PARAM");
      expectError(await uploadKeys(t, s, { device_keys: null }), 400, "M_INVALID_PARAM");
      expect(await t.hs.services.e2ee.deviceKeys(s.user_id, s.device_id)).toBeUndefined();
      expect(await oneTimeKeyCounts(t.hs.services, s.user_id, s.device_id)).toEqual({ signed_curve25519: 0 });
    });

    it("replaces a device's keys with different ones, as Synapse, and moves the device list", async () => {
      const s = await loginUser(t, "alice");
      const dev = deviceKeysFor(s);
      expect((await uploadKeys(t, s, { device_keys: dev.keys })).status).toBe(200);
      const p0 = await currentDeviceListPosition(t.hs.services);
      const replacement = deviceKeysFor(s);
      const res = await uploadKeys(t, s, { device_keys: replacement.keys });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expectMatchesSpec(res, "POST", `${V3}/keys/upload`);
      const q = await query(alice, { [alice.user_id]: [s.device_id] });
      expect(q.json.device_keys[alice.user_id][s.device_id].keys).toEqual((replacement.keys as any).keys);
      const p1 = await currentDeviceListPosition(t.hs.services);
      expect(p1).toBeGreaterThan(p0);
      expect(await t.hs.services.e2ee.deviceListChangedUsers(alice.user_id, p0, p1)).toEqual([alice.user_id]);
      // The same keys again change nothing.
      expect((await uploadKeys(t, s, { device_keys: replacement.keys })).status).toBe(200);
      expect(await currentDeviceListPosition(t.hs.services)).toBe(p1);
    });

    it("counts one-time keys per algorithm and refuses a key id reused with other content", async () => {
      const s = await loginUser(t, "alice");
      const dev = await uploadDeviceKeys(t, s);
      const res = await uploadKeys(t, s, {
        one_time_keys: { "signed_curve25519:A1": otk(s, dev, 1), "signed_curve25519:A2": otk(s, dev, 2), "curve25519:B1": "cGxhaW4ga2V5" },
      });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expectMatchesSpec(res, "POST", `${V3}/keys/upload`);
      expect(res.json.one_time_key_counts).toEqual({ signed_curve25519: 2, curve25519: 1 });
      // The same key again is accepted and not counted twice.
      expect((await uploadKeys(t, s, { one_time_keys: { "signed_curve25519:A1": otk(s, dev, 1) } })).json.one_time_key_counts.signed_curve25519).toBe(2);
      expectError(await uploadKeys(t, s, { one_time_keys: { "signed_curve25519:A1": otk(s, dev, 9), "signed_curve25519:A3": otk(s, dev, 3) } }), 400, "M_INVALID_PARAM");
      expect(await oneTimeKeyCounts(t.hs.services, s.user_id, s.device_id)).toEqual({ signed_curve25519: 2, curve25519: 1 });
      expectError(await uploadKeys(t, s, { one_time_keys: { nocolon: otk(s, dev, 4) } }), 400, "M_BAD_JSON");
      expectError(await uploadKeys(t, s, { one_time_keys: { "signed_curve25519:A4:x": otk(s, dev, 4) } }), 400, "M_BAD_JSON");
      expectError(await uploadKeys(t, s, { one_time_keys: { "signed_curve25519:A4": 12 } }), 400, "M_BAD_JSON");
      expectError(await uploadKeys(t, s, { one_time_keys: { "signed_curve25519:A4": { key: "k" } } }), 400, "M_BAD_JSON");
      expectError(await uploadKeys(t, s, { fallback_keys: { "signed_curve25519:F": { ...otk(s, dev, 5, true), fallback: "yes" } } }), 400, "M_BAD_JSON");
      expectError(await uploadKeys(t, s, { one_time_keys: [] }), 400, "M_BAD_JSON");
      expect(await oneTimeKeyCounts(t.hs.services, s.user_id, s.device_id)).toEqual({ signed_curve25519: 2, curve25519: 1 });
    });

    it("needs a token and a JSON body", async () => {
      expectError(await t.call("POST", `${V3}/keys/upload`, { body: {} }), 401, "M_MISSING_TOKEN");
      expectError(await t.call("POST", `${V3}/keys/upload`, { token: alice.access_token, raw: "{no", headers: { "content-type": "application/json" } }), 400, "M_NOT_JSON");
    });

    it("concurrent identical uploads of one device (a client retrying) all succeed and store the keys once", async () => {
      const session = await loginUser(t, "alice");
      const dev = deviceKeysFor(session);
      const otks = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`signed_curve25519:C${i}`, otk(session, dev, i + 1)]));
      const body = { device_keys: dev.keys, one_time_keys: otks, fallback_keys: { "signed_curve25519:CF": otk(session, dev, 100, true) } };
      const results = await Promise.all(Array.from({ length: 8 }, () => uploadKeys(t, session, body)));
      expect(results.map((r) => r.status), JSON.stringify(results.map((r) => r.json))).toEqual(Array(8).fill(200));
      for (const r of results) expect(r.json.one_time_key_counts).toEqual({ signed_curve25519: 20 });
      expect(await unusedFallbackKeyTypes(t.hs.services, session.user_id, session.device_id)).toEqual(["signed_curve25519"]);
      const q = await query(alice, { [alice.user_id]: [session.device_id] });
      expect(q.json.device_keys[alice.user_id][session.device_id].keys).toEqual(dev.keys.keys);
    });
  });

  describe("POST /keys/query", () => {
    it("returns all or some devices with display names, {} for local users without keys, failures for other servers", async () => {
      const named = await loginUser(t, "bob", "password", { initial_device_display_name: "Bob's phone" });
      const dev = await uploadDeviceKeys(t, named);
      const other = await loginUser(t, "bob");
      await uploadDeviceKeys(t, other);
      const carol = await registerUser(t, "carol");
      const all = await query(alice, { [bob.user_id]: [], [carol.user_id]: [], "@dave:elsewhere.example": [] });
      expect(all.status, JSON.stringify(all.json)).toBe(200);
      expectMatchesSpec(all, "POST", `${V3}/keys/query`);
      expect(Object.keys(all.json.device_keys[bob.user_id]).sort()).toEqual([named.device_id, other.device_id].sort());
      expect(all.json.device_keys[bob.user_id][named.device_id]).toEqual({ ...dev.keys, unsigned: { device_display_name: "Bob's phone" } });
      expect(all.json.device_keys[carol.user_id]).toEqual({});
      expect(all.json.failures).toEqual({ "elsewhere.example": expect.objectContaining({ status: 503 }) });
      expect(all.json.device_keys["@dave:elsewhere.example"]).toBeUndefined();

      const some = await query(alice, { [bob.user_id]: [other.device_id, "NOSUCHDEVICE"] });
      expect(Object.keys(some.json.device_keys[bob.user_id])).toEqual([other.device_id]);
    });

    it("refuses bad input", async () => {
      expectError(await t.call("POST", `${V3}/keys/query`, { token: alice.access_token, body: {} }), 400, "M_MISSING_PARAM");
      expectError(await query(alice, { "not-a-user": [] }), 400, "M_INVALID_PARAM");
      expectError(await t.call("POST", `${V3}/keys/query`, { token: alice.access_token, body: { device_keys: { [bob.user_id]: "x" } } }), 400, "M_BAD_JSON");
      expectError(await t.call("POST", `${V3}/keys/query`, { body: { device_keys: {} } }), 401, "M_MISSING_TOKEN");
    });
  });

  describe("POST /keys/claim", () => {
    it("gives out one-time keys once each, then the fallback key again and again until it is replaced", async () => {
      const s = await loginUser(t, "bob");
      const dev = await uploadDeviceKeys(t, s);
      const fb1 = otk(s, dev, 50, true);
      await uploadKeys(t, s, { one_time_keys: { "signed_curve25519:K1": otk(s, dev, 1), "signed_curve25519:K2": otk(s, dev, 2) }, fallback_keys: { "signed_curve25519:F1": fb1 } });
      expect(await unusedFallbackKeyTypes(t.hs.services, s.user_id, s.device_id)).toEqual(["signed_curve25519"]);

      const ask = { [s.user_id]: { [s.device_id]: "signed_curve25519" } };
      const first = await claim(alice, ask);
      expect(first.status, JSON.stringify(first.json)).toBe(200);
      expectMatchesSpec(first, "POST", `${V3}/keys/claim`);
      const second = await claim(alice, ask);
      const got = [first, second].map((r) => Object.keys(r.json.one_time_keys[s.user_id][s.device_id])[0]);
      expect(got.sort()).toEqual(["signed_curve25519:K1", "signed_curve25519:K2"]);
      expect(first.json.one_time_keys[s.user_id][s.device_id][got[0]!]).toEqual(otk(s, dev, got[0] === "signed_curve25519:K1" ? 1 : 2));
      expect(await oneTimeKeyCounts(t.hs.services, s.user_id, s.device_id)).toEqual({ signed_curve25519: 0 });

      for (let i = 0; i < 2; i++) {
        const fb = await claim(alice, ask);
        expect(fb.json.one_time_keys[s.user_id][s.device_id]).toEqual({ "signed_curve25519:F1": fb1 });
      }
      expect(await unusedFallbackKeyTypes(t.hs.services, s.user_id, s.device_id)).toEqual([]);
      // Re-uploading the same fallback key keeps it used; a new one replaces it.
      await uploadKeys(t, s, { fallback_keys: { "signed_curve25519:F1": fb1 } });
      expect(await unusedFallbackKeyTypes(t.hs.services, s.user_id, s.device_id)).toEqual([]);
      const fb2 = otk(s, dev, 51, true);
      await uploadKeys(t, s, { fallback_keys: { "signed_curve25519:F2": fb2 } });
      expect(await unusedFallbackKeyTypes(t.hs.services, s.user_id, s.device_id)).toEqual(["signed_curve25519"]);
      expect((await claim(alice, ask)).json.one_time_keys[s.user_id][s.device_id]).toEqual({ "signed_curve25519:F2": fb2 });
      // A fresh one-time key is preferred again over the fallback key.
      await uploadKeys(t, s, { one_time_keys: { "signed_curve25519:K3": otk(s, dev, 3) } });
      expect(Object.keys((await claim(alice, ask)).json.one_time_keys[s.user_id][s.device_id])).toEqual(["signed_curve25519:K3"]);
    });

    it("answers nothing for unknown devices or algorithms, failures for other servers, and refuses bad input", async () => {
      const r = await claim(alice, { [bob.user_id]: { NOSUCH: "signed_curve25519" }, "@x:other.example": { D: "signed_curve25519" } });
      expect(r.status).toBe(200);
      expectMatchesSpec(r, "POST", `${V3}/keys/claim`);
      expect(r.json.one_time_keys).toEqual({});
      expect(Object.keys(r.json.failures)).toEqual(["other.example"]);
      expectError(await t.call("POST", `${V3}/keys/claim`, { token: alice.access_token, body: {} }), 400, "M_MISSING_PARAM");
      expectError(await claim(alice, { [bob.user_id]: "x" } as never), 400, "M_BAD_JSON");
      expectError(await claim(alice, { bad: {} }), 400, "M_INVALID_PARAM");
    });
  });

  describe("GET /keys/changes and device-list changes", () => {
    it("lists users sharing a room whose devices changed, and users who left", async () => {
      const s = t.hs.services;
      const erin = await registerUser(t, "erin");
      const frank = await registerUser(t, "frank");
      const roomId = await createRoom(t, erin, { preset: "public_chat" });
      expect((await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: frank.access_token, body: {} })).status).toBe(200);
      const p0 = await currentDeviceListPosition(s);
      const e0 = await s.e2ee.maxEventPosition();
      await uploadDeviceKeys(t, frank);
      const p1 = await currentDeviceListPosition(s);
      expect(p1).toBeGreaterThan(p0);

      const res = await t.call("GET", `${V3}/keys/changes?from=${p0}&to=${p1}`, { token: erin.access_token });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expectMatchesSpec(res, "GET", `${V3}/keys/changes`);
      expect(res.json).toEqual({ changed: [frank.user_id], left: [] });
      // Alice shares no room with frank: she hears nothing.
      expect((await t.call("GET", `${V3}/keys/changes?from=${p0}&to=${p1}`, { token: alice.access_token })).json.changed).toEqual([]);

      // Frank leaves: with sync-style tokens carrying the events position, erin learns he left.
      expect((await t.call("POST", `${V3}/rooms/${enc(roomId)}/leave`, { token: frank.access_token, body: {} })).status).toBe(200);
      const e1 = await s.e2ee.maxEventPosition();
      const token = (events: number, lists: number) => formatSyncToken({ ...zeroToken(), events, device_lists: lists });
      const left = await t.call("GET", `${V3}/keys/changes?from=${token(e0, p0)}&to=${token(e1, p1)}`, { token: erin.access_token });
      expect(left.json).toEqual({ changed: [], left: [frank.user_id] });

      // Joining back makes him "changed" again (a new shared room), through the domain function too.
      expect((await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: frank.access_token, body: {} })).status).toBe(200);
      const e2 = await s.e2ee.maxEventPosition();
      expect(await deviceListChanges(s, erin.user_id, { deviceLists: p1, events: e1 }, { deviceLists: p1, events: e2 })).toEqual({ changed: [frank.user_id], left: [] });
    });

    it("requires from and to, as integers or sync tokens", async () => {
      expectError(await t.call("GET", `${V3}/keys/changes?from=1`, { token: alice.access_token }), 400, "M_MISSING_PARAM");
      expectError(await t.call("GET", `${V3}/keys/changes?from=abc&to=2`, { token: alice.access_token }), 400, "M_INVALID_PARAM");
      expectError(await t.call("GET", `${V3}/keys/changes?from=1&to=2`), 401, "M_MISSING_TOKEN");
    });

    it("a new login and a renamed device move the device list", async () => {
      const s = t.hs.services;
      const p0 = await currentDeviceListPosition(s);
      const session = await loginUser(t, "alice");
      const p1 = await currentDeviceListPosition(s);
      expect(p1).toBeGreaterThan(p0);
      const rename = await t.call("PUT", `${V3}/devices/${session.device_id}`, { token: session.access_token, body: { display_name: "renamed" } });
      expect(rename.status).toBe(200);
      expect(await currentDeviceListPosition(s)).toBeGreaterThan(p1);
      expect(await s.e2ee.deviceListChangedUsers(alice.user_id, p0, await currentDeviceListPosition(s))).toEqual([alice.user_id]);
    });
  });

  describe("device deletion", () => {
    it("removes the device's keys, one-time and fallback keys and pending to-device messages, and moves the device list", async () => {
      const s = t.hs.services;
      const session = await loginUser(t, "bob");
      const dev = await uploadDeviceKeys(t, session);
      await uploadKeys(t, session, { one_time_keys: { "signed_curve25519:Z1": otk(session, dev, 1) }, fallback_keys: { "signed_curve25519:ZF": otk(session, dev, 2, true) } });
      const sent = await t.call("PUT", `${V3}/sendToDevice/m.test/del1`, { token: alice.access_token, body: { messages: { [bob.user_id]: { [session.device_id]: { hello: 1 } } } } });
      expect(sent.status).toBe(200);
      expect((await s.e2ee.toDeviceFor(bob.user_id, session.device_id, 0, undefined, 10)).length).toBe(1);
      const seen: number[] = [];
      const off = s.rooms.notifier.onStream((n) => { if (n.stream === "device_lists" && n.userIds?.includes(bob.user_id)) seen.push(n.position); });
      const before = await currentDeviceListPosition(s);

      const out = await t.call("POST", `${V3}/logout`, { token: session.access_token, body: {} });
      expect(out.status).toBe(200);
      off();
      expect(await s.e2ee.deviceKeys(bob.user_id, session.device_id)).toBeUndefined();
      expect(await oneTimeKeyCounts(s, bob.user_id, session.device_id)).toEqual({ signed_curve25519: 0 });
      expect(await unusedFallbackKeyTypes(s, bob.user_id, session.device_id)).toEqual([]);
      expect(await s.e2ee.toDeviceFor(bob.user_id, session.device_id, 0, undefined, 10)).toEqual([]);
      const after = await currentDeviceListPosition(s);
      expect(after).toBeGreaterThan(before);
      expect(seen).toContain(after);
      const q = await query(alice, { [bob.user_id]: [session.device_id] });
      expect(q.json.device_keys[bob.user_id]).toEqual({});
    });
  });
});
