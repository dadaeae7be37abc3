// E2EE helpers for tests: real Ed25519 key pairs (node:crypto), JSON signing over the project's
// canonical JSON, and builders for device keys, one-time keys and cross-signing keys, uploaded through
// the real API.
import { generateKeyPairSync, sign as cryptoSign, type KeyObject } from "node:crypto";
import { expect } from "vitest";
import { base64Unpadded, canonicalJson } from "../../src/domain/canonical-json.ts";
import { rawPublicKey } from "../../src/domain/signing.ts";
import type { TestServer } from "./server.ts";
import type { Session } from "./users.ts";

export const V3 = "/_matrix/client/v3";

export interface Ed25519 {
  privateKey: KeyObject;
  /** Unpadded base64 public key. */
  pub: string;
}

export function keyPair(): Ed25519 {
  const { privateKey } = generateKeyPairSync("ed25519");
  return { privateKey, pub: base64Unpadded(rawPublicKey(privateKey)) };
}

/** Returns a copy of `obj` signed by `signer` with `keyId` (other signatures kept). */
export function signed<T extends Record<string, unknown>>(obj: T, signer: string, keyId: string, key: Ed25519): T {
  const { signatures, unsigned: _u, ...rest } = obj as Record<string, unknown>;
  const sig = base64Unpadded(cryptoSign(null, Buffer.from(canonicalJson(rest), "utf8"), key.privateKey));
  const sigs = { ...((signatures as Record<string, Record<string, string>>) ?? {}) };
  sigs[signer] = { ...(sigs[signer] ?? {}), [keyId]: sig };
  return { ...obj, signatures: sigs };
}

export interface DeviceIdentity {
  ed: Ed25519;
  curve: string;
  keys: Record<string, unknown>;
}

/** Self-signed device keys of a session's device. */
export function deviceKeysFor(who: Session, ed = keyPair()): DeviceIdentity {
  const curve = keyPair().pub; // any 32-byte key stands in for a curve25519 key here
  const body = {
    user_id: who.user_id,
    device_id: who.device_id,
    algorithms: ["m.olm.v1.curve25519-aes-sha2", "m.megolm.v1.aes-sha2"],
    keys: { [`ed25519:${who.device_id}`]: ed.pub, [`curve25519:${who.device_id}`]: curve },
  };
  return { ed, curve, keys: signed(body, who.user_id, `ed25519:${who.device_id}`, ed) };
}

/** A signed curve25519 one-time (or fallback) key object. */
export function otk(who: Session, dev: DeviceIdentity, n: number, fallback = false): Record<string, unknown> {
  const key = { key: base64Unpadded(Buffer.alloc(32, n)), ...(fallback ? { fallback: true } : {}) };
  return signed(key, who.user_id, `ed25519:${who.device_id}`, dev.ed);
}

export async function uploadKeys(t: TestServer, who: Session, body: Record<string, unknown>) {
  return t.call("POST", `${V3}/keys/upload`, { token: who.access_token, body });
}

/** Uploads device keys for the session and returns them. */
export async function uploadDeviceKeys(t: TestServer, who: Session): Promise<DeviceIdentity> {
  const dev = deviceKeysFor(who);
  const res = await uploadKeys(t, who, { device_keys: dev.keys });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return dev;
}

export interface CrossSigning {
  master: Ed25519;
  ssk: Ed25519;
  usk: Ed25519;
  body: { master_key: Record<string, unknown>; self_signing_key: Record<string, unknown>; user_signing_key: Record<string, unknown> };
}

/** A full set of cross-signing keys for `userId`, the self- and user-signing keys signed by the master. */
export function crossSigningKeys(userId: string): CrossSigning {
  const master = keyPair();
  const ssk = keyPair();
  const usk = keyPair();
  const key = (k: Ed25519, usage: string) => ({ user_id: userId, usage: [usage], keys: { [`ed25519:${k.pub}`]: k.pub } });
  return {
    master,
    ssk,
    usk,
    body: {
      master_key: key(master, "master"),
      self_signing_key: signed(key(ssk, "self_signing"), userId, `ed25519:${master.pub}`, master),
      user_signing_key: signed(key(usk, "user_signing"), userId, `ed25519:${master.pub}`, master),
    },
  };
}

export function expectError(res: { status: number; json: any }, status: number, errcode: string) {
  expect([res.status, res.json?.errcode], JSON.stringify(res.json)).toEqual([status, errcode]);
  expect(typeof res.json.error).toBe("string");
}
