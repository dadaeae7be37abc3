// matrix-js-sdk 43 with its Rust crypto (wasm, in memory) and its real sync loop against Weft: two users
// in an encrypted room exchange messages that decrypt on the other side (SQLite and PostgreSQL); a new
// device of a user restores room keys from server-side key backup (key found through secret storage in
// account data) and decrypts history; two devices of one user complete SAS verification and end
// cross-signed. Exercises key upload/query/claim, device lists and to-device in /sync, cross-signing
// upload (UIA when replacing), signatures upload, key backup and account data as a strict client uses them.
// The clients start unpatched: they load the server's push rules like any client (see matrix-js-sdk-sync).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as sdk from "matrix-js-sdk";
import { logger as sdkGlobalLogger } from "matrix-js-sdk/lib/logger.js";
import {
  CryptoEvent,
  VerificationPhase,
  VerificationRequestEvent,
  VerifierEvent,
  type GeneratedSecretStorageKey,
  type ShowSasCallbacks,
  type VerificationRequest,
} from "matrix-js-sdk/lib/crypto-api/index.js";
import { RustBackupManager } from "matrix-js-sdk/lib/rust-crypto/backup.js";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { loginUser, registerUser, type Session } from "../helpers/users.ts";
import { pollUntil } from "../helpers/js-sdk.ts";
import { WAIT_MS, decryptedBody, deviceKnown, encryptedRoom, joinedBy, startCryptoClient, waitFor } from "../helpers/js-sdk-crypto.ts";

if (process.env.WEFT_TEST_SDK_LOG !== "1") (sdkGlobalLogger as unknown as { setLevel(level: string, persist?: boolean): void }).setLevel("silent", false);

// The SDK waits up to 10 s (at random) before uploading new room keys to the backup; "it can be reduced
// in tests to make the test run faster" (its documentation of this static).
(RustBackupManager as unknown as { maxBackupLoopStartDelayMillis: number }).maxBackupLoopStartDelayMillis = 0;

const PASSWORD = "password";

/** The secret-storage key of each user, as the user would type it in (the tests play the user). */
const secretStorageKeys = new Map<string, GeneratedSecretStorageKey>();

/** A client with Rust crypto and a running sync loop, logged in as `s` (secret storage keys played by the test). */
function cryptoClient(t: TestServer, s: Session): Promise<sdk.MatrixClient> {
  return startCryptoClient(t.baseUrl, s, {
    cryptoCallbacks: {
      getSecretStorageKey: async ({ keys }) => {
        const key = secretStorageKeys.get(s.user_id);
        const keyId = Object.keys(keys)[0];
        return key && keyId ? [keyId, key.privateKey] : null;
      },
    },
  });
}

/**
 * Password UIA for /keys/device_signing/upload, as an app asks the user for it: tries without auth
 * first, answers a 401 challenge with the password. `challenges` counts the 401s seen.
 */
function passwordAuth(user: string, challenges = { count: 0 }): (makeRequest: (auth: Record<string, unknown> | null) => Promise<unknown>) => Promise<void> {
  return async (makeRequest) => {
    try {
      await makeRequest(null);
    } catch (e) {
      const data = (e as sdk.MatrixError).data as { session?: string; flows?: { stages: string[] }[] } | undefined;
      if (!(e instanceof sdk.MatrixError) || e.httpStatus !== 401 || !data?.session) throw e;
      challenges.count++;
      expect(data.flows?.some((f) => f.stages.includes("m.login.password"))).toBe(true);
      await makeRequest({ type: "m.login.password", identifier: { type: "m.id.user", user }, password: PASSWORD, session: data.session });
    }
  };
}

