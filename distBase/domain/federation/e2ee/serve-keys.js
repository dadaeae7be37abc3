// What this server tells other servers about its own users' E2EE keys: POST /user/keys/query (device
// keys, master and self-signing keys; never a user-signing key), POST /user/keys/claim (one-time or
// fallback keys, taken as for a local claim) and GET /user/devices/{userId} (a user's whole device list
// with the stream_id its m.device_list_update EDUs continue from). Users of other servers are not ours
// to answer for: they are left out (a query, a claim) or refused (a device list). Device display names
// stay private (Synapse's default, allow_device_name_lookup_over_federation: false).
// Spec: Server-Server API "End-to-End Encryption", "Device Management".
import { MatrixError } from "../../errors.js";
import { isValidUserId } from "../../ids.js";
import { serverOfUser } from "../room-servers.js";
import { localKeys } from "../../e2ee/query-keys.js";
import { claimLocalKeys } from "../../e2ee/claim-keys.js";
import { isPlainObject, objectField } from "../../e2ee/json.js";
import { lastDeviceListPositions } from "./remote-device-store.js";
const isLocal = (s, userId) => serverOfUser(userId) === s.config.server_name;
/** Device keys as served to other servers: without the device's display name. */
function withoutName(keys) {
    const { unsigned: _u, ...rest } = keys;
    return rest;
}
export async function federationQueryKeys(s, body) {
    const wanted = objectField(body, "device_keys", true);
    const query = new Map();
    for (const [userId, devices] of Object.entries(wanted)) {
        if (devices !== null && (!Array.isArray(devices) || !devices.every((d) => typeof d === "string")))
            throw new MatrixError("M_BAD_JSON", `device_keys.${userId} must be a list of device ids`, 400);
        if (isLocal(s, userId))
            query.set(userId, (devices ?? []));
    }
    // No viewer: only the owners' own signatures.
    const keys = await localKeys(s, "", query);
    const deviceKeys = {};
    for (const [u, devices] of Object.entries(keys.device_keys))
        deviceKeys[u] = Object.fromEntries(Object.entries(devices).map(([d, k]) => [d, withoutName(k)]));
    return { device_keys: deviceKeys, master_keys: keys.master_keys, self_signing_keys: keys.self_signing_keys };
}
export async function federationClaimKeys(s, body) {
    const wanted = objectField(body, "one_time_keys", true);
    const claims = [];
    for (const [userId, devices] of Object.entries(wanted)) {
        if (!isPlainObject(devices) || !Object.values(devices).every((a) => typeof a === "string"))
            throw new MatrixError("M_BAD_JSON", `one_time_keys.${userId} must map device ids to algorithms`, 400);
        if (!isLocal(s, userId))
            continue;
        for (const [deviceId, algorithm] of Object.entries(devices))
            claims.push({ userId, deviceId, algorithm: algorithm });
    }
    return { one_time_keys: await claimLocalKeys(s, claims) };
}
export async function federationUserDevices(s, userId) {
    if (!isValidUserId(userId))
        throw new MatrixError("M_INVALID_PARAM", "Invalid user id", 400);
    if (!isLocal(s, userId))
        throw new MatrixError("M_INVALID_PARAM", "Not a user here", 400);
    // The position first, then the devices: the devices are then at least as new as the stream_id says,
    // so an update the other server gets after this answer is never one the answer already lacks.
    const positions = await lastDeviceListPositions(s.storage.sql, [userId]);
    const [names, keys] = await Promise.all([s.e2ee.deviceNames([userId]), localKeys(s, "", new Map([[userId, []]]))]);
    const devices = [];
    for (const key of [...names.keys()].sort()) {
        const deviceId = key.slice(userId.length + 1);
        const k = keys.device_keys[userId]?.[deviceId];
        devices.push(k ? { device_id: deviceId, keys: withoutName(k) } : { device_id: deviceId });
    }
    const out = { user_id: userId, stream_id: positions.get(userId) ?? 0, devices };
    if (keys.master_keys[userId])
        out.master_key = keys.master_keys[userId];
    if (keys.self_signing_keys[userId])
        out.self_signing_key = keys.self_signing_keys[userId];
    return out;
}
