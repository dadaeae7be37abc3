// POST /keys/claim: takes one key per (user, device, algorithm) asked for: the oldest one-time key
// (deleted, so never given out twice), else the device's fallback key (marked used, and given out again
// until the device replaces it). Users of other servers are claimed from their servers, one request per
// server within the request's `timeout`; servers that fail go in `failures`.
// Spec: Client-Server API "POST /keys/claim".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { parseUserId } from "../ids.ts";
import { isPlainObject, objectField, type Json } from "./json.ts";
import { claimRemoteKeys, requestTimeout } from "../federation/e2ee/remote-key-queries.ts";

export interface KeyClaim {
  userId: string;
  deviceId: string;
  algorithm: string;
}

type ClaimedKeys = Record<string, Record<string, Record<string, unknown>>>;

/** Claims keys of local devices (one transaction): user → device → `<algorithm>:<key id>` → key. */
export async function claimLocalKeys(s: Services, claims: readonly KeyClaim[]): Promise<ClaimedKeys> {
  const out: ClaimedKeys = {};
  if (claims.length === 0) return out;
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
  return out;
}

/** What POST /keys/claim asks, as both faces parse it: one key per (user, device, algorithm), and a timeout in ms. */
export interface KeysClaimInput {
  claims: KeyClaim[];
  timeout?: number;
}

/** The REST body: `one_time_keys` (user → device → algorithm) and an optional `timeout`. */
export function keysClaimFromBody(body: Json): KeysClaimInput {
  const wanted = objectField(body, "one_time_keys", true);
  const claims: KeyClaim[] = [];
  for (const [userId, devices] of Object.entries(wanted)) {
    parseUserId(userId); // M_INVALID_PARAM for a malformed id, even with nothing for it
    if (!isPlainObject(devices) || !Object.values(devices).every((a) => typeof a === "string"))
      throw new MatrixError("M_BAD_JSON", `one_time_keys.${userId} must map device ids to algorithms`, 400);
    for (const [deviceId, algorithm] of Object.entries(devices)) claims.push({ userId, deviceId, algorithm: algorithm as string });
  }
  return { claims, timeout: requestTimeout(body.timeout) };
}

export async function claimKeys(s: Services, input: KeysClaimInput): Promise<{ one_time_keys: ClaimedKeys; failures: Record<string, Json> }> {
  const claims: KeyClaim[] = [];
  const remote = new Map<string, Record<string, Record<string, string>>>();
  for (const c of input.claims) {
    const { serverName } = parseUserId(c.userId);
    if (serverName === s.config.server_name) {
      claims.push(c);
      continue;
    }
    let m = remote.get(serverName);
    if (!m) remote.set(serverName, (m = {}));
    (m[c.userId] ??= {})[c.deviceId] = c.algorithm;
  }
  const [local, fromRemote] = await Promise.all([claimLocalKeys(s, claims), remote.size > 0 ? claimRemoteKeys(s, remote, requestTimeout(input.timeout)) : undefined]);
  await s.invalidations.delivered(); // several processes: the claimed devices' counts dropped everywhere first
  return { one_time_keys: { ...local, ...fromRemote?.one_time_keys }, failures: fromRemote?.failures ?? {} };
}
