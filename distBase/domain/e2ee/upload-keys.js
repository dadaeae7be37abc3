// POST /keys/upload: a device publishes its identity keys (self-signed; clients verify it), one-time
// keys and fallback keys. Identity keys of a device cannot be replaced by different ones (delete the
// device instead); a one-time key id reused with other content is refused, as Synapse does; a fallback
// key replaces the previous one of its algorithm. Spec: Client-Server API "POST /keys/upload".
import { MatrixError } from "../errors.js";
import { canonicalJson } from "../canonical-json.js";
import { isPlainObject, objectField, requireDevice, signedPart } from "./json.js";
import { announceDeviceListChange, recordDeviceListChange } from "./device-lists.js";
import { oneTimeKeyCounts } from "./sync-data.js";
const invalid = (msg) => new MatrixError("M_INVALID_PARAM", msg, 400);
/**
 * Checks device keys as the spec requires them: the requester's user and device, a list of algorithms,
 * string maps of keys and of signatures. The self-signature is the receiving clients' to verify (they
 * do; the spec asks no more of the server, and Synapse checks no more): placeholder keys are stored.
 */
export function checkDeviceKeys(dk, userId, deviceId) {
    if (dk.user_id !== userId)
        throw invalid("device_keys.user_id must be the user id of the access token");
    if (dk.device_id !== deviceId)
        throw invalid("device_keys.device_id must be the device id of the access token");
    if (!Array.isArray(dk.algorithms) || !dk.algorithms.every((a) => typeof a === "string"))
        throw invalid("device_keys.algorithms must be a list of strings");
    if (!isPlainObject(dk.keys) || !Object.values(dk.keys).every((k) => typeof k === "string"))
        throw invalid("device_keys.keys must map key ids to keys");
    const sigs = dk.signatures;
    if (!isPlainObject(sigs) || !Object.values(sigs).every((m) => isPlainObject(m) && Object.values(m).every((v) => typeof v === "string")))
        throw invalid("device_keys.signatures must map user ids to key ids to signatures");
    canonicalJson(dk); // M_BAD_JSON for values canonical JSON cannot carry
}
function splitKeyId(id, what) {
    const i = id.indexOf(":");
    if (i <= 0 || i === id.length - 1)
        throw invalid(`${what} key id ${JSON.stringify(id)} must be <algorithm>:<key id>`);
    return [id.slice(0, i), id.slice(i + 1)];
}
function checkKeyObject(v, id) {
    if (typeof v !== "string" && !isPlainObject(v))
        throw invalid(`Key ${id} must be a string or an object`);
    return canonicalJson(v);
}
/** Two one-time keys match when equal, signatures aside (as Synapse compares them). */
function sameOneTimeKey(a, b) {
    if (isPlainObject(a) && isPlainObject(b))
        return signedPart(a) === signedPart(b);
    return canonicalJson(a) === canonicalJson(b);
}
export async function uploadKeys(s, r, body) {
    const deviceId = requireDevice(r);
    const userId = r.userId;
    const dk = objectField(body, "device_keys");
    const otks = objectField(body, "one_time_keys") ?? {};
    const fallbacks = objectField(body, "fallback_keys") ?? {};
    if (dk)
        checkDeviceKeys(dk, userId, deviceId);
    const otkList = Object.entries(otks).map(([id, v]) => ({ id, parts: splitKeyId(id, "One-time"), value: v, json: checkKeyObject(v, id) }));
    const fbList = Object.entries(fallbacks).map(([id, v]) => ({ id, parts: splitKeyId(id, "Fallback"), value: v, json: checkKeyObject(v, id) }));
    const now = s.clock.now();
    const position = await s.storage.sql.transaction(async (tx) => {
        // Concurrent uploads of one device (clients retry) read and write the same rows: one at a time.
        await s.e2ee.lock(tx, `e2e_keys:${userId}:${deviceId}`);
        let keysChanged = false;
        if (dk) {
            const { unsigned: _u, ...stored } = dk;
            const json = canonicalJson(stored);
            const existing = await s.e2ee.deviceKeys(userId, deviceId, tx);
            if (existing !== undefined) {
                const old = JSON.parse(existing);
                if (canonicalJson(old.keys) !== canonicalJson(stored.keys))
                    throw invalid("This device already has different identity keys; log in as a new device to use new keys");
            }
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
                    if (!sameOneTimeKey(JSON.parse(old), k.value))
                        throw invalid(`One time key ${k.id} already exists with different content`);
                    continue;
                }
                await s.e2ee.insertOneTimeKey(tx, userId, deviceId, k.parts[0], k.parts[1], k.json, now);
                existing.set(k.id, k.json);
            }
        }
        for (const k of fbList) {
            const old = await s.e2ee.fallbackKey(tx, userId, deviceId, k.parts[0]);
            if (old && old.keyId === k.parts[1] && old.json === k.json)
                continue; // the same key keeps its used flag
            await s.e2ee.setFallbackKey(tx, userId, deviceId, k.parts[0], k.parts[1], k.json);
        }
        // Last: the stream position is taken (and ordered) at the end of the transaction.
        return keysChanged ? recordDeviceListChange(s, tx, userId, [deviceId]) : undefined;
    });
    if (position !== undefined)
        await announceDeviceListChange(s, userId, position);
    return { one_time_key_counts: await oneTimeKeyCounts(s, userId, deviceId) };
}
