// matrix-js-sdk with its Rust crypto (wasm, in memory) and a running sync loop, for the client tests:
// starting such a client, waiting on its events for a condition (never sleeping), reading an event's
// decrypted body, creating an encrypted room and joining it once invited.
import * as sdk from "matrix-js-sdk";
import { makeClient, pollUntil, startSyncing } from "./js-sdk.ts";
import type { Session } from "./users.ts";

export const WAIT_MS = 20000;

/** A client with Rust crypto and a running sync loop, logged in as `s`, once its first sync is done. */
export async function startCryptoClient(baseUrl: string, s: Session, extra: Partial<sdk.ICreateClientOpts> = {}): Promise<sdk.MatrixClient> {
  const client = makeClient(baseUrl, { userId: s.user_id, accessToken: s.access_token, deviceId: s.device_id }, "/_matrix/client/v3", extra);
  await client.initRustCrypto({ useIndexedDB: false });
  await startSyncing(client);
  return client;
}

/** Resolves when `probe` returns a value, re-checking on each of the client's listed events. */
export function waitFor<T>(client: sdk.MatrixClient, events: string[], probe: () => T | undefined | Promise<T | undefined>, what: string, ms = WAIT_MS): Promise<T> {
  return new Promise((resolve, reject) => {
    let done = false;
    const emitter = client as unknown as { on(e: string, f: () => void): void; off(e: string, f: () => void): void };
    const finish = (err: Error | undefined, v?: T) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      for (const e of events) emitter.off(e, check);
      if (err) reject(err);
      else resolve(v as T);
    };
    const check = () => {
      void Promise.resolve(probe()).then((v) => { if (v !== undefined) finish(undefined, v); }, (e: Error) => finish(e));
    };
    const timer = setTimeout(() => finish(new Error(`timed out waiting for ${what}`)), ms);
    for (const e of events) emitter.on(e, check);
    check();
  });
}

/**
 * Resolves once `client`'s crypto lists the device `deviceId` of `userId` (downloading the user's keys when
 * untracked). A message encrypted before the sender's client knows a device carries no key for it, with
 * any server: devices upload their keys in the background once their client started.
 */
export function deviceKnown(client: sdk.MatrixClient, userId: string, deviceId: string, what: string): Promise<true> {
  return pollUntil(async () => ((await client.getCrypto()!.getUserDeviceInfo([userId], true)).get(userId)?.has(deviceId) ? true : undefined), WAIT_MS, what);
}

/** The decrypted body of the event `eventId` in `roomId` at `client`, once it is there and decrypted. */
export function decryptedBody(client: sdk.MatrixClient, roomId: string, eventId: string): Promise<string> {
  return waitFor(
    client,
    [sdk.RoomEvent.Timeline, sdk.MatrixEventEvent.Decrypted, sdk.ClientEvent.Room],
    () => {
      const ev = client.getRoom(roomId)?.findEventById(eventId);
      if (!ev || !ev.isEncrypted() || ev.isBeingDecrypted() || ev.isDecryptionFailure()) return undefined;
      const body = ev.getClearContent()?.body;
      return typeof body === "string" ? body : undefined;
    },
    `event ${eventId} decrypted`,
  );
}

export const encryptedRoom = (invite: string[] = []) => ({
  invite,
  initial_state: [{ type: "m.room.encryption", state_key: "", content: { algorithm: "m.megolm.v1.aes-sha2" } }],
});

export async function joinedBy(client: sdk.MatrixClient, roomId: string): Promise<void> {
  await waitFor(client, [sdk.RoomEvent.MyMembership, sdk.ClientEvent.Room], () => (client.getRoom(roomId)?.getMyMembership() === "invite" ? true : undefined), "the invite");
  await client.joinRoom(roomId);
}

