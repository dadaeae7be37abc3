// The device-list stream: records that a user's devices or cross-signing keys changed, and tells the
// notifier who should hear of it (the user and everyone sharing a joined room with them). Its device hooks
// (declared in src/main.ts): a new, renamed or deleted device moves the stream; a deleted device's keys,
// one-time and fallback keys, signatures and pending to-device messages go in the deletion transaction;
// a deactivated account's cross-signing keys and key backups go after its devices.
// Spec: Client-Server API "Tracking the device list for a user".
import type { Services } from "../services.ts";
import type { SqlExecutor } from "../../storage/sql.ts";
import type { DeviceDeletionHook, DevicesDeletedHook } from "../devices/delete-devices.ts";
import type { DeviceUpdateHook } from "../devices/update-device.ts";
import type { DeactivationHook } from "../accounts/deactivate.ts";
import { prismaExecutor } from "../store/e2ee.ts";

/**
 * Appends changes of `userId`'s devices (or cross-signing key ids) to the stream inside `tx`. `onlyFor`
 * limits who hears of it (user-signing keys, signatures of other users' keys). Returns the new
 * position; call `announceDeviceListChange` once the transaction committed.
 */
export function recordDeviceListChange(s: Services, tx: SqlExecutor, userId: string, deviceIds: readonly string[], onlyFor: string | null = null): Promise<number> {
  return s.e2ee.appendDeviceListChanges(tx, userId, deviceIds.length > 0 ? deviceIds : [""], onlyFor);
}

/** Wakes the readers concerned by a committed device-list change. */
export async function announceDeviceListChange(s: Services, userId: string, position: number, onlyFor: string | null = null): Promise<void> {
  const userIds = onlyFor !== null ? [onlyFor] : [...new Set([userId, ...(await s.e2ee.usersSharingRoomsWith(userId))])];
  s.rooms.notifier.notify({ stream: "device_lists", position, userIds });
}

/** Records and announces a change in its own transaction. */
export async function deviceListChanged(s: Services, userId: string, deviceIds: readonly string[], onlyFor: string | null = null): Promise<number> {
  const pos = await s.storage.sql.transaction((tx) => recordDeviceListChange(s, tx, userId, deviceIds, onlyFor));
  await announceDeviceListChange(s, userId, pos, onlyFor);
  return pos;
}

/** In the deletion's transaction: the devices' E2EE data goes, and the device-list stream moves. */
export const deleteDeviceKeys: DeviceDeletionHook = async (tx, userId, deviceIds, s) => {
  const ex = prismaExecutor(tx, s.storage.sql.dialect);
  await s.e2ee.deleteDeviceData(ex, userId, deviceIds);
  await recordDeviceListChange(s, ex, userId, deviceIds);
};

/** After the deletion: who shares a room with the user hears of it. */
export const announceDeletedDevices: DevicesDeletedHook = async (s: Services, userId: string): Promise<void> => {
  await announceDeviceListChange(s, userId, await s.e2ee.currentDeviceListPosition());
};

/** A new or renamed device moves the device-list stream. */
export const announceDeviceUpdate: DeviceUpdateHook = async (s, userId, deviceId) => {
  await deviceListChanged(s, userId, [deviceId]);
};

/**
 * After deactivation (its devices are gone already): the cross-signing keys and key backups go too, and
 * whoever shares a room with the user hears that their keys changed.
 */
export const dropAccountKeys: DeactivationHook = async (s, userId) => {
  const pos = await s.storage.sql.transaction(async (tx) => {
    await s.e2ee.deleteAccountKeys(tx, userId);
    return recordDeviceListChange(s, tx, userId, []);
  });
  await announceDeviceListChange(s, userId, pos);
};