describe.each(backends())("matrix-js-sdk Rust crypto on %s", { timeout: 60000 }, (backend) => {
  let t: TestServer;
  const clients: sdk.MatrixClient[] = [];

  beforeAll(async () => {
    t = await startTestServer({ backend });
  });
  afterAll(async () => {
    for (const c of clients) c.stopClient();
    await t?.close();
  });

  it("two users in an encrypted room exchange messages that decrypt on the other side", async () => {
    const alice = await cryptoClient(t, await registerUser(t, "alice"));
    const bob = await cryptoClient(t, await registerUser(t, "bob"));
    clients.push(alice, bob);
    const { room_id: roomId } = await alice.createRoom(encryptedRoom([bob.getUserId()!]));
    await joinedBy(bob, roomId);
    // Alice's client sees bob joined before encrypting for his devices.
    await waitFor(alice, [sdk.RoomEvent.Timeline, sdk.RoomStateEvent.Members], () => (alice.getRoom(roomId)?.getMember(bob.getUserId()!)?.membership === "join" ? true : undefined), "bob's join at alice");
    expect(await alice.getCrypto()!.isEncryptionEnabledInRoom(roomId)).toBe(true);
    // Bob's client uploads his device's keys in the background: alice encrypts once her client lists it.
    await deviceKnown(alice, bob.getUserId()!, bob.getDeviceId()!, "bob's device known to alice's client");

    const sent = await alice.sendTextMessage(roomId, "hello bob, secretly");
    // On the server it is ciphertext only.
    const raw = await t.call("GET", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/event/${encodeURIComponent(sent.event_id)}`, { token: bob.getAccessToken()! });
    expect(raw.json.type).toBe("m.room.encrypted");
    expect(JSON.stringify(raw.json)).not.toContain("secretly");
    expect(await decryptedBody(bob, roomId, sent.event_id)).toBe("hello bob, secretly");

    const reply = await bob.sendTextMessage(roomId, "hello alice, secretly");
    expect(await decryptedBody(alice, roomId, reply.event_id)).toBe("hello alice, secretly");
    const atAlice = alice.getRoom(roomId)!.findEventById(reply.event_id)!;
    expect(atAlice.getWireType()).toBe("m.room.encrypted");
    expect(atAlice.getSender()).toBe(bob.getUserId());
  });

  it("a new device restores room keys from key backup (key from secret storage) and decrypts history", async () => {
    const session = await registerUser(t, "carol");
    const first = await cryptoClient(t, session);
    clients.push(first);
    const crypto = first.getCrypto()!;
    await crypto.bootstrapCrossSigning({ authUploadDeviceSigningKeys: passwordAuth("carol") });
    const ssKey = await crypto.createRecoveryKeyFromPassphrase();
    secretStorageKeys.set(session.user_id, ssKey);
    await crypto.bootstrapSecretStorage({ createSecretStorageKey: async () => ssKey, setupNewSecretStorage: true, setupNewKeyBackup: true });
    expect(await crypto.isCrossSigningReady()).toBe(true);
    expect(await crypto.isSecretStorageReady()).toBe(true);
    const version = await crypto.getActiveSessionBackupVersion();
    expect(version).toBeTruthy();

    // Erin writes in an encrypted room with carol; carol's first device receives the room key (to-device)
    // and backs it up.
    const erin = await cryptoClient(t, await registerUser(t, "erin"));
    clients.push(erin);
    const { room_id: roomId } = await erin.createRoom(encryptedRoom([session.user_id]));
    await joinedBy(first, roomId);
    await waitFor(erin, [sdk.RoomEvent.Timeline, sdk.RoomStateEvent.Members], () => (erin.getRoom(roomId)?.getMember(session.user_id)?.membership === "join" ? true : undefined), "carol's join at erin");
    const sent = await erin.sendTextMessage(roomId, "history only the backup can open");
    expect(await decryptedBody(first, roomId, sent.event_id)).toBe("history only the backup can open");
    // Condition: the server holds a backed-up key for the room.
    await pollUntil(async () => {
      const r = await t.call("GET", `/_matrix/client/v3/room_keys/keys/${encodeURIComponent(roomId)}?version=${version}`, { token: session.access_token });
      return r.status === 200 && Object.keys(r.json.sessions ?? {}).length > 0 ? true : undefined;
    }, WAIT_MS, "the room key in the backup");

    // A new device: its sync brings the encrypted history, which it cannot read yet.
    const second = await cryptoClient(t, await loginUser(t, "carol"));
    clients.push(second);
    await waitFor(second, [sdk.RoomEvent.Timeline, sdk.ClientEvent.Room, sdk.MatrixEventEvent.Decrypted], () => {
      const ev = second.getRoom(roomId)?.findEventById(sent.event_id);
      return ev && !ev.isBeingDecrypted() && ev.isDecryptionFailure() ? true : undefined;
    }, "history undecryptable before the restore");

    const crypto2 = second.getCrypto()!;
    await crypto2.loadSessionBackupPrivateKeyFromSecretStorage();
    const restored = await crypto2.restoreKeyBackup();
    expect(restored.imported).toBeGreaterThanOrEqual(1);
    expect(await decryptedBody(second, roomId, sent.event_id)).toBe("history only the backup can open");
  });

  it("two devices of one user complete SAS verification and end cross-signed", async () => {
    const session = await registerUser(t, "dora");
    const d1 = await cryptoClient(t, session);
    clients.push(d1);
    const c1 = d1.getCrypto()!;
    const challenges = { count: 0 };
    await c1.bootstrapCrossSigning({ authUploadDeviceSigningKeys: passwordAuth("dora", challenges) });
    expect(await c1.isCrossSigningReady()).toBe(true);
    // The first upload needs no UIA.
    expect(challenges.count).toBe(0);

    const d2 = await cryptoClient(t, await loginUser(t, "dora"));
    clients.push(d2);
    const c2 = d2.getCrypto()!;
    const d2Id = d2.getDeviceId()!;
    const d1Id = d1.getDeviceId()!;
    // The new device is not cross-signed yet.
    expect((await c1.getDeviceVerificationStatus(session.user_id, d2Id))?.crossSigningVerified ?? false).toBe(false);

    // d1 answers the request it receives by to-device message.
    const received = new Promise<VerificationRequest>((resolve) => d1.once(CryptoEvent.VerificationRequestReceived, resolve));
    const request2 = await c2.requestOwnUserVerification();
    const request1 = await received;
    expect(request1.otherDeviceId).toBe(d2Id);
    await request1.accept();
    const phase = (r: VerificationRequest, p: VerificationPhase) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`verification never reached phase ${p} (at ${r.phase})`)), WAIT_MS);
        const check = () => {
          if (r.phase === p) { clearTimeout(timer); r.off(VerificationRequestEvent.Change, check); resolve(); }
          else if (r.phase === VerificationPhase.Cancelled) { clearTimeout(timer); r.off(VerificationRequestEvent.Change, check); reject(new Error(`cancelled: ${JSON.stringify(r.cancellationCode)}`)); }
        };
        r.on(VerificationRequestEvent.Change, check);
        check();
      });
    await phase(request2, VerificationPhase.Ready);

    const verifier2 = await request2.startVerification("m.sas.v1");
    await phase(request1, VerificationPhase.Started);
    const verifier1 = request1.verifier!;
    expect(verifier1).toBeDefined();
    // Both sides show the same emojis; the user confirms on both.
    const shown = (v: typeof verifier1) => new Promise<ShowSasCallbacks>((resolve) => {
      const now = v.getShowSasCallbacks();
      if (now) resolve(now);
      else v.once(VerifierEvent.ShowSas, resolve);
    });
    const done = Promise.all([verifier1.verify(), verifier2.verify()]);
    const [sas1, sas2] = await Promise.all([shown(verifier1), shown(verifier2)]);
    expect(sas1.sas.emoji?.map((e) => e[1])).toHaveLength(7);
    expect(sas1.sas.emoji?.map((e) => e[1])).toEqual(sas2.sas.emoji?.map((e) => e[1]));
    await Promise.all([sas1.confirm(), sas2.confirm()]);
    await done;
    await Promise.all([phase(request1, VerificationPhase.Done), phase(request2, VerificationPhase.Done)]);

    // d1 signed d2 with the self-signing key: the server holds the signature and every view agrees.
    const crossSigned = await pollUntil(async () => {
      const st = await c1.getDeviceVerificationStatus(session.user_id, d2Id);
      return st?.crossSigningVerified ? st : undefined;
    }, WAIT_MS, "d2 cross-signed in d1's view");
    expect(crossSigned.isVerified()).toBe(true);
    const q = await t.call("POST", "/_matrix/client/v3/keys/query", { token: session.access_token, body: { device_keys: { [session.user_id]: [d2Id] } } });
    const ssk = Object.keys(q.json.self_signing_keys[session.user_id].keys)[0]!;
    expect(Object.keys(q.json.device_keys[session.user_id][d2Id].signatures[session.user_id])).toContain(ssk);
    // d2 trusts d1 (verified by SAS) and, once it downloaded the signatures, sees itself cross-signed.
    expect((await c2.getDeviceVerificationStatus(session.user_id, d1Id))?.isVerified()).toBe(true);
    await pollUntil(async () => ((await c2.getDeviceVerificationStatus(session.user_id, d2Id))?.crossSigningVerified ? true : undefined), WAIT_MS, "d2 cross-signed in its own view");

    // Replacing the cross-signing keys needs UIA: the SDK's callback answers the challenge with the
    // password and the server then holds the new master key. (Checked on the server only: the client
    // may race its own reset against a /keys/query already in flight.)
    const serverMaster = async () => {
      const own = await t.call("POST", "/_matrix/client/v3/keys/query", { token: session.access_token, body: { device_keys: { [session.user_id]: [] } } });
      return Object.keys(own.json.master_keys[session.user_id].keys)[0];
    };
    const masterBefore = await serverMaster();
    expect(masterBefore).toBe(`ed25519:${await c1.getCrossSigningKeyId()}`);
    await c1.bootstrapCrossSigning({ setupNewCrossSigning: true, authUploadDeviceSigningKeys: passwordAuth("dora", challenges) });
    expect(challenges.count).toBe(1);
    expect(await serverMaster()).not.toBe(masterBefore);
  });
});
