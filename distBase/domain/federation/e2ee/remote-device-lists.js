import { canonicalJson } from "../../canonical-json.js";
import { fedPath } from "../../../federation/client.js";
import { isPlainObject } from "../../e2ee/json.js";
import { announceDeviceListChange, recordDeviceListChange } from "../../e2ee/device-lists.js";
import { serverOfUser } from "../room-servers.js";
import { remoteCrossSigning, signedByMaster, validCrossSigningKey, validDeviceKeys } from "./remote-key-shapes.js";
import { cachedDeviceLists, deleteRemoteDeviceKeys, dropCachedDeviceList, replaceRemoteDeviceKeys, setCachedStreamId } from "./remote-device-store.js";
/** Most devices taken from one resync answer. */
const MAX_DEVICES = 1000;
const RESYNC_TIMEOUT_MS = 30_000;
/** Per server process: the tail of each remote user's queue of updates (applied one at a time). */
const queues = new WeakMap();
function serialized(s, userId, fn) {
    let m = queues.get(s);
    if (!m)
        queues.set(s, (m = new Map()));
    const next = (m.get(userId) ?? Promise.resolve()).then(fn, fn);
    m.set(userId, next);
    const tail = next.catch(() => { });
    void tail.then(() => {
        if (m.get(userId) === next)
            m.delete(userId);
    });
    return next;
}
/** Whether one of our users shares a joined room with `userId` (we track their device list then). */
async function tracked(s, userId) {
    for (const u of await s.e2ee.usersSharingRoomsWith(userId))
        if (serverOfUser(u) === s.config.server_name)
            return true;
    return false;
}
/** Applies `apply` and records a change of the remote user's devices on our stream in one transaction; announces it. */
async function moveStream(s, userId, deviceIds, apply) {
    const pos = await s.storage.sql.transaction(async (tx) => {
        await apply(tx);
        return recordDeviceListChange(s, tx, userId, deviceIds);
    });
    await announceDeviceListChange(s, userId, pos);
}
export function applyDeviceListUpdate(s, origin, u) {
    return serialized(s, u.userId, async () => {
        if (!(await tracked(s, u.userId))) {
            if ((await cachedDeviceLists(s.storage.sql, [u.userId])).size > 0)
                await s.storage.sql.transaction((tx) => dropCachedDeviceList(tx, u.userId));
            return;
        }
        const held = (await cachedDeviceLists(s.storage.sql, [u.userId])).get(u.userId);
        if (held !== undefined && u.streamId <= held) {
            // Seen already (a resync covered it), or the stream going backwards: nothing changes.
            s.log.info({ origin, userId: u.userId, streamId: u.streamId, held }, "m.device_list_update not after the stream_id held dropped");
            return;
        }
        if (held !== undefined && u.prevIds.every((p) => p <= held)) {
            const now = s.clock.now();
            await moveStream(s, u.userId, [u.deviceId], async (tx) => {
                if (u.deleted)
                    await deleteRemoteDeviceKeys(tx, u.userId, u.deviceId);
                else if (u.keys)
                    await s.e2ee.setDeviceKeys(tx, u.userId, u.deviceId, canonicalJson(u.keys), now);
                await setCachedStreamId(tx, u.userId, u.streamId, now);
            });
            return;
        }
        await resync(s, origin, u.userId);
    });
}
/** Fetches the user's whole device list from their server and replaces our copy (dropped if that fails). */
async function resync(s, origin, userId) {
    let answer;
    try {
        answer = await s.federation.getJson(origin, fedPath `/_matrix/federation/v1/user/devices/${userId}`, undefined, { timeoutMs: RESYNC_TIMEOUT_MS });
    }
    catch (err) {
        s.log.info({ origin, userId, err: err instanceof Error ? err.message : String(err) }, "device list resync failed: keys of this user will be asked of their server");
        answer = undefined;
    }
    const parsed = parseDevices(answer, userId);
    if (!parsed) {
        if (answer !== undefined)
            s.log.info({ origin, userId }, "invalid device list answer dropped");
        // Clients still hear of the change and query; without a copy here, their query goes to the server.
        await moveStream(s, userId, [""], (tx) => dropCachedDeviceList(tx, userId));
        return;
    }
    const now = s.clock.now();
    await moveStream(s, userId, [""], async (tx) => {
        await replaceRemoteDeviceKeys(tx, userId, parsed.devices, now);
        await tx.run(`DELETE FROM e2e_cross_signing_keys WHERE user_id = ?`, [userId]);
        if (parsed.master)
            await s.e2ee.setCrossSigningKey(tx, userId, "master", canonicalJson(parsed.master), now);
        if (parsed.selfSigning)
            await s.e2ee.setCrossSigningKey(tx, userId, "self_signing", canonicalJson(parsed.selfSigning), now);
        await setCachedStreamId(tx, userId, parsed.streamId, now);
    });
}
/** A GET /user/devices answer about `userId`, checked: only valid keys are kept. */
function parseDevices(answer, userId) {
    if (!isPlainObject(answer) || answer.user_id !== userId || !Array.isArray(answer.devices) || answer.devices.length > MAX_DEVICES)
        return undefined;
    const streamId = answer.stream_id;
    if (typeof streamId !== "number" || !Number.isSafeInteger(streamId) || streamId < 0)
        return undefined;
    const devices = new Map();
    for (const d of answer.devices) {
        if (!isPlainObject(d) || typeof d.device_id !== "string" || d.device_id === "")
            continue;
        if (validDeviceKeys(d.keys, userId, d.device_id))
            devices.set(d.device_id, canonicalJson(d.keys));
    }
    return { streamId, devices, ...remoteCrossSigning(userId, answer.master_key, answer.self_signing_key) };
}
/**
 * A user's new master and/or self-signing key: stored when we keep their device list (a self-signing key
 * only when signed by the master key, the new one or the one we hold); either way the stream moves.
 */
