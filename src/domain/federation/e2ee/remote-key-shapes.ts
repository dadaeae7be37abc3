// Checks on keys another server hands us (answers to /user/keys/query and /user/devices, device-list and
// signing-key EDUs): the same rules as a local upload — device keys naming their user and device in the
// spec's shape (their self-signature is the receiving clients' to verify, as for our own users' keys:
// the spec asks no more of a server, Synapse checks no more, and the origin could sign whatever it likes
// anyway), a cross-signing key with its usage and one ed25519 key, a self-signing key signed by the
// master key — answered with a boolean, since a remote server's bad key is dropped, never an error for
// our client. Spec: Server-Server API "End-to-End Encryption"; Client-Server API "Cross-signing".
import { checkDeviceKeys } from "../../e2ee/upload-body.ts";
import { checkCrossSigningKey, type KeyType } from "../../e2ee/cross-signing.ts";
import { verifyJsonSignature } from "../../signing.ts";
import { isPlainObject, type Json } from "../../e2ee/json.ts";
import { serverOfUser } from "../room-servers.ts";

export { isPlainObject };

/** Whether `v` are well-formed device keys of `userId`'s `deviceId` (DeviceKeys; signatures unverified). */
export function validDeviceKeys(v: unknown, userId: string, deviceId: string): v is Json {
  if (!isPlainObject(v)) return false;
  try {
    checkDeviceKeys(v, userId, deviceId);
    return true;
  } catch {
    return false;
  }
}

/**
 * Valid device keys of another server (validDeviceKeys) as our clients may see them: their `unsigned`,
 * which no signature covers, kept only as the spec's UnsignedDeviceInfo (a string device_display_name) —
 * the one the server gives beside the keys (`displayName`: /user/devices' and the EDU's
 * device_display_name) before the one inside them, as Synapse shows it.
 */
export function remoteDeviceKeys(v: unknown, userId: string, deviceId: string, displayName?: unknown): Json | undefined {
  if (!validDeviceKeys(v, userId, deviceId)) return undefined;
  const { unsigned, ...signed } = v;
  const inside = isPlainObject(unsigned) ? unsigned.device_display_name : undefined;
  const name = typeof displayName === "string" ? displayName : inside;
  if (typeof name === "string") return { ...signed, unsigned: { device_display_name: name } };
  return unsigned === undefined ? v : signed;
}

/** The cross-signing key's public key when it is a valid key of `userId` for `usage`. */
export function validCrossSigningKey(v: unknown, userId: string, usage: KeyType): string | undefined {
  if (!isPlainObject(v)) return undefined;
  try {
    return checkCrossSigningKey(v, userId, usage);
  } catch {
    return undefined;
  }
}

/** Whether a self-signing (or user-signing) key carries the master key's signature. */
export function signedByMaster(key: Json, userId: string, masterPub: string): boolean {
  return verifyJsonSignature(key, userId, `ed25519:${masterPub}`, masterPub);
}

/** Whether `userId` is a well-formed user id of `server` (a server speaks only for its own users). */
export function isUserOf(userId: unknown, server: string): userId is string {
  return typeof userId === "string" && serverOfUser(userId) === server;
}

/**
 * A remote user's master and self-signing keys from an answer: each kept only when valid, and the
 * self-signing key only when the master key signed it.
 */
export function remoteCrossSigning(userId: string, master: unknown, selfSigning: unknown): { master?: Json; selfSigning?: Json } {
  const out: { master?: Json; selfSigning?: Json } = {};
  const masterPub = validCrossSigningKey(master, userId, "master");
  if (masterPub === undefined) return out;
  out.master = master as Json;
  if (validCrossSigningKey(selfSigning, userId, "self_signing") !== undefined && signedByMaster(selfSigning as Json, userId, masterPub)) out.selfSigning = selfSigning as Json;
  return out;
}
