// PUT /devices/{deviceId}: rename one of the requester's devices; application services may also create
// a device this way (spec v1.17). Spec: Client-Server API "Device management". Names are capped at
// 100 characters like Synapse (the spec sets no limit).
import { MatrixError, notFound } from "../errors.js";
import { checkStorableText } from "../text.js";
export const MAX_DEVICE_DISPLAY_NAME_LEN = 100;
/** Runs the update hooks (also called after login and registration made a device). */
export async function runDeviceUpdateHooks(s, userId, deviceId, created) {
    for (const hook of s.extensions.deviceUpdated)
        await hook(s, userId, deviceId, created);
}
/**
 * Sets the display name of `deviceId` (undefined leaves it unchanged). Returns `created: true` when an
 * application service created the device. Unknown devices of ordinary users are M_NOT_FOUND.
 */
export async function updateDevice(s, r, deviceId, displayName) {
    if (displayName !== undefined && [...displayName].length > MAX_DEVICE_DISPLAY_NAME_LEN)
        throw new MatrixError("M_TOO_LARGE", `Device display name is too long (max ${MAX_DEVICE_DISPLAY_NAME_LEN})`, 400);
    if (displayName !== undefined)
        checkStorableText(displayName, "display_name");
    let created = false;
    if (r.appserviceId) {
        created = await s.db.$transaction(async (tx) => {
            const existed = (await s.sessions.getDevice(r.userId, deviceId, tx)) !== null;
            await s.sessions.upsertDevice(tx, r.userId, deviceId, displayName, s.clock.now());
            return !existed;
        });
    }
    else if (displayName === undefined) {
        if (!(await s.sessions.getDevice(r.userId, deviceId)))
            throw notFound("No device found");
        return { created: false };
    }
    else if (!(await s.sessions.setDeviceDisplayName(r.userId, deviceId, displayName))) {
        throw notFound("No device found");
    }
    await runDeviceUpdateHooks(s, r.userId, deviceId, created);
    return { created };
}
