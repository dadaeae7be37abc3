import { checkUia, finishUia } from "../uia/uia.js";
import { deleteDevices } from "./delete-devices.js";
import { requireNotGuest } from "../accounts/guest-access.js";
import { reauthFlows } from "../uia/flows.js";
export async function deleteOwnDevices(s, r, deviceIds, req) {
    requireNotGuest(r, "deleteDevices");
    const uia = r.appserviceId
        ? undefined
        : await checkUia(s, { ...req, requester: r }, { flows: await reauthFlows(s, r.userId), description: "remove device(s) from your account" });
    await deleteDevices(s, r.userId, [...new Set(deviceIds)]);
    if (uia)
        await finishUia(s, uia);
}
