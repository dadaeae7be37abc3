// Device lists over federation as the conformance suites' own remote servers see them (SQLite and
// PostgreSQL): a device uploading keys that differ from its stored ones is answered 200 and the other
// servers get an m.device_list_update following on the previous one (prev_id); from a scripted remote
// server: an update with a gap is resynced through GET /user/devices (with the display names the server
// gives; an update whose keys are not in the spec's shape is an update all the same; keys no signature
// verifies are kept for clients to judge), a client's query for all of a user's devices with no copy held
// resyncs too and is answered from the copy afterwards — also when the user's server no longer answers
// (a failed resync leaves the copy as it was); between two Weft servers: a server whose users all left the rooms it shared with someone, and
// came back, resyncs that user's devices instead of answering from a copy that missed updates.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { federationCall, signedBy, startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { eventually, joinAsRemote, joinFromPeer, startRecordingPeer, type RecordingPeer } from "../helpers/federation-peer.ts";
import { startFakeOrigin, type FakeOrigin, type FakeRequest } from "../helpers/fake-origin.ts";
import { loginUser, registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { deviceKeysFor, keyPair, signed, uploadDeviceKeys, uploadKeys, type Ed25519 } from "../helpers/e2ee.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

/** Device keys of a remote user's device, self-signed with `ed`. */
function remoteKeys(userId: string, deviceId: string, ed: Ed25519, curve = keyPair().pub): Record<string, unknown> {
  const body = { user_id: userId, device_id: deviceId, algorithms: ["m.olm.v1.curve25519-aes-sha2", "m.megolm.v1.aes-sha2"], keys: { [`ed25519:${deviceId}`]: ed.pub, [`curve25519:${deviceId}`]: curve } };
  return signed(body, userId, `ed25519:${deviceId}`, ed);
}

describe.each(backends())("device lists over federation on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let alice: Session;
  let bob: Session;
  let txn = 0;

  beforeAll(async () => {
    [a, b] = await Promise.all([startFederatedServer({ backend }), startFederatedServer({ backend })]);
    [alice, bob] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob")]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  const query = (t: FederatedServer, who: Session, users: Record<string, string[]>, timeout?: number) =>
    t.call("POST", `${V3}/keys/query`, { token: who.access_token, body: { device_keys: users, ...(timeout === undefined ? {} : { timeout }) } });

  it("a device uploading keys that differ from its stored ones: 200, and the room's servers get an update following on the last (prev_id)", async () => {
    const peer: RecordingPeer = await startRecordingPeer();
    try {
      peer.trust(a.serverName, a.hs.services.signingKeys[0]!);
      const session = await loginUser(a, "alice");
      const roomId = await createRoom(a, alice, { preset: "public_chat" });
      await joinFromPeer(a, peer, roomId, peer.user("pat"));
      // (The new login's own update, without keys, may reach the peer too if it joined before it was sent.)
      const updates = () => peer.edus().filter((e) => e.edu_type === "m.device_list_update" && e.content.device_id === session.device_id && e.content.keys).map((e) => e.content);

      const first = deviceKeysFor(session);
      expect((await uploadKeys(a, session, { device_keys: first.keys })).status).toBe(200);
      const [one] = await eventually(() => updates().length === 1 && updates(), "the first update at the peer");
      expect(one.keys).toEqual(first.keys);

      const second = deviceKeysFor(session);
      const res = await uploadKeys(a, session, { device_keys: second.keys });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expectMatchesSpec(res, "POST", `${V3}/keys/upload`);
      const [, two] = await eventually(() => updates().length === 2 && updates(), "the second update at the peer");
      expect(two).toMatchObject({ user_id: alice.user_id, device_id: session.device_id, prev_id: [one.stream_id], keys: second.keys });
      expect(two.stream_id).toBeGreaterThan(one.stream_id);
    } finally {
      await peer.close();
    }
  });

  describe("from a scripted remote server", () => {
    let origin: FakeOrigin;
    let roomId: string;
    const devicesAsked = (userId: string) => origin.requests.filter((r) => r.method === "GET" && r.path === `/_matrix/federation/v1/user/devices/${userId}`).length;
    const keysAsked = () => origin.requests.filter((r) => r.path === "/_matrix/federation/v1/user/keys/query").length;

    beforeAll(async () => {
      origin = await startFakeOrigin();
      roomId = await createRoom(a, alice, { preset: "public_chat" });
    });
    afterAll(async () => {
      await origin?.close();
    });

    /** The origin's own answers to what A sends it; `devices` answers GET /user/devices. */
    function answer(devices: (req: FakeRequest) => { status: number; json: unknown } | undefined) {
      origin.handler = (req) => {
        if (req.method === "PUT" && req.path.startsWith("/_matrix/federation/v1/send/")) return { status: 200, json: { pdus: {} } };
        if (req.method === "GET" && req.path.startsWith("/_matrix/federation/v1/user/devices/")) return devices(req);
        return { status: 404, json: { errcode: "M_UNRECOGNIZED", error: "Unrecognized request" } };
      };
    }

    async function sendEdus(edus: unknown[]) {
      const path = `/_matrix/federation/v1/send/scripted-${++txn}`;
      const body = { origin: origin.serverName, origin_server_ts: Date.now(), pdus: [], edus };
      const res = await federationCall(a.baseUrl, { method: "PUT", path, body, authorization: signedBy(origin.serverName, origin.key, a.serverName, { method: "PUT", path, body }) });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
    }

    const held = async (userId: string) => {
      const row = await a.hs.services.storage.sql.get<{ stream_id: number }>(`SELECT stream_id FROM remote_device_lists WHERE user_id = ?`, [userId]);
      return row === undefined ? undefined : Number(row.stream_id);
    };

    it("an update with a gap resyncs through /user/devices, keeping the display names the server gives", async () => {
      const dana = origin.user("dana");
      await joinAsRemote(a, origin, roomId, dana);
      const ed = keyPair();
      let devices = { user_id: dana, stream_id: 1, devices: [{ device_id: "DANA1", keys: remoteKeys(dana, "DANA1", ed), device_display_name: "Original name" }] };
      answer(() => ({ status: 200, json: devices }));

      // No copy held: the first update is resynced, though the keys it carries are not in the spec's shape
      // (sytest's remote server sends such): it is an update of the stream all the same.
      await sendEdus([{ edu_type: "m.device_list_update", content: { user_id: dana, device_id: "DANA1", stream_id: 1, keys: { device_keys: {} } } }]);
      await eventually(async () => (await held(dana)) === 1, "the copy of dana's devices");
      expect(devicesAsked(dana)).toBe(1);
      const q1 = await query(a, alice, { [dana]: [] });
      expect(q1.status, JSON.stringify(q1.json)).toBe(200);
      expectMatchesSpec(q1, "POST", `${V3}/keys/query`);
      expect(q1.json.device_keys[dana].DANA1).toEqual({ ...devices.devices[0]!.keys, unsigned: { device_display_name: "Original name" } });

      // Update 2 never arrives; update 3 (prev_id 2) shows the gap: A resyncs and gets both changes — keys
      // no signature verifies among them, kept for clients to judge (as Synapse, and as our own users' keys).
      const renewed = { ...remoteKeys(dana, "DANA1", ed), signatures: {} };
      devices = { user_id: dana, stream_id: 3, devices: [{ device_id: "DANA1", keys: renewed, device_display_name: "New device name" }] };
      await sendEdus([{ edu_type: "m.device_list_update", content: { user_id: dana, device_id: "DANA1", device_display_name: "New device name", prev_id: [2], stream_id: 3, keys: q1.json.device_keys[dana].DANA1 } }]);
      await eventually(async () => (await held(dana)) === 3, "the resynced copy");
      expect(devicesAsked(dana)).toBe(2);
      const q2 = await query(a, alice, { [dana]: ["DANA1"] });
      expect(q2.json.device_keys[dana].DANA1).toEqual({ ...renewed, unsigned: { device_display_name: "New device name" } });
      expect(keysAsked()).toBe(0);

      // An update that follows on, with keys of another device: applied, and the device has no keys to serve.
      await sendEdus([{ edu_type: "m.device_list_update", content: { user_id: dana, device_id: "DANA1", prev_id: [3], stream_id: 4, keys: remoteKeys(dana, "OTHER", ed) } }]);
      await eventually(async () => (await held(dana)) === 4, "the update applied");
      expect(devicesAsked(dana)).toBe(2);
      expect((await query(a, alice, { [dana]: [] })).json.device_keys[dana]).toEqual({});
    });

    it("a query for all of a user's devices resyncs when no copy is held, and is answered from the copy while their server is unreachable", async () => {
      const rover = origin.user("rover");
      await joinAsRemote(a, origin, roomId, rover);
      // Keys as sytest's remote server gives them: key ids without algorithms, signed by another device.
      const keys = { user_id: rover, device_id: "CURIOSITY_ROVER", algorithms: ["fast", "and broken"], keys: { c: "c2hhcnA", b: "ZmxhdA" }, signatures: { [rover]: { "ed25519:JLAFKJWSCS": "dSO80A01XiigH3uBiDVx/EjzaoycHcjq9lfQX0uWsqxl2giMIiSPR8a4d291W1ihKJL/a+myXS367WT6NAIcBA" } } };
      answer(() => ({ status: 200, json: { user_id: rover, stream_id: 3, devices: [{ device_id: "CURIOSITY_ROVER", keys, device_display_name: "Curiosity Rover" }] } }));
      const expected = { CURIOSITY_ROVER: { ...keys, unsigned: { device_display_name: "Curiosity Rover" } } };

      const first = await query(a, alice, { [rover]: [] });
      expect(first.status, JSON.stringify(first.json)).toBe(200);
      expect(first.json.device_keys[rover]).toEqual(expected);
      expect(first.json.failures).toEqual({});
      expect(devicesAsked(rover)).toBe(1);
      expect(keysAsked()).toBe(0);
      expect(await held(rover)).toBe(3);

      // The server now refuses everything: an update with a gap cannot be resynced, and the copy stays.
      answer(() => ({ status: 400, json: { errcode: "M_UNKNOWN", error: "down" } }));
      await sendEdus([{ edu_type: "m.device_list_update", content: { user_id: rover, device_id: "CURIOSITY_ROVER", prev_id: [5], stream_id: 6, keys } }]);
      await eventually(() => devicesAsked(rover) === 2, "the failed resync");
      const second = await query(a, alice, { [rover]: [] });
      expect([second.json.device_keys[rover], second.json.failures]).toEqual([expected, {}]);
      expect(await held(rover)).toBe(3);

      // Gone altogether: still answered from the copy, at once.
      await origin.close();
      const third = await query(a, alice, { [rover]: [] }, 2000);
      expect([third.json.device_keys[rover], third.json.failures]).toEqual([expected, {}]);
    });
  });

  it("a server whose users all left the rooms shared with someone, and came back, resyncs that user's devices", async () => {
    const roomId = await createRoom(a, alice, { preset: "public_chat" });
    const join = () => b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: bob.access_token, body: {} });
    expect((await join()).status).toBe(200);
    await eventually(async () => (await a.hs.services.rooms.store.membership(roomId, bob.user_id))?.membership === "join", "bob joined on A");
    const phone = await loginUser(a, "alice");
    const phoneDev = await uploadDeviceKeys(a, phone);
    const aliceDevices = async () => Object.keys((await query(b, bob, { [alice.user_id]: [] })).json.device_keys[alice.user_id] ?? {}).sort();
    const copyOnB = () => b.hs.services.storage.sql.get(`SELECT 1 AS x FROM remote_device_lists WHERE user_id = ?`, [alice.user_id]);
    await eventually(async () => (await aliceDevices()).includes(phone.device_id), "alice's phone on B");
    expect(await copyOnB()).toBeDefined();

    // Bob leaves: B shares no room with alice any more, and its copy stops following A's updates.
    expect((await b.call("POST", `${V3}/rooms/${enc(roomId)}/leave`, { token: bob.access_token, body: {} })).status).toBe(200);
    await eventually(async () => (await copyOnB()) === undefined, "B's copy of alice's devices dropped");
    // Meanwhile alice gets a new device; A does not tell B (no shared room).
    const tablet = await loginUser(a, "alice");
    const tabletDev = await uploadDeviceKeys(a, tablet);

    expect((await join()).status).toBe(200);
    const devices = await eventually(async () => {
      const r = await query(b, bob, { [alice.user_id]: [] });
      return r.json.device_keys[alice.user_id]?.[tablet.device_id] ? r.json.device_keys[alice.user_id] : undefined;
    }, "alice's tablet on B after bob came back");
    expect(devices[tablet.device_id]).toEqual(tabletDev.keys);
    expect(devices[phone.device_id]).toEqual(phoneDev.keys);
    expect(await copyOnB()).toBeDefined();
  });
});
