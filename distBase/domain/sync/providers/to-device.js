import { ackToDevice, toDeviceFor } from "../../e2ee/to-device.js";
import { currentToDevicePosition } from "../../e2ee/sync-data.js";
export const TO_DEVICE_LIMIT = 100;
export const toDeviceProvider = {
    stream: "to_device",
    current: (s) => currentToDevicePosition(s),
    async collect(ctx, from, to) {
        const { s, requester } = ctx;
        if (requester.deviceId === null)
            return false;
        const since = from ?? 0;
        if (since > 0)
            await ackToDevice(s, requester.userId, requester.deviceId, since);
        if (since >= to)
            return false;
        const page = await toDeviceFor(s, requester.userId, requester.deviceId, since, TO_DEVICE_LIMIT, to);
        if (page.messages.length === 0)
            return false;
        ctx.result.to_device = { events: page.messages };
        if (page.limited)
            ctx.to.to_device = page.position;
        return true;
    },
};
