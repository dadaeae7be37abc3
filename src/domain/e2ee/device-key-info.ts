// The E2EE side of a user's own devices for the GraphQL face: each device's published keys (with the
// stored signatures merged) and whether the user's self-signing key signed it (checked, not assumed).
// Spec: Client-Server API "Cross-signing". One batch of reads per user, whatever the number of devices.
import type { Services } from "../services.ts";
import { verifyJsonSignature } from "../signing.ts";
import { localKeys, crossSigningPublicKey } from "./query-keys.ts";
import type { Json } from "./json.ts";

export interface DeviceKeyInfo {
  algorithms: string[];
  keys: Record<string, string>;
  signatures: Record<string, Record<string, string>>;
  /** The device key carries a valid signature by the user's current self-signing key. */
  crossSigned: boolean;
}

/** Key information of every device of `userId` that published keys, by device id. */
export async function deviceKeyInfo(s: Services, userId: string): Promise<Map<string, DeviceKeyInfo>> {
  const read = await localKeys(s, userId, new Map([[userId, []]]));
  const ssk = read.self_signing_keys[userId];
  const sskPub = ssk ? crossSigningPublicKey(ssk) : undefined;
  const out = new Map<string, DeviceKeyInfo>();
  for (const [deviceId, dk] of Object.entries(read.device_keys[userId] ?? {})) {
    const k = dk as Json;
    out.set(deviceId, {
      algorithms: (k.algorithms as string[]) ?? [],
      keys: (k.keys as Record<string, string>) ?? {},
      signatures: (k.signatures as Record<string, Record<string, string>>) ?? {},
      crossSigned: sskPub !== undefined && verifyJsonSignature(k, userId, `ed25519:${sskPub}`, sskPub),
    });
  }
  return out;
}
