// Sync provider of the device_lists stream: `device_lists.changed` / `.left` between the since and the
// next token (device-list positions for key changes, room-event positions for membership changes that
// make users start or stop sharing a room; nothing on an initial sync), and, in every response to a
// device, `device_one_time_keys_count` (signed_curve25519 always present) and
// `device_unused_fallback_key_types` — sent always, as the spec says and Synapse does, but they never
// end a long poll by themselves. Spec: Client-Server API "Extensions to /sync" (End-to-End Encryption).
import type { SyncProvider } from "../types.ts";
import { currentDeviceListPosition, deviceListChanges, oneTimeKeyCounts, unusedFallbackKeyTypes } from "../../e2ee/sync-data.ts";

export const deviceListsProvider: SyncProvider = {
  stream: "device_lists",
  current: (s) => currentDeviceListPosition(s),
  async collect(ctx, from, to) {
    const { s, requester } = ctx;
    if (requester.deviceId !== null) {
      const [counts, fallback] = await Promise.all([oneTimeKeyCounts(s, requester.userId, requester.deviceId), unusedFallbackKeyTypes(s, requester.userId, requester.deviceId)]);
      ctx.result.device_one_time_keys_count = counts;
      ctx.result.device_unused_fallback_key_types = fallback;
    }
    if (from === undefined || ctx.since === undefined) return false;
    const { changed, left } = await deviceListChanges(s, requester.userId, { deviceLists: from, events: ctx.since.events }, { deviceLists: to, events: ctx.to.events });
    if (changed.length === 0 && left.length === 0) return false;
    ctx.result.device_lists = { changed, left };
    return true;
  },
};
