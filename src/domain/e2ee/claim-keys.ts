// POST /keys/claim: takes one key per (user, device, algorithm) asked for: the oldest one-time key
// (deleted, so never given out twice), else the device's fallback key (marked used, and given out again
// until the device replaces it). Users of other servers need federation: their server goes in
// `failures`. Spec: Client-Server API "POST /keys/claim".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { parseUserId } from "../ids.ts";
import { isPlainObject, objectField, type Json } from "./json.ts";
import { NO_FEDERATION } from "./query-keys.ts";

export async function claimKeys(s: Services, body: Json): Promise<{ one_time_keys: Record<string, Record<string, Record<string, unknown>>>; failures: Record<string, Json> }> {
  const wanted = objectField(body, "one_time_keys", true);
  const failures: Record<string, Json> = {};
  const claims: { userId: string; deviceId: string; algorithm: string }[] = [];
  for (const [userId, devices] of Object.entries(wanted)) {
    const { serverName } = parseUserId(userId);
    if (!isPlainObject(devices) || !Object.values(devices).every((a) => typeof a === "string"))
      throw new MatrixError("M_BAD_JSON", `one_time_keys.${userId} must map device ids to algorithms`, 400);
    if (serverName !== s.config.server_name) {
      failures[serverName] = NO_FEDERATION;
      continue;
    }
    for (const [deviceId, algorithm] of Object.entries(devices)) claims.push({ userId, deviceId, algorithm: algorithm as string });
  }
  const out: Record<string, Record<string, Record<string, unknown>>> = {};
  if (claims.length > 0) {
    await s.storage.sql.transaction(async (tx) => {
      for (const c of claims) {
        let key = await s.e2ee.takeOneTimeKey(tx, c.userId, c.deviceId, c.algorithm);
        if (!key) {
          const fb = await s.e2ee.fallbackKey(tx, c.userId, c.deviceId, c.algorithm);
          if (fb) {
            if (!fb.used) await s.e2ee.markFallbackUsed(tx, c.userId, c.deviceId, c.algorithm);
            key = fb;
          }
        }
        if (key) ((out[c.userId] ??= {})[c.deviceId] ??= {})[`${c.algorithm}:${key.keyId}`] = JSON.parse(key.json);
      }
    });
  }
  return { one_time_keys: out, failures };
}