export function applySigningKeyUpdate(s, userId, master, selfSigning) {
    return serialized(s, userId, async () => {
        if (!(await tracked(s, userId)))
            return;
        if (master !== undefined && validCrossSigningKey(master, userId, "master") === undefined)
            return void s.log.info({ userId }, "m.signing_key_update with an invalid master key dropped");
        const held = (await cachedDeviceLists(s.storage.sql, [userId])).has(userId);
        const now = s.clock.now();
        await moveStream(s, userId, [""], async (tx) => {
            if (!held)
                return;
            let masterPub = master !== undefined ? validCrossSigningKey(master, userId, "master") : undefined;
            if (masterPub === undefined) {
                const stored = (await s.e2ee.crossSigningKeysOf([userId], tx)).get(userId)?.get("master");
                masterPub = stored ? validCrossSigningKey(JSON.parse(stored), userId, "master") : undefined;
            }
            if (master !== undefined) {
                await s.e2ee.setCrossSigningKey(tx, userId, "master", canonicalJson(master), now);
                // A new master key: the old self-signing key is no longer signed by it.
                if (selfSigning === undefined)
                    await tx.run(`DELETE FROM e2e_cross_signing_keys WHERE user_id = ? AND key_type = 'self_signing'`, [userId]);
            }
            if (selfSigning !== undefined && masterPub !== undefined && validCrossSigningKey(selfSigning, userId, "self_signing") !== undefined && signedByMaster(selfSigning, userId, masterPub))
                await s.e2ee.setCrossSigningKey(tx, userId, "self_signing", canonicalJson(selfSigning), now);
        });
    });
}
/**
 * A remote user joining a room here (declared in src/main.ts, `commitListeners`): the copy of their device
 * list may have missed updates while no room was shared, so it is dropped; queries go to their server
 * until an update from it builds a new copy.
 */
export const forgetRejoinedDeviceLists = (s, c) => {
    const joined = new Set();
    for (const e of c.events) {
        const p = e.pdu;
        if (p.type !== "m.room.member" || typeof p.state_key !== "string" || e.outlier || e.rejectedReason !== null)
            continue;
        if (p.content.membership !== "join")
            continue;
        const server = serverOfUser(p.state_key);
        if (server && server !== s.config.server_name)
            joined.add(p.state_key);
    }
    if (joined.size === 0)
        return;
    void (async () => {
        const held = await cachedDeviceLists(s.storage.sql, [...joined]);
        for (const userId of held.keys())
            await serialized(s, userId, () => s.storage.sql.transaction((tx) => dropCachedDeviceList(tx, userId)));
    })().catch((err) => s.log.warn({ err }, "could not drop copies of remote device lists"));
};
