// End-to-end encryption with GraphQL as the only transport, on each storage backend: two users on Weft run
// matrix-sdk-crypto-wasm's OlmMachine (the crypto of matrix-js-sdk and Element Web), every outgoing request
// sent as a GraphQL operation and the syncUpdates subscription feeding receiveSyncChanges
// (test/helpers/olm-graphql.ts). Keys go up, are queried and claimed, an encrypted message goes each way
// and is decrypted; a key backup is made and restored on a new device; cross-signing is bootstrapped
// (its reset asking for user-interactive auth as REST does), and a device verified by SAS over to-device.
// Across two Weft servers: keys queried and claimed from the other server, room keys sent over federation.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as wasm from "@matrix-org/matrix-sdk-crypto-wasm";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { GraphqlCryptoPeer } from "../helpers/olm-graphql.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { errcode, gql, LOGIN, REGISTER } from "./client.ts";

const BACKUP_ALGORITHM = "m.megolm_backup.v1.curve25519-aes-sha2";

describe.each(backends())("OlmMachine over GraphQL (%s)", (backend) => {
  let t: TestServer;
  const peers: GraphqlCryptoPeer[] = [];
  let alice: GraphqlCryptoPeer;
  let bob: GraphqlCryptoPeer;
  let roomId: string;
  let aliceEvent: string;

  const account = async (username: string) => {
    const r = await gql(t, REGISTER, { input: { username, password: `${username}-pw` } });
    expect(r.body.errors).toBeUndefined();
    return r.body.data.register as { userId: string; deviceId: string; accessToken: string };
  };
  const peer = async (session: { userId: string; deviceId: string; accessToken: string }) => {
    const p = await GraphqlCryptoPeer.start(t, session);
    peers.push(p);
    return p;
  };

  beforeAll(async () => {
    t = await startTestServer({ backend });
    alice = await peer(await account("alice"));
    bob = await peer(await account("bob"));
  }, 120000);
  afterAll(async () => {
    for (const p of peers) await p.close();
    await t?.close();
  });

  it("uploads device, one-time and fallback keys; another user queries them", async () => {
    expect(alice.sent.get("uploadKeys")).toBeGreaterThan(0);
    const counts = await alice.gql(`{ viewer { oneTimeKeyCounts { algorithm count } unusedFallbackKeyTypes } }`);
    expect(counts.viewer.oneTimeKeyCounts).toEqual([{ algorithm: "signed_curve25519", count: 50 }]);
    expect(counts.viewer.unusedFallbackKeyTypes).toEqual(["signed_curve25519"]);
    const q = await bob.gql(`query ($u: String!) { queryKeys(users: [{ userId: $u }]) { users { userId devices { deviceId keys } } failures { serverName } } }`, { u: alice.userId });
    const keys = q.queryKeys.users[0].devices[0].keys;
    expect(q.queryKeys.users[0].devices.map((d: any) => d.deviceId)).toEqual([alice.deviceId]);
    expect(keys.keys[`ed25519:${alice.deviceId}`]).toBe(alice.machine.identityKeys.ed25519.toBase64());
    expect(keys.keys[`curve25519:${alice.deviceId}`]).toBe(alice.machine.identityKeys.curve25519.toBase64());
  });

  it("an encrypted room: a message each way, keys claimed and shared by to-device, decrypted", async () => {
    const created = await alice.gql(
      `mutation ($input: CreateRoomInput!) { createRoom(input: $input) { roomId } }`,
      { input: { invite: [bob.userId], initialState: [{ type: "m.room.encryption", content: { algorithm: "m.megolm.v1.aes-sha2" } }] } },
    );
    roomId = created.createRoom.roomId;
    await bob.gql(`mutation ($r: String!) { joinRoom(roomIdOrAlias: $r) { roomId } }`, { r: roomId });

    aliceEvent = await alice.sendEncrypted(roomId, [alice.userId, bob.userId], "hello bob, over GraphQL");
    expect(alice.sent.get("claimKeys")).toBe(1);
    expect(alice.sent.get("sendToDevice")).toBeGreaterThan(0);
    const ev = await bob.event(aliceEvent);
    expect(ev.type).toBe("m.room.encrypted");
    expect(JSON.stringify(ev.content)).not.toContain("hello bob");
    expect(await bob.decrypted(roomId, aliceEvent)).toEqual({ msgtype: "m.text", body: "hello bob, over GraphQL" });
    expect(bob.toDevice.some((e) => e.type === "m.room_key" && e.content.room_id === roomId)).toBe(true);
    // Alice's claim took one of Bob's one-time keys: the subscription told his machine (49 of 50 left).
    await bob.waitFor(() => (bob.otkCounts.includes(49) ? true : undefined), "bob's count going down");

    const bobEvent = await bob.sendEncrypted(roomId, [alice.userId, bob.userId], "hello alice, over GraphQL");
    expect(await alice.decrypted(roomId, bobEvent)).toEqual({ msgtype: "m.text", body: "hello alice, over GraphQL" });
  });

  it("a key backup made over GraphQL is restored on a new device", async () => {
    const key = wasm.BackupDecryptionKey.createRandomKey();
    const pub = key.megolmV1PublicKey.publicKeyBase64;
    const version = (await alice.gql(`mutation ($a: JSON!) { createKeyBackupVersion(algorithm: "${BACKUP_ALGORITHM}", authData: $a) }`, { a: { public_key: pub } })).createKeyBackupVersion;
    await alice.machine.enableBackupV1(pub, version);
    const req = await alice.machine.backupRoomKeys();
    expect(req).toBeDefined();
    await alice.sendAndMark(req!);
    expect(alice.sent.get("putRoomKeys")).toBe(1);
    const info = (await alice.gql(`{ keyBackup { version algorithm authData count etag } }`)).keyBackup;
    expect(info).toMatchObject({ version, algorithm: BACKUP_ALGORITHM, authData: { public_key: pub } });
    expect(info.count).toBeGreaterThanOrEqual(1);

    // A new device of Alice's, logged in over GraphQL, has no key for the old message until it restores the backup.
    const login = (await gql(t, LOGIN, { input: { user: "alice", password: "alice-pw" } })).body.data.login;
    const laptop = await peer(login);
    const stored = (await laptop.gql(`query ($v: String!) { roomKeys(version: $v) { roomId sessionId firstMessageIndex forwardedCount isVerified sessionData } }`, { v: version })).roomKeys;
    expect(stored.length).toBe(info.count);
    const byRoom = new Map<wasm.RoomId, Map<string, unknown>>();
    const sessions = new Map<string, unknown>();
    for (const k of stored) {
      expect(k.roomId).toBe(roomId);
      sessions.set(k.sessionId, JSON.parse(key.decryptV1(k.sessionData.ephemeral, k.sessionData.mac, k.sessionData.ciphertext)));
    }
    byRoom.set(new wasm.RoomId(roomId), sessions);
    const event = alice.events.find((e) => e.event_id === aliceEvent) ?? (await bob.event(aliceEvent));
    const settings = () => new wasm.DecryptionSettings(wasm.TrustRequirement.Untrusted);
    await expect(laptop.machine.decryptRoomEvent(JSON.stringify(event), new wasm.RoomId(roomId), settings())).rejects.toBeDefined();
    const result = await laptop.machine.importBackedUpRoomKeys(byRoom, () => undefined, version);
    expect(result.importedCount).toBe(stored.length);
    const clear = await laptop.machine.decryptRoomEvent(JSON.stringify(event), new wasm.RoomId(roomId), settings());
    expect(JSON.parse(clear.event).content.body).toBe("hello bob, over GraphQL");
  });

  it("bootstraps cross-signing; a reset asks for user-interactive auth as REST does", async () => {
    const seen = bob.deviceLists.length;
    const boot = await alice.machine.bootstrapCrossSigning(true);
    const up = await alice.uploadCrossSigning(boot.uploadSigningKeysRequest);
    expect(up.errors).toBeUndefined();
    expect(up.data.uploadCrossSigningKeys).toBe(true);
    await alice.sendAndMark(boot.uploadSignaturesRequest);
    if (boot.uploadKeysRequest) await alice.sendAndMark(boot.uploadKeysRequest);
    expect(alice.sent.get("uploadSignatures")).toBeGreaterThan(0);
    const status = await alice.machine.crossSigningStatus();
    expect([status.hasMaster, status.hasSelfSigning, status.hasUserSigning]).toEqual([true, true, true]);
    const devices = await alice.gql(`{ viewer { devices { deviceId crossSigned } } }`);
    expect(devices.viewer.devices.find((d: any) => d.deviceId === alice.deviceId).crossSigned).toBe(true);
    const q = await bob.gql(`query ($u: String!) { queryKeys(users: [{ userId: $u }]) { users { masterKey selfSigningKey userSigningKey } } }`, { u: alice.userId });
    expect(q.queryKeys.users[0].masterKey.usage).toEqual(["master"]);
    expect(q.queryKeys.users[0].selfSigningKey.usage).toEqual(["self_signing"]);
    expect(q.queryKeys.users[0].userSigningKey).toBeNull(); // only ever the owner's
    // Bob, who shares the encrypted room, heard of it in his subscription's deviceLists.changed.
    await bob.waitFor(() => (bob.deviceLists.slice(seen).some((d) => d.changed.includes(alice.userId)) ? true : undefined), "alice's keys changed, at bob");

    // Replacing them needs UIA: the REST 401's session and flows come in the error's extensions.
    const reset = await alice.machine.bootstrapCrossSigning(true);
    const asked = await alice.uploadCrossSigning(reset.uploadSigningKeysRequest);
    expect(asked.data?.uploadCrossSigningKeys ?? null).toBeNull();
    expect(errcode(asked)).toBe("M_UNAUTHORIZED");
    const ext = asked.errors[0].extensions;
    expect(ext.flows).toEqual([{ stages: ["m.login.password"] }]);
    expect(typeof ext.session).toBe("string");
    const wrong = await alice.uploadCrossSigning(reset.uploadSigningKeysRequest, { type: "m.login.password", identifier: { type: "m.id.user", user: "alice" }, password: "nope", session: ext.session });
    expect(errcode(wrong)).toBe("M_FORBIDDEN");
    const done = await alice.uploadCrossSigning(reset.uploadSigningKeysRequest, { type: "m.login.password", identifier: { type: "m.id.user", user: "alice" }, password: "alice-pw", session: ext.session });
    expect(done.errors).toBeUndefined();
    await alice.sendAndMark(reset.uploadSignaturesRequest);
    const after = await bob.gql(`query ($u: String!) { queryKeys(users: [{ userId: $u }]) { users { masterKey } } }`, { u: alice.userId });
    expect(after.queryKeys.users[0].masterKey).not.toEqual(q.queryKeys.users[0].masterKey);
  });

  it("verifies a device by SAS through to-device messages", async () => {
    // Bob verifies Alice's device: request, ready, start, accept, keys, MACs and done all go over sendToDevice
    // and arrive through each one's syncUpdates subscription.
    await bob.machine.updateTrackedUsers([new wasm.UserId(alice.userId)]);
    await bob.flush();
    const device = await bob.waitFor(async () => (await bob.machine.getDevice(new wasm.UserId(alice.userId), new wasm.DeviceId(alice.deviceId))) ?? undefined, "alice's device at bob");
    const [bobRequest, first] = device.requestVerification([wasm.VerificationMethod.SasV1]);
    await bob.sendAndMark(first);
    const aliceRequest = await alice.waitFor(() => alice.machine.getVerificationRequest(new wasm.UserId(bob.userId), bobRequest.flowId), "the request at alice");
    await alice.sendAndMark(aliceRequest.acceptWithMethods([wasm.VerificationMethod.SasV1])!);
    await bob.waitFor(() => (bobRequest.isReady() ? true : undefined), "ready at bob");
    const [bobSas, start] = (await bobRequest.startSas())!;
    await bob.sendAndMark(start);
    const aliceSas = await alice.waitFor(() => {
      const v = aliceRequest.getVerification();
      return v instanceof wasm.Sas ? v : undefined;
    }, "the SAS at alice");
    await alice.sendAndMark(aliceSas.accept()!);
    const bobEmoji = await bob.waitFor(() => bobSas.emoji()?.map((e) => e.symbol), "emoji at bob");
    const aliceEmoji = await alice.waitFor(() => aliceSas.emoji()?.map((e) => e.symbol), "emoji at alice");
    expect(bobEmoji).toHaveLength(7);
    expect(aliceEmoji).toEqual(bobEmoji);
    for (const r of await bobSas.confirm()) await bob.sendAndMark(r);
    for (const r of await aliceSas.confirm()) await alice.sendAndMark(r);
    await bob.waitFor(() => (bobSas.isDone() ? true : undefined), "SAS done at bob");
    await alice.waitFor(() => (aliceSas.isDone() ? true : undefined), "SAS done at alice");
    const verified = await bob.machine.getDevice(new wasm.UserId(alice.userId), new wasm.DeviceId(alice.deviceId));
    expect(verified!.isVerified()).toBe(true);
    expect(aliceSas.isCancelled()).toBe(false);

    // Every request type the machines made went over GraphQL.
    const ops = new Set(peers.flatMap((p) => [...p.sent.keys()]));
    for (const op of ["uploadKeys", "queryKeys", "claimKeys", "sendToDevice", "uploadSignatures", "putRoomKeys", "uploadCrossSigningKeys", "sendMessage"]) expect(ops).toContain(op);
  });
});

