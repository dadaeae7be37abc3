// matrix-js-sdk 43 with its Rust crypto, one client on each of two Weft servers federating over TLS on
// loopback (SQLite and PostgreSQL): a user of A invites a user of B into an encrypted room, and messages
// decrypt on both sides. Exercises, as a strict client uses them, /keys/query and /keys/claim forwarded
// to the other server, device lists of remote users in /sync, and the room keys travelling as to-device
// messages in m.direct_to_device EDUs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as sdk from "matrix-js-sdk";
import { logger as sdkGlobalLogger } from "matrix-js-sdk/lib/logger.js";
import { fetch as undiciFetch } from "undici";
import { backends, insecureAgent } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { registerUser } from "../helpers/users.ts";
import { decryptedBody, deviceKnown, encryptedRoom, joinedBy, startCryptoClient, waitFor } from "../helpers/js-sdk-crypto.ts";

if (process.env.WEFT_TEST_SDK_LOG !== "1") (sdkGlobalLogger as unknown as { setLevel(level: string, persist?: boolean): void }).setLevel("silent", false);

/** The test servers' certificates are self-signed: the clients' fetch does not check them. */
const insecureFetch = ((url: string, init?: RequestInit) => undiciFetch(url, { ...(init as object), dispatcher: insecureAgent })) as unknown as typeof fetch;

describe.each(backends())("matrix-js-sdk Rust crypto across Weft servers on %s", { timeout: 90000 }, (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  const clients: sdk.MatrixClient[] = [];

  beforeAll(async () => {
    [a, b] = await Promise.all([startFederatedServer({ backend }), startFederatedServer({ backend })]);
  });
  afterAll(async () => {
    for (const c of clients) c.stopClient();
    await Promise.all([a?.close(), b?.close()]);
  });

  it("a user of A and a user of B in an encrypted room exchange messages that decrypt on the other side", async () => {
    const alice = await startCryptoClient(a.baseUrl, await registerUser(a, "alice"), { fetchFn: insecureFetch });
    clients.push(alice);
    const bob = await startCryptoClient(b.baseUrl, await registerUser(b, "bob"), { fetchFn: insecureFetch });
    clients.push(bob);
    // (createRoom's `invite` is for local users here: a remote user is invited through /invite.)
    const { room_id: roomId } = await alice.createRoom(encryptedRoom());
    await alice.invite(roomId, bob.getUserId()!);
    await joinedBy(bob, roomId);
    await waitFor(alice, [sdk.RoomEvent.Timeline, sdk.RoomStateEvent.Members], () => (alice.getRoom(roomId)?.getMember(bob.getUserId()!)?.membership === "join" ? true : undefined), "bob's join at alice");
    expect(await alice.getCrypto()!.isEncryptionEnabledInRoom(roomId)).toBe(true);

    // Bob's client uploads his device's keys in the background: alice encrypts once her client lists it.
    await deviceKnown(alice, bob.getUserId()!, bob.getDeviceId()!, "bob's device known to alice's client");

    const sent = await alice.sendTextMessage(roomId, "hello bob of B, secretly");
    expect(await decryptedBody(bob, roomId, sent.event_id)).toBe("hello bob of B, secretly");
    // B holds ciphertext only.
    const raw = await b.call("GET", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/event/${encodeURIComponent(sent.event_id)}`, { token: bob.getAccessToken()! });
    expect(raw.json.type).toBe("m.room.encrypted");
    expect(JSON.stringify(raw.json)).not.toContain("secretly");

    const reply = await bob.sendTextMessage(roomId, "hello alice of A, secretly");
    expect(await decryptedBody(alice, roomId, reply.event_id)).toBe("hello alice of A, secretly");
    expect(alice.getRoom(roomId)!.findEventById(reply.event_id)!.getWireType()).toBe("m.room.encrypted");
  });
});
