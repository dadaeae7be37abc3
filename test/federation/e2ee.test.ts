// End-to-end encryption across two Weft servers over TLS on loopback (SQLite and PostgreSQL): the
// federation key endpoints (user/keys/query, user/keys/claim, user/devices) serve only the server's own
// users in the spec's shapes; a client's /keys/query and /keys/claim for a remote user reach that user's
// server (a server that does not answer within `timeout` is in `failures`); device and cross-signing
// changes reach the other server as EDUs and its users' /sync `device_lists.changed` (and `left` once no
// room is shared), with the copy of the device list kept there resynced and served; to-device messages
// cross as m.direct_to_device and are delivered exactly once; hostile and malformed EDUs change nothing.
import { createServer as createNetServer, type Server as NetServer, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { federationCall, signedBy, startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { loginUser, registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { crossSigningKeys, keyPair, otk, signed, uploadDeviceKeys, uploadKeys, type CrossSigning, type DeviceIdentity } from "../helpers/e2ee.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("E2EE across Weft servers on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let alice: Session;
  let bob: Session;
  let aliceDev: DeviceIdentity;
  let aliceCs: CrossSigning;
  let roomId: string;
  let bobSince: string;
  let txn = 0;

  beforeAll(async () => {
    [a, b] = await Promise.all([startFederatedServer({ backend }), startFederatedServer({ backend })]);
    [alice, bob] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob")]);
    aliceDev = await uploadDeviceKeys(a, alice);
    const up = await uploadKeys(a, alice, { one_time_keys: { [`signed_curve25519:AAA1`]: otk(alice, aliceDev, 1), [`signed_curve25519:AAA2`]: otk(alice, aliceDev, 2) } });
    expect(up.status).toBe(200);
    aliceCs = crossSigningKeys(alice.user_id);
    const cs = await a.call("POST", `${V3}/keys/device_signing/upload`, { token: alice.access_token, body: aliceCs.body });
    expect(cs.status, JSON.stringify(cs.json)).toBe(200);
    await uploadDeviceKeys(b, bob);
    roomId = await createRoom(a, alice, { preset: "public_chat" });
    const join = await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: bob.access_token, body: {} });
    expect(join.status, JSON.stringify(join.json)).toBe(200);
    // A knows bob joined (through B's join handshake) before anything is sent to B.
    await eventually(async () => (await a.hs.services.rooms.store.membership(roomId, bob.user_id))?.membership === "join", "bob joined on A");
    bobSince = (await b.call("GET", `${V3}/sync`, { token: bob.access_token })).json.next_batch;
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  /** A request to A signed by B (as B's own federation client would send it). */
  async function signedToA(method: "GET" | "POST" | "PUT", path: string, body?: unknown) {
    const authorization = signedBy(b.serverName, b.hs.services.signingKeys[0]!, a.serverName, { method, path, body });
    return federationCall(a.baseUrl, { method, path, body, authorization });
  }

  /** Hands A one transaction of EDUs from B through PUT /send, exactly as B's sender does. */
  async function sendEdus(edus: unknown[]) {
    const res = await signedToA("PUT", `/_matrix/federation/v1/send/e2ee-test-${++txn}`, { origin: b.serverName, origin_server_ts: Date.now(), pdus: [], edus });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
  }

  /** Long-polls bob's /sync until `pick` finds something. */
  async function bobSyncUntil<T>(pick: (sync: any) => T | undefined, what: string): Promise<T> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const res = await b.call("GET", `${V3}/sync?since=${enc(bobSince)}&timeout=3000`, { token: bob.access_token });
      expect(res.status).toBe(200);
      bobSince = res.json.next_batch;
      const found = pick(res.json);
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`no ${what} in bob's /sync`);
    }
  }
  const changedIn = (userId: string) => (sync: any) => ((sync.device_lists?.changed ?? []) as string[]).includes(userId) || undefined;

  const queryFromB = (users: Record<string, string[]>, timeout?: number) =>
    b.call("POST", `${V3}/keys/query`, { token: bob.access_token, body: { device_keys: users, ...(timeout === undefined ? {} : { timeout }) } });

  it("serves user/keys/query, user/keys/claim and user/devices for its own users only, in the spec's shapes", async () => {
    const q = await signedToA("POST", "/_matrix/federation/v1/user/keys/query", { device_keys: { [alice.user_id]: [], [bob.user_id]: [], "@nobody:elsewhere.example": [] } });
    expect(q.status, JSON.stringify(q.json)).toBe(200);
    expectMatchesSpec(q, "POST", "/_matrix/federation/v1/user/keys/query");
    expect(Object.keys(q.json.device_keys)).toEqual([alice.user_id]);
    expect(q.json.device_keys[alice.user_id][alice.device_id]).toEqual(aliceDev.keys); // no display name over federation
    expect(q.json.master_keys[alice.user_id].keys).toEqual(aliceCs.body.master_key.keys);
    expect(q.json.self_signing_keys[alice.user_id]).toEqual(aliceCs.body.self_signing_key);
    expect(q.json.user_signing_keys).toBeUndefined(); // never to another server

    const devices = await signedToA("GET", `/_matrix/federation/v1/user/devices/${enc(alice.user_id)}`);
    expect(devices.status, JSON.stringify(devices.json)).toBe(200);
    expectMatchesSpec(devices, "GET", "/_matrix/federation/v1/user/devices/{userId}");
    expect(devices.json.user_id).toBe(alice.user_id);
    expect(devices.json.stream_id).toBeGreaterThan(0);
    expect(devices.json.devices).toEqual([{ device_id: alice.device_id, keys: aliceDev.keys }]);
    expect(devices.json.master_key.keys).toEqual(aliceCs.body.master_key.keys);
    expect(devices.json.self_signing_key).toEqual(aliceCs.body.self_signing_key);
    const foreign = await signedToA("GET", `/_matrix/federation/v1/user/devices/${enc(bob.user_id)}`);
    expect([foreign.status, foreign.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    const unsigned = await federationCall(a.baseUrl, { method: "GET", path: `/_matrix/federation/v1/user/devices/${enc(alice.user_id)}` });
    expect([unsigned.status, unsigned.json.errcode]).toEqual([401, "M_UNAUTHORIZED"]);

    const c = await signedToA("POST", "/_matrix/federation/v1/user/keys/claim", { one_time_keys: { [alice.user_id]: { [alice.device_id]: "signed_curve25519" }, [bob.user_id]: { [bob.device_id]: "signed_curve25519" } } });
    expect(c.status, JSON.stringify(c.json)).toBe(200);
    expectMatchesSpec(c, "POST", "/_matrix/federation/v1/user/keys/claim");
    expect(Object.keys(c.json.one_time_keys)).toEqual([alice.user_id]);
    expect(c.json.one_time_keys[alice.user_id][alice.device_id]).toEqual({ "signed_curve25519:AAA1": otk(alice, aliceDev, 1) });
    const bad = await signedToA("POST", "/_matrix/federation/v1/user/keys/query", { device_keys: { [alice.user_id]: "all" } });
    expect([bad.status, bad.json.errcode]).toEqual([400, "M_BAD_JSON"]);
  });

  it("a client's /keys/query and /keys/claim for a remote user go to that user's server; a silent server is a failure within the timeout", async () => {
    const res = await queryFromB({ [alice.user_id]: [] });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "POST", `${V3}/keys/query`);
    expect(res.json.device_keys[alice.user_id]).toEqual({ [alice.device_id]: aliceDev.keys });
    expect(res.json.master_keys[alice.user_id].keys).toEqual(aliceCs.body.master_key.keys);
    expect(res.json.self_signing_keys[alice.user_id]).toEqual(aliceCs.body.self_signing_key);
    expect(res.json.failures).toEqual({});

    const claim = await b.call("POST", `${V3}/keys/claim`, { token: bob.access_token, body: { one_time_keys: { [alice.user_id]: { [alice.device_id]: "signed_curve25519" } } } });
    expect(claim.status, JSON.stringify(claim.json)).toBe(200);
    expectMatchesSpec(claim, "POST", `${V3}/keys/claim`);
    // AAA1 went to the federation test above: each key is given out once.
    expect(claim.json).toEqual({ one_time_keys: { [alice.user_id]: { [alice.device_id]: { "signed_curve25519:AAA2": otk(alice, aliceDev, 2) } } }, failures: {} });

    // A server that accepts connections and never answers: reported in `failures` once the timeout passes.
    const sockets: Socket[] = [];
    const silent: NetServer = createNetServer((sock) => sockets.push(sock));
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const silentName = `127.0.0.1:${(silent.address() as { port: number }).port}`;
    try {
      const started = Date.now();
      const mixed = await queryFromB({ [alice.user_id]: [], [`@carol:${silentName}`]: [] }, 1000);
      expect(mixed.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(8000);
      expect(mixed.json.device_keys[alice.user_id]).toEqual({ [alice.device_id]: aliceDev.keys });
      expect(mixed.json.failures[silentName]).toEqual({ status: expect.any(Number), message: expect.any(String) });
      expect(mixed.json.device_keys[`@carol:${silentName}`]).toBeUndefined();
      const claimSilent = await b.call("POST", `${V3}/keys/claim`, { token: bob.access_token, body: { timeout: 1000, one_time_keys: { [`@carol:${silentName}`]: { DEV: "signed_curve25519" } } } });
      expect(claimSilent.status).toBe(200);
      expect(claimSilent.json.one_time_keys).toEqual({});
      expect(Object.keys(claimSilent.json.failures)).toEqual([silentName]);
    } finally {
      for (const sock of sockets) sock.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  it("device and cross-signing changes reach the other server's /sync and its copy of the device list", async () => {
    // A new device of alice: B hears of it (m.device_list_update), bob's /sync says alice changed.
    const phone = await loginUser(a, "alice");
    const phoneDev = await uploadDeviceKeys(a, phone);
    await bobSyncUntil(changedIn(alice.user_id), "alice's new device");
    // B keeps a copy of alice's devices now (resynced through user/devices) and answers from it.
    const held = await eventually(async () => {
      const r = await queryFromB({ [alice.user_id]: [] });
      return Object.keys(r.json.device_keys[alice.user_id] ?? {}).length === 2 ? r.json : undefined;
    }, "both of alice's devices on B");
    expect(held.device_keys[alice.user_id][phone.device_id]).toEqual(phoneDev.keys);
    const row = await b.hs.services.storage.sql.get<{ stream_id: number }>(`SELECT stream_id FROM remote_device_lists WHERE user_id = ?`, [alice.user_id]);
    expect(Number(row?.stream_id)).toBeGreaterThan(0);

    // Signing the new device with the self-signing key is a device update: B's copy carries the signature.
    const signedPhone = signed(phoneDev.keys, alice.user_id, `ed25519:${aliceCs.ssk.pub}`, aliceCs.ssk);
    const sig = await a.call("POST", `${V3}/keys/signatures/upload`, { token: alice.access_token, body: { [alice.user_id]: { [phone.device_id]: signedPhone } } });
    expect([sig.status, sig.json.failures], JSON.stringify(sig.json)).toEqual([200, {}]);
    await eventually(async () => {
      const r = await queryFromB({ [alice.user_id]: [phone.device_id] });
      return (r.json.device_keys[alice.user_id]?.[phone.device_id]?.signatures?.[alice.user_id] ?? {})[`ed25519:${aliceCs.ssk.pub}`] !== undefined;
    }, "the signature on alice's phone on B");

    // The phone logs out: deleted on B too, and bob hears of it.
    const out = await a.call("POST", `${V3}/logout`, { token: phone.access_token, body: {} });
    expect(out.status).toBe(200);
    await bobSyncUntil(changedIn(alice.user_id), "alice's deleted device");
    await eventually(async () => {
      const r = await queryFromB({ [alice.user_id]: [] });
      return Object.keys(r.json.device_keys[alice.user_id] ?? {}).join() === alice.device_id;
    }, "the phone gone from B's copy");

    // New cross-signing keys (m.signing_key_update): B's copy has the new master key.
    const next = crossSigningKeys(alice.user_id);
    const reset = await a.call("POST", `${V3}/keys/device_signing/upload`, { token: alice.access_token, body: { ...next.body, auth: { type: "m.login.password", identifier: { type: "m.id.user", user: alice.user_id }, password: "password" } } });
    expect(reset.status, JSON.stringify(reset.json)).toBe(200);
    await bobSyncUntil(changedIn(alice.user_id), "alice's new cross-signing keys");
    await eventually(async () => {
      const r = await queryFromB({ [alice.user_id]: [] });
      return r.json.master_keys[alice.user_id]?.keys?.[`ed25519:${next.master.pub}`] === next.master.pub && r.json.self_signing_keys[alice.user_id]?.keys?.[`ed25519:${next.ssk.pub}`] === next.ssk.pub;
    }, "alice's new master and self-signing keys on B");
    aliceCs = next;
  });

  it("to-device messages cross servers and are delivered exactly once", async () => {
    let aliceSince = (await a.call("GET", `${V3}/sync`, { token: alice.access_token })).json.next_batch;
    const toDevice: any[] = [];
    const syncAlice = async () => {
      const res = await a.call("GET", `${V3}/sync?since=${enc(aliceSince)}&timeout=1000`, { token: alice.access_token });
      aliceSince = res.json.next_batch;
      toDevice.push(...(res.json.to_device?.events ?? []));
    };
    const send = await b.call("PUT", `${V3}/sendToDevice/m.room_key_request/t1`, { token: bob.access_token, body: { messages: { [alice.user_id]: { [alice.device_id]: { hello: "alice" } } } } });
    expect(send.status).toBe(200);
    await eventually(async () => (await syncAlice(), toDevice.length > 0), "the to-device message on A");
    expect(toDevice).toEqual([{ sender: bob.user_id, type: "m.room_key_request", content: { hello: "alice" } }]);
    // The same request again (a client retry) sends nothing again.
    const again = await b.call("PUT", `${V3}/sendToDevice/m.room_key_request/t1`, { token: bob.access_token, body: { messages: { [alice.user_id]: { [alice.device_id]: { hello: "alice" } } } } });
    expect(again.status).toBe(200);

    // A resent EDU (same sender and message_id, in a new transaction) is delivered once; `*` reaches every device.
    const edu = { edu_type: "m.direct_to_device", content: { sender: bob.user_id, type: "m.test", message_id: "once-1", messages: { [alice.user_id]: { "*": { n: 1 } } } } };
    await sendEdus([edu]);
    await sendEdus([edu]);
    // A marker after them: once it arrived, everything before it has too.
    await sendEdus([{ edu_type: "m.direct_to_device", content: { sender: bob.user_id, type: "m.marker", message_id: "marker-1", messages: { [alice.user_id]: { [alice.device_id]: {} } } } }]);
    await eventually(async () => (await syncAlice(), toDevice.some((e) => e.type === "m.marker")), "the marker");
    expect(toDevice.filter((e) => e.type === "m.test")).toEqual([{ sender: bob.user_id, type: "m.test", content: { n: 1 } }]);
    expect(toDevice.filter((e) => e.type === "m.room_key_request")).toHaveLength(1);
  });

  it("hostile or malformed EDUs are dropped and change nothing", async () => {
    const sql = a.hs.services.storage.sql;
    const streamRows = async () => Number((await sql.get<{ n: number }>(`SELECT COUNT(*) AS n FROM device_list_stream`))?.n);
    const aliceKeysBefore = await sql.all(`SELECT device_id, json FROM e2e_device_keys WHERE user_id = ? ORDER BY device_id`, [alice.user_id]);
    const before = await streamRows();
    const eveKeys = (userId: string, deviceId: string) => signed({ user_id: userId, device_id: deviceId, algorithms: ["m.olm.v1.curve25519-aes-sha2"], keys: { [`ed25519:${deviceId}`]: keyPair().pub } }, userId, `ed25519:${deviceId}`, keyPair());
    let aliceSince = (await a.call("GET", `${V3}/sync`, { token: alice.access_token })).json.next_batch;
    await sendEdus([
      // B speaking for a user of A, and for a user of a third server.
      { edu_type: "m.device_list_update", content: { user_id: alice.user_id, device_id: "EVIL", stream_id: 99, prev_id: [], keys: eveKeys(alice.user_id, "EVIL") } },
      { edu_type: "m.device_list_update", content: { user_id: "@eve:elsewhere.example", device_id: "EVIL", stream_id: 1, prev_id: [] } },
      { edu_type: "m.signing_key_update", content: { user_id: alice.user_id, master_key: crossSigningKeys(alice.user_id).body.master_key } },
      // Malformed: no stream_id, a string stream_id, prev_id not a list, deleted with keys, not an object.
      // (Keys of another device leave an update all the same: test/federation/device-list-resync.test.ts.)
      { edu_type: "m.device_list_update", content: { user_id: bob.user_id, device_id: bob.device_id } },
      { edu_type: "m.device_list_update", content: { user_id: bob.user_id, device_id: bob.device_id, stream_id: "7" } },
      { edu_type: "m.device_list_update", content: { user_id: bob.user_id, device_id: bob.device_id, stream_id: 7, prev_id: 6 } },
      { edu_type: "m.device_list_update", content: { user_id: bob.user_id, device_id: bob.device_id, stream_id: 7, deleted: true, keys: eveKeys(bob.user_id, bob.device_id) } },
      { edu_type: "m.device_list_update", content: "nonsense" },
      { edu_type: "m.signing_key_update", content: { user_id: bob.user_id, master_key: { user_id: bob.user_id, usage: ["master"], keys: { "ed25519:short": "short" } } } },
      // To-device: from a user of another server, and malformed.
      { edu_type: "m.direct_to_device", content: { sender: "@eve:elsewhere.example", type: "m.evil", message_id: "x1", messages: { [alice.user_id]: { "*": { evil: true } } } } },
      { edu_type: "m.direct_to_device", content: { sender: bob.user_id, type: "m.evil", message_id: 5, messages: { [alice.user_id]: { "*": { evil: true } } } } },
      { edu_type: "m.direct_to_device", content: { sender: bob.user_id, type: "m.evil", message_id: "x2", messages: [] } },
      { edu_type: "m.direct_to_device", content: { sender: bob.user_id, type: "m.marker", message_id: "marker-2", messages: { [alice.user_id]: { [alice.device_id]: {} } } } },
    ]);
    const seen: any[] = [];
    await eventually(async () => {
      const res = await a.call("GET", `${V3}/sync?since=${enc(aliceSince)}&timeout=1000`, { token: alice.access_token });
      aliceSince = res.json.next_batch;
      seen.push(...(res.json.to_device?.events ?? []));
      return seen.some((e) => e.type === "m.marker");
    }, "the marker");
    expect(seen.map((e) => e.type)).toEqual(["m.marker"]);
    expect(await streamRows()).toBe(before);
    expect(await sql.all(`SELECT device_id, json FROM e2e_device_keys WHERE user_id = ? ORDER BY device_id`, [alice.user_id])).toEqual(aliceKeysBefore);
    expect(await sql.get(`SELECT 1 AS x FROM remote_device_lists WHERE user_id = ?`, ["@eve:elsewhere.example"])).toBeUndefined();
    // A still answers for alice with her own keys.
    const q = await signedToA("POST", "/_matrix/federation/v1/user/keys/query", { device_keys: { [alice.user_id]: [] } });
    expect(Object.keys(q.json.device_keys[alice.user_id])).toEqual([alice.device_id]);
  });

  it("stream ids going backwards are dropped and the copy of the device list stays whole; keys no signature verifies are kept for clients to judge", async () => {
    // B holds a copy of alice's devices (the tests above): A's updates about alice, sent by hand.
    const sqlB = b.hs.services.storage.sql;
    const copy = async () => ({
      streamId: Number((await sqlB.get<{ stream_id: number }>(`SELECT stream_id FROM remote_device_lists WHERE user_id = ?`, [alice.user_id]))?.stream_id),
      devices: (await sqlB.all<{ device_id: string }>(`SELECT device_id FROM e2e_device_keys WHERE user_id = ? ORDER BY device_id`, [alice.user_id])).map((r) => r.device_id),
    });
    const before = await copy();
    expect(before.streamId).toBeGreaterThan(0);
    const toB = async (edus: unknown[]) => {
      const path = `/_matrix/federation/v1/send/e2ee-bad-${++txn}`;
      const body = { origin: a.serverName, origin_server_ts: Date.now(), pdus: [], edus };
      const res = await federationCall(b.baseUrl, { method: "PUT", path, body, authorization: signedBy(a.serverName, a.hs.services.signingKeys[0]!, b.serverName, { method: "PUT", path, body }) });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
    };
    const keysOf = (deviceId: string, signer = keyPair(), ed = signer) =>
      signed({ user_id: alice.user_id, device_id: deviceId, algorithms: ["m.olm.v1.curve25519-aes-sha2"], keys: { [`ed25519:${deviceId}`]: ed.pub, [`curve25519:${deviceId}`]: keyPair().pub } }, alice.user_id, `ed25519:${deviceId}`, signer);
    // The stream going backwards, and repeating: nothing changes.
    await toB([
      { edu_type: "m.device_list_update", content: { user_id: alice.user_id, device_id: "BACK", stream_id: before.streamId - 1, prev_id: [], keys: keysOf("BACK") } },
      { edu_type: "m.device_list_update", content: { user_id: alice.user_id, device_id: "SAME", stream_id: before.streamId, prev_id: [], keys: keysOf("SAME") } },
    ]);
    // A marker that follows on: once it is in, the updates before it were handled.
    const forged = keysOf("FORGED", keyPair(), keyPair());
    await toB([{ edu_type: "m.device_list_update", content: { user_id: alice.user_id, device_id: "FORGED", stream_id: before.streamId + 1, prev_id: [before.streamId], keys: forged } }]);
    await eventually(async () => (await copy()).devices.includes("FORGED"), "the update after them in B's copy");
    expect(await copy()).toEqual({ streamId: before.streamId + 1, devices: [...before.devices, "FORGED"].sort() });
    // Signed by a key other than the device's own: kept as given (Synapse checks no signature either),
    // for clients to verify, as for keys our own users upload.
    const served = await queryFromB({ [alice.user_id]: ["FORGED"] });
    expect(served.json.device_keys[alice.user_id].FORGED).toEqual(forged);
    // The same update again, and an older one after it: nothing moves.
    await toB([
      { edu_type: "m.device_list_update", content: { user_id: alice.user_id, device_id: "FORGED", stream_id: before.streamId + 1, prev_id: [before.streamId], deleted: true } },
      { edu_type: "m.device_list_update", content: { user_id: alice.user_id, device_id: "BACK", stream_id: before.streamId, prev_id: [], keys: keysOf("BACK") } },
    ]);
    expect(await copy()).toEqual({ streamId: before.streamId + 1, devices: [...before.devices, "FORGED"].sort() });
  });

  it("a remote user who leaves the last shared room is in `left`; when they come back the copy of their devices is dropped", async () => {
    const leave = await a.call("POST", `${V3}/rooms/${enc(roomId)}/leave`, { token: alice.access_token, body: {} });
    expect(leave.status).toBe(200);
    await bobSyncUntil((sync) => ((sync.device_lists?.left ?? []) as string[]).includes(alice.user_id) || undefined, "alice in device_lists.left");

    // Back in the room, updates may have been missed meanwhile: B drops its copy and asks A again.
    const held = () => b.hs.services.storage.sql.get(`SELECT 1 AS x FROM remote_device_lists WHERE user_id = ?`, [alice.user_id]);
    expect(await held()).toBeDefined();
    const rejoin = await a.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(b.serverName)}`, { token: alice.access_token, body: {} });
    expect(rejoin.status, JSON.stringify(rejoin.json)).toBe(200);
    await eventually(async () => (await held()) === undefined, "B's copy of alice's devices dropped");
    const r = await queryFromB({ [alice.user_id]: [] });
    expect(Object.keys(r.json.device_keys[alice.user_id])).toEqual([alice.device_id]);
  });
});
