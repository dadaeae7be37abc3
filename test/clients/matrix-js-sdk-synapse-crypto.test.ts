// matrix-js-sdk 43 with its Rust crypto, one client on Weft (SQLite and PostgreSQL) and one on a live
// Synapse (test/helpers/synapse.ts), federating over TLS on loopback — issue 15's check: in an encrypted
// room messages decrypt on both sides; a new device on each side receives the room keys of messages
// sent after it appeared (device list updates crossing as m.device_list_update, keys as to-device
// messages in m.direct_to_device EDUs); and the Weft user verifies the Synapse user's device by SAS,
// both clients driving the flow over to-device messages across the federation.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as sdk from "matrix-js-sdk";
import { logger as sdkGlobalLogger } from "matrix-js-sdk/lib/logger.js";
import {
  CryptoEvent,
  VerificationPhase,
  VerificationRequestEvent,
  VerifierEvent,
  type ShowSasCallbacks,
  type VerificationRequest,
} from "matrix-js-sdk/lib/crypto-api/index.js";
import { fetch as undiciFetch } from "undici";
import { backends, insecureAgent } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { startSynapse, type SynapseServer } from "../helpers/synapse.ts";
import { loginUser, registerUser, type Session } from "../helpers/users.ts";
import { WAIT_MS, decryptedBody, deviceKnown, encryptedRoom, joinedBy, startCryptoClient, waitFor } from "../helpers/js-sdk-crypto.ts";

if (process.env.WEFT_TEST_SDK_LOG !== "1") (sdkGlobalLogger as unknown as { setLevel(level: string, persist?: boolean): void }).setLevel("silent", false);

/** Weft's test certificate is self-signed: the clients' fetch does not check it. */
const insecureFetch = ((url: string, init?: RequestInit) => undiciFetch(url, { ...(init as object), dispatcher: insecureAgent })) as unknown as typeof fetch;

/** Resolves once `r` reaches phase `p`; rejects if it is cancelled or the wait is over. */
function phase(r: VerificationRequest, p: VerificationPhase): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`verification never reached phase ${p} (at ${r.phase})`)), WAIT_MS);
    const check = () => {
      if (r.phase !== p && r.phase !== VerificationPhase.Cancelled) return;
      clearTimeout(timer);
      r.off(VerificationRequestEvent.Change, check);
      if (r.phase === p) resolve();
      else reject(new Error(`cancelled: ${JSON.stringify(r.cancellationCode)}`));
    };
    r.on(VerificationRequestEvent.Change, check);
    check();
  });
}

