// PUT /devices/{deviceId}: rename one of the requester's devices; application services may also create
// a device this way, answered 201 (spec v1.17, MSC4190; Synapse allows it to every service, with or
// without the registration's `io.element.msc4190`). Spec: Client-Server API "Device management". Names
// are capped at 100 characters like Synapse (the spec sets no limit); a created device's id follows
// login's rule (1 to 255 characters, no NUL: Synapse takes any string).
import { MatrixError, notFound } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { checkStorableText } from "../text.ts";

export const MAX_DEVICE_DISPLAY_NAME_LEN = 100;

/** Learns of renamed or created devices (device list updates; declared in src/main.ts). */
export type DeviceUpdateHook = (s: Services, userId: string, deviceId: string, created: boolean) => Promise<void>;

/** Runs the update hooks (also called after login and registration made a device). */
export async function runDeviceUpdateHooks(s: Services, userId: string, deviceId: string, created: boolean): Promise<void> {
  for (const hook of s.extensions.deviceUpdated) await hook(s, userId, deviceId, created);
}

/**
 * Sets the display name of `deviceId` (undefined leaves it unchanged). Returns `created: true` when an
 * application service created the device. Unknown devices of ordinary users are M_NOT_FOUND.
 */
export async function updateDevice(s: Services, r: Requester, deviceId: string, displayName: string | undefined): Promise<{ created: boolean }> {
  if (displayName !== undefined && [...displayName].length > MAX_DEVICE_DISPLAY_NAME_LEN)
    throw new MatrixError("M_TOO_LARGE", `Device display name is too long (max ${MAX_DEVICE_DISPLAY_NAME_LEN})`, 400);

  if (displayName !== undefined) checkStorableText(displayName, "display_name");
  let created = false;
  if (r.appserviceId) {
    checkNewDeviceId(deviceId);
    created = await s.db.$transaction(async (tx) => {
      const existed = (await s.sessions.getDevice(r.userId, deviceId, tx)) !== null;
      await s.sessions.upsertDevice(tx, r.userId, deviceId, displayName, s.clock.now());
      return !existed;
    });
  } else if (displayName === undefined) {
    if (!(await s.sessions.getDevice(r.userId, deviceId))) throw notFound("No device found");
    return { created: false };
  } else if (!(await s.sessions.setDeviceDisplayName(r.userId, deviceId, displayName))) {
    throw notFound("No device found");
  }
  await runDeviceUpdateHooks(s, r.userId, deviceId, created);
  return { created };
}

/** A device id a service may create: what login accepts for `device_id` (1 to 255 characters), storable. */
function checkNewDeviceId(deviceId: string): void {
  if (deviceId.length === 0 || deviceId.length > 255) throw new MatrixError("M_INVALID_PARAM", "deviceId must be 1 to 255 characters", 400);
  checkStorableText(deviceId, "deviceId");
}
