// Device display names over federation (Synapse's allow_device_name_lookup_over_federation): a server
// with the option on tells other servers its users' device names — in /user/keys/query
// (unsigned.device_display_name), /user/devices and m.device_list_update EDUs — and a client of the
// other server sees them; a server with the default (off) keeps them private. SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { federationCall, signedBy, startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { eventually, joinFromPeer, startRecordingPeer, type RecordingPeer } from "../helpers/federation-peer.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { uploadDeviceKeys, type DeviceIdentity } from "../helpers/e2ee.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("device display names over federation on %s", (backend) => {
  let a: FederatedServer; // allow_device_name_lookup_over_federation: true
  let b: FederatedServer; // the default
  let peer: RecordingPeer;
  let alice: Session;
  let bob: Session;
  let aliceDev: DeviceIdentity;
  let bobDev: DeviceIdentity;

  const rename = async (t: FederatedServer, who: Session, name: string) => {
    const r = await t.call("PUT", `${V3}/devices/${enc(who.device_id)}`, { token: who.access_token, body: { display_name: name } });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
  };
  const signedTo = (to: FederatedServer, from: FederatedServer, method: "GET" | "POST", path: string, body?: unknown) =>
    federationCall(to.baseUrl, { method, path, body, authorization: signedBy(from.serverName, from.hs.services.signingKeys[0]!, to.serverName, { method, path, body }) });

  beforeAll(async () => {
    [a, b, peer] = await Promise.all([
      startFederatedServer({ backend, config: { allow_device_name_lookup_over_federation: true } }),
      startFederatedServer({ backend }),
      startRecordingPeer(),
    ]);
    [alice, bob] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob")]);
    [aliceDev, bobDev] = await Promise.all([uploadDeviceKeys(a, alice), uploadDeviceKeys(b, bob)]);
    await Promise.all([rename(a, alice, "Alice's laptop"), rename(b, bob, "Bob's phone")]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close(), peer?.close()]);
  });

  it("a server with the option on answers /user/keys/query and /user/devices with the names", async () => {
    const q = await signedTo(a, b, "POST", "/_matrix/federation/v1/user/keys/query", { device_keys: { [alice.user_id]: [] } });
    expect(q.status, JSON.stringify(q.json)).toBe(200);
    expect(q.json.device_keys[alice.user_id][alice.device_id]).toEqual({ ...aliceDev.keys, unsigned: { device_display_name: "Alice's laptop" } });
    const d = await signedTo(a, b, "GET", `/_matrix/federation/v1/user/devices/${enc(alice.user_id)}`);
    expect(d.status, JSON.stringify(d.json)).toBe(200);
    expect(d.json.devices).toEqual([{ device_id: alice.device_id, keys: aliceDev.keys, device_display_name: "Alice's laptop" }]);
  });

  it("a server with the default keeps them private", async () => {
    const q = await signedTo(b, a, "POST", "/_matrix/federation/v1/user/keys/query", { device_keys: { [bob.user_id]: [] } });
    expect(q.status, JSON.stringify(q.json)).toBe(200);
    expect(q.json.device_keys[bob.user_id][bob.device_id]).toEqual(bobDev.keys);
    const d = await signedTo(b, a, "GET", `/_matrix/federation/v1/user/devices/${enc(bob.user_id)}`);
    expect(d.json.devices).toEqual([{ device_id: bob.device_id, keys: bobDev.keys }]);
  });

  it("a client of the other server sees the names in /keys/query; only where the option allows", async () => {
    const fromB = await b.call("POST", `${V3}/keys/query`, { token: bob.access_token, body: { device_keys: { [alice.user_id]: [] } } });
    expect(fromB.status, JSON.stringify(fromB.json)).toBe(200);
    expect(fromB.json.device_keys[alice.user_id][alice.device_id].unsigned).toEqual({ device_display_name: "Alice's laptop" });
    const fromA = await a.call("POST", `${V3}/keys/query`, { token: alice.access_token, body: { device_keys: { [bob.user_id]: [] } } });
    expect(fromA.status, JSON.stringify(fromA.json)).toBe(200);
    expect(fromA.json.device_keys[bob.user_id][bob.device_id].unsigned?.device_display_name).toBeUndefined();
  });

  it("a renamed device goes to servers sharing a room as an m.device_list_update with its name", async () => {
    peer.trust(a.serverName, a.hs.services.signingKeys[0]!);
    const roomId = await createRoom(a, alice, { preset: "public_chat" });
    await joinFromPeer(a, peer, roomId, peer.user("pat"));
    await rename(a, alice, "Alice's desk");
    const edu = await eventually(
      () => peer.edus().find((e) => e.edu_type === "m.device_list_update" && e.content.device_id === alice.device_id && e.content.device_display_name === "Alice's desk"),
      "the rename's m.device_list_update",
    );
    expect(edu.content).toMatchObject({ user_id: alice.user_id, keys: aliceDev.keys });
    expect(edu.content.keys.unsigned).toBeUndefined();
  });
});
