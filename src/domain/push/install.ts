// The push capability's parts that are not the indexer (src/main.ts declares each): pushers go with their
// device or account, and the gateway queues run as a background task (started with the server, stopped
// on shutdown). Spec: Client-Server API "Push Notifications" ("Pushers").
import type { Services } from "../services.ts";
import type { DevicesDeletedHook } from "../devices/delete-devices.ts";
import type { DeactivationHook } from "../accounts/deactivate.ts";
import type { BackgroundTask } from "../extensions.ts";

export const dropDevicePushers: DevicesDeletedHook = async (s, userId, deviceIds) => {
  for (const p of await s.push.pushers.store.deleteOf(userId, deviceIds)) s.push.pushers.removed(p.userId, p.appId, p.pushkey);
};

export const dropUserPushers: DeactivationHook = async (s, userId) => {
  for (const p of await s.push.pushers.store.deleteOf(userId)) s.push.pushers.removed(p.userId, p.appId, p.pushkey);
};

/** The gateway queues: each pusher's queue resumes from its stored position. */
export const pushGateways: BackgroundTask = (s: Services, fence) => {
  const started = s.push.pushers.start(fence);
  return async () => {
    await started.catch(() => undefined);
    await s.push.pushers.close();
  };
};
