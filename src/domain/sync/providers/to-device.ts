// Sync provider of the to_device stream: the requesting device's send-to-device messages (top-level
// `to_device.events`), oldest first, at most TO_DEVICE_LIMIT per response. A since-token whose to_device
// position covers earlier messages acknowledges them: they are deleted before reading (a client that
// repeats an older since-token gets the same messages again) — unless the read is a live reader's own
// continuation, which acknowledges nothing (ctx.acknowledgeToDevice). When more messages wait than one response
// carries, next_batch's to_device position is the last one delivered, so the next sync continues there.
// Spec: Client-Server API "Send-to-Device messaging" ("Extensions to /sync").
import type { SyncProvider } from "../types.ts";
import { ackToDevice, toDeviceFor } from "../../e2ee/to-device.ts";
import { currentToDevicePosition } from "../../e2ee/sync-data.ts";

export const TO_DEVICE_LIMIT = 100;

export const toDeviceProvider: SyncProvider = {
  stream: "to_device",
  current: (s) => currentToDevicePosition(s),
  async collect(ctx, from, to) {
    const { s, requester } = ctx;
    if (requester.deviceId === null) return false;
    const since = from ?? 0;
    if (since > 0 && ctx.acknowledgeToDevice) await ackToDevice(s, requester.userId, requester.deviceId, since);
    if (since >= to) return false;
    const page = await toDeviceFor(s, requester.userId, requester.deviceId, since, TO_DEVICE_LIMIT, to);
    if (page.messages.length === 0) return false;
    ctx.result.to_device = { events: page.messages as unknown as Record<string, unknown>[] };
    if (page.limited) ctx.to.to_device = page.position;
    return true;
  },
};
