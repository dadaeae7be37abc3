import { MatrixError, badJson } from "../../domain/errors.js";
import { clientRoute } from "../http.js";
import { getDevice, listDevices } from "../../domain/devices/device-info.js";
import { updateDevice } from "../../domain/devices/update-device.js";
import { deleteOwnDevices } from "../../domain/devices/delete-own-devices.js";
/** The JSON body; an absent or unparsable one counts as {} (old clients send DELETE without a body). */
function lenientBody(c) {
    try {
        return c.bodyOrEmpty();
    }
    catch (err) {
        if (err instanceof MatrixError && err.errcode === "M_NOT_JSON")
            return {};
        throw err;
    }
}
const uiaRequest = (c, body) => ({ path: c.req.originalUrl, method: c.req.method, body, clientIp: c.clientIp });
export function deviceRoutes(app, s) {
    clientRoute(app, s, {
        method: "GET", path: "/devices", auth: "token",
        handler: async (c) => ({ devices: await listDevices(s, c.requester) }),
    });
    clientRoute(app, s, {
        method: "GET", path: "/devices/:deviceId", auth: "token",
        handler: (c) => getDevice(s, c.requester, c.params.deviceId),
    });
    clientRoute(app, s, {
        method: "PUT", path: "/devices/:deviceId", auth: "token",
        handler: async (c) => {
            const name = c.body().display_name;
            if (name !== undefined && name !== null && typeof name !== "string")
                throw badJson("display_name must be a string");
            const { created } = await updateDevice(s, c.requester, c.params.deviceId, name ?? undefined);
            if (created)
                c.reply.code(201);
            return {};
        },
    });
    clientRoute(app, s, {
        method: "DELETE", path: "/devices/:deviceId", auth: "token", op: "deleteDevices",
        handler: async (c) => {
            const body = lenientBody(c);
            await deleteOwnDevices(s, c.requester, [c.params.deviceId], uiaRequest(c, body));
            return {};
        },
    });
    clientRoute(app, s, {
        method: "POST", path: "/delete_devices", auth: "token", op: "deleteDevices",
        handler: async (c) => {
            const body = lenientBody(c);
            const ids = body.devices;
            if (!Array.isArray(ids) || !ids.every((d) => typeof d === "string"))
                throw badJson("devices must be a list of device ids");
            await deleteOwnDevices(s, c.requester, ids, uiaRequest(c, body));
            return {};
        },
    });
}
