// DELETE /devices/{deviceId} and POST /delete_devices: the requester removes some of their own devices
// after re-authenticating (UIA, m.login.password); application services skip UIA (spec v1.17).
// Unknown device ids are ignored, as Synapse does. Spec: Client-Server API "Device management".
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { checkUia, finishUia, type UiaRequest } from "../uia/uia.ts";
import { deleteDevices } from "./delete-devices.ts";
import { requireNotGuest } from "../accounts/guest-access.ts";
import { reauthUia } from "../uia/flows.ts";
import { refuseWhenDelegated } from "../oauth-delegation/refusals.ts";

export async function deleteOwnDevices(s: Services, r: Requester, deviceIds: string[], req: UiaRequest): Promise<void> {
  refuseWhenDelegated(s);
  requireNotGuest(r, "deleteDevices");
  const uia = r.appserviceId
    ? undefined
    : await checkUia(s, { ...req, requester: r }, await reauthUia(s, r, deviceIds.length === 1
        ? { description: `sign out the device ${deviceIds[0]}`, action: "org.matrix.device_delete", deviceId: deviceIds[0] }
        : { description: "remove device(s) from your account", action: "org.matrix.devices_list" }));
  await deleteDevices(s, r.userId, [...new Set(deviceIds)]);
  if (uia) await finishUia(s, uia);
}
