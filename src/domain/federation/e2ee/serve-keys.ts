// What this server tells other servers about its own users' E2EE keys: POST /user/keys/query (device
// keys, master and self-signing keys; never a user-signing key), POST /user/keys/claim (one-time or
// fallback keys, taken as for a local claim) and GET /user/devices/{userId} (a user's whole device list
// with the stream_id its m.device_list_update EDUs continue from). Users of other servers are not ours
// to answer for: they are left out (a query, a claim) or refused (a device list). Device display names
// are told only with allow_device_name_lookup_over_federation (Synapse's option; default false).
// Spec: Server-Server API "End-to-End Encryption", "Device Management".
import { MatrixError } from "../../errors.ts";
import type { Services } from "../../services.ts";
import { isValidUserId } from "../../ids.ts";
import { serverOfUser } from "../room-servers.ts";
import { localKeys } from "../../e2ee/query-keys.ts";
import { claimLocalKeys, type KeyClaim } from "../../e2ee/claim-keys.ts";
import { isPlainObject, objectField, type Json } from "../../e2ee/json.ts";
import { lastDeviceListPositions } from "./remote-device-store.ts";

const isLocal = (s: Services, userId: string) => serverOfUser(userId) === s.config.server_name;

/** Device keys as signed, without the `unsigned` block (the display name goes beside them). */
export function signedDeviceKeys(keys: Json): Json {
  const { unsigned: _u, ...rest } = keys;
  return rest;
}

/** Device keys as /user/keys/query serves them: `unsigned.device_display_name` only if the option says so. */
function queriedDeviceKeys(s: Services, keys: Json): Json {
  return s.config.allow_device_name_lookup_over_federation ? keys : signedDeviceKeys(keys);
}

/** The name a device is shown under to other servers (GET /user/devices, m.device_list_update). */
export function servedDeviceName(s: Services, name: string | null | undefined): string | undefined {
  return s.config.allow_device_name_lookup_over_federation && name ? name : undefined;
}

export async function federationQueryKeys(s: Services, body: Json): Promise<Json> {
  const wanted = objectField(body, "device_keys", true);
  const query = new Map<string, string[]>();
  for (const [userId, devices] of Object.entries(wanted)) {
    if (devices !== null && (!Array.isArray(devices) || !devices.every((d) => typeof d === "string")))
      throw new MatrixError("M_BAD_JSON", `device_keys.${userId} must be a list of device ids`, 400);
    if (isLocal(s, userId)) query.set(userId, (devices ?? []) as string[]);
  }
  // No viewer: only the owners' own signatures.
  const keys = await localKeys(s, "", query);
  const deviceKeys: Record<string, Record<string, Json>> = {};
  for (const [u, devices] of Object.entries(keys.device_keys)) deviceKeys[u] = Object.fromEntries(Object.entries(devices).map(([d, k]) => [d, queriedDeviceKeys(s, k)]));
  return { device_keys: deviceKeys, master_keys: keys.master_keys, self_signing_keys: keys.self_signing_keys };
}

export async function federationClaimKeys(s: Services, body: Json): Promise<Json> {
  const wanted = objectField(body, "one_time_keys", true);
  const claims: KeyClaim[] = [];
  for (const [userId, devices] of Object.entries(wanted)) {
    if (!isPlainObject(devices) || !Object.values(devices).every((a) => typeof a === "string"))
      throw new MatrixError("M_BAD_JSON", `one_time_keys.${userId} must map device ids to algorithms`, 400);
    if (!isLocal(s, userId)) continue;
    for (const [deviceId, algorithm] of Object.entries(devices)) claims.push({ userId, deviceId, algorithm: algorithm as string });
  }
  return { one_time_keys: await claimLocalKeys(s, claims) };
}

export async function federationUserDevices(s: Services, userId: string): Promise<Json> {
  if (!isValidUserId(userId)) throw new MatrixError("M_INVALID_PARAM", "Invalid user id", 400);
  if (!isLocal(s, userId)) throw new MatrixError("M_INVALID_PARAM", "Not a user here", 400);
  // The position first, then the devices: the devices are then at least as new as the stream_id says,
  // so an update the other server gets after this answer is never one the answer already lacks.
  const positions = await lastDeviceListPositions(s.storage.sql, [userId]);
  const [names, keys] = await Promise.all([s.e2ee.deviceNames([userId]), localKeys(s, "", new Map([[userId, []]]))]);
  const devices: Json[] = [];
  for (const key of [...names.keys()].sort()) {
    const deviceId = key.slice(userId.length + 1);
    const k = keys.device_keys[userId]?.[deviceId];
    const device: Json = { device_id: deviceId };
    if (k) device.keys = signedDeviceKeys(k);
    const name = servedDeviceName(s, names.get(key));
    if (name) device.device_display_name = name;
    devices.push(device);
  }
  const out: Json = { user_id: userId, stream_id: positions.get(userId) ?? 0, devices };
  if (keys.master_keys[userId]) out.master_key = keys.master_keys[userId];
  if (keys.self_signing_keys[userId]) out.self_signing_key = keys.self_signing_keys[userId];
  return out;
}