describe.each(backends())("OlmMachine over GraphQL across two Weft servers (%s)", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  const peers: GraphqlCryptoPeer[] = [];

  beforeAll(async () => {
    [a, b] = await Promise.all([startFederatedServer({ backend }), startFederatedServer({ backend })]);
  }, 120000);
  afterAll(async () => {
    for (const p of peers) await p.close();
    await Promise.all([a?.close(), b?.close()]);
  });

  it("keys queried and claimed from the other server, room keys sent as to-device over federation, a message each way decrypted", async () => {
    const account = async (t: TestServer, username: string) => (await gql(t, REGISTER, { input: { username, password: `${username}-pw` } })).body.data.register;
    const alice = await GraphqlCryptoPeer.start(a, await account(a, "alice"));
    peers.push(alice);
    const bob = await GraphqlCryptoPeer.start(b, await account(b, "bob"));
    peers.push(bob);

    const created = await alice.gql(
      `mutation ($input: CreateRoomInput!) { createRoom(input: $input) { roomId } }`,
      { input: { preset: "PUBLIC_CHAT", initialState: [{ type: "m.room.encryption", content: { algorithm: "m.megolm.v1.aes-sha2" } }] } },
    );
    const roomId = created.createRoom.roomId;
    await bob.gql(`mutation ($r: String!, $via: [String!]) { joinRoom(roomIdOrAlias: $r, via: $via) { roomId } }`, { r: roomId, via: [a.serverName] });
    // A knows Bob joined (through B's join handshake) before Alice encrypts for the room's members.
    await eventually(async () => (await a.hs.services.rooms.store.membership(roomId, bob.userId))?.membership === "join", "bob joined on A");

    // Bob's keys, asked of A over GraphQL, come from B.
    const q = await alice.gql(`query ($u: String!) { queryKeys(users: [{ userId: $u }]) { users { userId devices { deviceId keys } } failures { serverName } } }`, { u: bob.userId });
    expect(q.queryKeys.failures).toEqual([]);
    expect(q.queryKeys.users[0].devices[0].keys.keys[`ed25519:${bob.deviceId}`]).toBe(bob.machine.identityKeys.ed25519.toBase64());

    const toBob = await alice.sendEncrypted(roomId, [alice.userId, bob.userId], "hello bob, across servers");
    expect(await bob.decrypted(roomId, toBob)).toEqual({ msgtype: "m.text", body: "hello bob, across servers" });
    const toAlice = await bob.sendEncrypted(roomId, [alice.userId, bob.userId], "hello alice, across servers");
    expect(await alice.decrypted(roomId, toAlice)).toEqual({ msgtype: "m.text", body: "hello alice, across servers" });

    // A server that does not answer is a failure, typed.
    const unreachable = await alice.gql(`query { queryKeys(users: [{ userId: "@x:127.0.0.1:1" }], timeoutMs: 2000) { users { userId } failures { serverName error } } }`);
    expect(unreachable.queryKeys.failures.map((f: any) => f.serverName)).toEqual(["127.0.0.1:1"]);
  });
});
