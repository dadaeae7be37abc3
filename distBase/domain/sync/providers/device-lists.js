import { currentDeviceListPosition, deviceListChanges, oneTimeKeyCounts, unusedFallbackKeyTypes } from "../../e2ee/sync-data.js";
export const deviceListsProvider = {
    stream: "device_lists",
    current: (s) => currentDeviceListPosition(s),
    async collect(ctx, from, to) {
        const { s, requester } = ctx;
        if (requester.deviceId !== null) {
            const [counts, fallback] = await Promise.all([oneTimeKeyCounts(s, requester.userId, requester.deviceId), unusedFallbackKeyTypes(s, requester.userId, requester.deviceId)]);
            ctx.result.device_one_time_keys_count = counts;
            ctx.result.device_unused_fallback_key_types = fallback;
        }
        if (from === undefined || ctx.since === undefined)
            return false;
        const { changed, left } = await deviceListChanges(s, requester.userId, { deviceLists: from, events: ctx.since.events }, { deviceLists: to, events: ctx.to.events });
        if (changed.length === 0 && left.length === 0)
            return false;
        ctx.result.device_lists = { changed, left };
        return true;
    },
};
