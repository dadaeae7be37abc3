import { prismaExecutor } from "../store/e2ee.js";
/**
 * Appends changes of `userId`'s devices (or cross-signing key ids) to the stream inside `tx`. `onlyFor`
 * limits who hears of it (user-signing keys, signatures of other users' keys). Returns the new
 * position; call `announceDeviceListChange` once the transaction committed.
 */
export function recordDeviceListChange(s, tx, userId, deviceIds, onlyFor = null) {
    return s.e2ee.appendDeviceListChanges(tx, userId, deviceIds.length > 0 ? deviceIds : [""], onlyFor);
}
/** Wakes the readers concerned by a committed device-list change. */
export async function announceDeviceListChange(s, userId, position, onlyFor = null) {
    const userIds = onlyFor !== null ? [onlyFor] : [...new Set([userId, ...(await s.e2ee.usersSharingRoomsWith(userId))])];
    s.rooms.notifier.notify({ stream: "device_lists", position, userIds });
}
/** Records and announces a change in its own transaction. */
export async function deviceListChanged(s, userId, deviceIds, onlyFor = null) {
    const pos = await s.storage.sql.transaction((tx) => recordDeviceListChange(s, tx, userId, deviceIds, onlyFor));
    await announceDeviceListChange(s, userId, pos, onlyFor);
    return pos;
}
/** In the deletion's transaction: the devices' E2EE data goes, and the device-list stream moves. */
export const deleteDeviceKeys = async (tx, userId, deviceIds, s) => {
    const ex = prismaExecutor(tx, s.storage.sql.dialect);
    await s.e2ee.deleteDeviceData(ex, userId, deviceIds);
    await recordDeviceListChange(s, ex, userId, deviceIds);
};
/** After the deletion: who shares a room with the user hears of it. */
export const announceDeletedDevices = async (s, userId) => {
    await announceDeviceListChange(s, userId, await s.e2ee.currentDeviceListPosition());
};
/** A new or renamed device moves the device-list stream. */
export const announceDeviceUpdate = async (s, userId, deviceId) => {
    await deviceListChanged(s, userId, [deviceId]);
};
/**
 * After deactivation (its devices are gone already): the cross-signing keys and key backups go too, and
 * whoever shares a room with the user hears that their keys changed.
 */
export const dropAccountKeys = async (s, userId) => {
    const pos = await s.storage.sql.transaction(async (tx) => {
        await s.e2ee.deleteAccountKeys(tx, userId);
        return recordDeviceListChange(s, tx, userId, []);
    });
    await announceDeviceListChange(s, userId, pos);
};
