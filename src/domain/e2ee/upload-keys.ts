// POST /keys/upload: a device publishes its identity keys (self-signed; clients verify it), one-time
// keys and fallback keys (the body is read in upload-body.ts). Device keys that differ from the stored
// ones replace them and move the device list, as Synapse does; a one-time key id reused with other
// content is refused, as Synapse does; a fallback key replaces the previous one of its algorithm.
// Spec: Client-Server API "POST /keys/upload".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { canonicalJson } from "../canonical-json.ts";
import { isPlainObject, requireDevice, signedPart } from "./json.ts";
import { readUploadInput, type KeysUploadInput } from "./upload-body.ts";
import { announceDeviceListChange, recordDeviceListChange } from "./device-lists.ts";
import { oneTimeKeyCounts } from "./sync-data.ts";

const invalid = (msg: string) => new MatrixError("M_INVALID_PARAM", msg, 400);

/** Two one-time keys match when equal, signatures aside (as Synapse compares them). */
function sameOneTimeKey(a: unknown, b: unknown): boolean {
  if (isPlainObject(a) && isPlainObject(b)) return signedPart(a) === signedPart(b);
  return canonicalJson(a) === canonicalJson(b);
}

export async function uploadKeys(s: Services, r: Requester, input: KeysUploadInput): Promise<{ one_time_key_counts: Record<string, number> }> {
  const deviceId = requireDevice(r);
  const userId = r.userId;
  const { deviceKeys: dk, oneTimeKeys: otkList, fallbackKeys: fbList } = readUploadInput(input, userId, deviceId);

  const now = s.clock.now();
  const position = await s.storage.sql.transaction(async (tx) => {
    // Concurrent uploads of one device (clients retry) read and write the same rows: one at a time.
    await s.e2ee.lock(tx, `e2e_keys:${userId}:${deviceId}`);
    let keysChanged = false;
    if (dk) {
      const { unsigned: _u, ...stored } = dk;
      const json = canonicalJson(stored);
      // Keys that differ from the stored ones replace them (as Synapse): the device list moves.
      const existing = await s.e2ee.deviceKeys(userId, deviceId, tx);
      if (existing !== json) {
        await s.e2ee.setDeviceKeys(tx, userId, deviceId, json, now);
        keysChanged = true;
      }
    }
    if (otkList.length > 0) {
      const existing = await s.e2ee.existingOneTimeKeys(tx, userId, deviceId);
      for (const k of otkList) {
        const old = existing.get(k.id);
        if (old !== undefined) {
          if (!sameOneTimeKey(JSON.parse(old), k.value)) throw invalid(`One time key ${k.id} already exists with different content`);
          continue;
        }
        await s.e2ee.insertOneTimeKey(tx, userId, deviceId, k.algorithm, k.keyId, k.json, now);
        existing.set(k.id, k.json);
      }
    }
    for (const k of fbList) {
      const old = await s.e2ee.fallbackKey(tx, userId, deviceId, k.algorithm);
      if (old && old.keyId === k.keyId && old.json === k.json) continue; // the same key keeps its used flag
      await s.e2ee.setFallbackKey(tx, userId, deviceId, k.algorithm, k.keyId, k.json);
    }
    // Last: the stream position is taken (and ordered) at the end of the transaction.
    return keysChanged ? recordDeviceListChange(s, tx, userId, [deviceId]) : undefined;
  });
  if (position !== undefined) await announceDeviceListChange(s, userId, position);
  // Several processes: answered once the others were told to drop this device's cached key counts.
  await s.invalidations.delivered();
  return { one_time_key_counts: await oneTimeKeyCounts(s, userId, deviceId) };
}