describe.each(backends())("matrix-js-sdk Rust crypto between Weft (%s) and Synapse", { timeout: 180_000 }, (backend) => {
  let a: FederatedServer;
  let syn: SynapseServer;
  const clients: sdk.MatrixClient[] = [];
  let alice: sdk.MatrixClient;
  let bob: sdk.MatrixClient;
  let aliceSession: Session;
  let roomId: string;

  beforeAll(async () => {
    [a, syn] = await Promise.all([startFederatedServer({ backend }), startSynapse()]);
  }, 120_000);
  afterAll(async () => {
    for (const c of clients) c.stopClient();
    await Promise.all([a?.close(), syn?.close()]);
  });

  const synapseLogin = async (localpart: string): Promise<Session> => {
    const res = await syn.call("POST", "/_matrix/client/v3/login", { body: { type: "m.login.password", identifier: { type: "m.id.user", user: localpart }, password: "password" } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json as Session;
  };
  const start = async (baseUrl: string, s: Session) => {
    const c = await startCryptoClient(baseUrl, s, { fetchFn: insecureFetch });
    clients.push(c);
    return c;
  };

  it("a user of Weft and a user of Synapse in an encrypted room exchange messages that decrypt on the other side", async () => {
    aliceSession = await registerUser(a, "alice");
    alice = await start(a.baseUrl, aliceSession);
    await syn.register("bob");
    bob = await start(syn.clientUrl, await synapseLogin("bob"));
    ({ room_id: roomId } = await alice.createRoom(encryptedRoom()));
    await alice.invite(roomId, bob.getUserId()!);
    await joinedBy(bob, roomId);
    await waitFor(alice, [sdk.RoomEvent.Timeline, sdk.RoomStateEvent.Members], () => (alice.getRoom(roomId)?.getMember(bob.getUserId()!)?.membership === "join" ? true : undefined), "bob's join at alice");

    // Bob's client uploads his device's keys in the background: alice encrypts once her client lists it.
    await deviceKnown(alice, bob.getUserId()!, bob.getDeviceId()!, "bob's device known to alice's client");

    const sent = await alice.sendTextMessage(roomId, "hello bob of Synapse, secretly");
    expect(await decryptedBody(bob, roomId, sent.event_id)).toBe("hello bob of Synapse, secretly");
    const raw = await syn.call("GET", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/event/${encodeURIComponent(sent.event_id)}`, { token: bob.getAccessToken()! });
    expect(raw.json.type).toBe("m.room.encrypted");
    expect(JSON.stringify(raw.json)).not.toContain("secretly");

    const reply = await bob.sendTextMessage(roomId, "hello alice of Weft, secretly");
    expect(await decryptedBody(alice, roomId, reply.event_id)).toBe("hello alice of Weft, secretly");
    expect(alice.getRoom(roomId)!.findEventById(reply.event_id)!.getWireType()).toBe("m.room.encrypted");
  });

  it("a new device on each side receives the keys of what is sent after it appeared", async () => {
    const alice2 = await start(a.baseUrl, await loginUser(a, "alice"));
    const bob2 = await start(syn.clientUrl, await synapseLogin("bob"));
    // Each sender's view of the other user's devices learns of the new one (a device list update over
    // federation, then /keys/query) before it encrypts.
    await deviceKnown(alice, bob.getUserId()!, bob2.getDeviceId()!, "bob's new device known at alice");
    await deviceKnown(bob, alice.getUserId()!, alice2.getDeviceId()!, "alice's new device known at bob");

    const fromAlice = await alice.sendTextMessage(roomId, "for every device of bob");
    expect(await decryptedBody(bob2, roomId, fromAlice.event_id)).toBe("for every device of bob");
    expect(await decryptedBody(alice2, roomId, fromAlice.event_id)).toBe("for every device of bob");
    const fromBob = await bob.sendTextMessage(roomId, "for every device of alice");
    expect(await decryptedBody(alice2, roomId, fromBob.event_id)).toBe("for every device of alice");
    expect(await decryptedBody(bob2, roomId, fromBob.event_id)).toBe("for every device of alice");
  });

  it("alice of Weft verifies bob's Synapse device by SAS over to-device messages", async () => {
    const bobId = bob.getUserId()!;
    const bobDevice = bob.getDeviceId()!;
    const aliceDevice = alice.getDeviceId()!;
    expect((await alice.getCrypto()!.getDeviceVerificationStatus(bobId, bobDevice))?.isVerified() ?? false).toBe(false);

    const received = new Promise<VerificationRequest>((resolve) => bob.once(CryptoEvent.VerificationRequestReceived, resolve));
    const requestA = await alice.getCrypto()!.requestDeviceVerification(bobId, bobDevice);
    const requestB = await received;
    expect(requestB.otherUserId).toBe(alice.getUserId());
    expect(requestB.otherDeviceId).toBe(aliceDevice);
    await requestB.accept();
    await phase(requestA, VerificationPhase.Ready);

    const verifierA = await requestA.startVerification("m.sas.v1");
    await phase(requestB, VerificationPhase.Started);
    const verifierB = requestB.verifier!;
    expect(verifierB).toBeDefined();
    const shown = (v: typeof verifierB) =>
      new Promise<ShowSasCallbacks>((resolve) => {
        const now = v.getShowSasCallbacks();
        if (now) resolve(now);
        else v.once(VerifierEvent.ShowSas, resolve);
      });
    const done = Promise.all([verifierA.verify(), verifierB.verify()]);
    const [sasA, sasB] = await Promise.all([shown(verifierA), shown(verifierB)]);
    expect(sasA.sas.emoji).toHaveLength(7);
    expect(sasA.sas.emoji?.map((e) => e[1])).toEqual(sasB.sas.emoji?.map((e) => e[1]));
    await Promise.all([sasA.confirm(), sasB.confirm()]);
    await done;
    await Promise.all([phase(requestA, VerificationPhase.Done), phase(requestB, VerificationPhase.Done)]);

    // Each side now trusts the other's device.
    expect((await alice.getCrypto()!.getDeviceVerificationStatus(bobId, bobDevice))?.isVerified()).toBe(true);
    expect((await bob.getCrypto()!.getDeviceVerificationStatus(alice.getUserId()!, aliceDevice))?.isVerified()).toBe(true);
  });
});
