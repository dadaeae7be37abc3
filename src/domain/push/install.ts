// Installs the push capability (called once per server by src/main.ts): the push_rules sync stream,
// unread counts on the joined rooms of every /sync response, the pushers' clean-up when devices or
// accounts go, and the gateway queues (started here, stopped on shutdown). The evaluation indexer itself
// is registered on the event pipeline by one line in src/main.ts.
import type { Services } from "../services.ts";
import { pushRulesProvider } from "../sync/providers/push-rules.ts";
import { deviceDeletedHooks } from "../devices/delete-devices.ts";
import { deactivationHooks } from "../accounts/deactivate.ts";
import { addUnreadCounts } from "./sync-counts.ts";

async function dropDevicePushers(s: Services, userId: string, deviceIds: string[]): Promise<void> {
  for (const p of await s.push.pushers.store.deleteOf(userId, deviceIds)) s.push.pushers.removed(p.userId, p.appId, p.pushkey);
}

async function dropUserPushers(s: Services, userId: string): Promise<void> {
  for (const p of await s.push.pushers.store.deleteOf(userId)) s.push.pushers.removed(p.userId, p.appId, p.pushkey);
}

export async function installPush(s: Services): Promise<void> {
  s.sync.register(pushRulesProvider);
  s.sync.decorators.push(addUnreadCounts);
  if (!deviceDeletedHooks.includes(dropDevicePushers)) deviceDeletedHooks.push(dropDevicePushers);
  if (!deactivationHooks.includes(dropUserPushers)) deactivationHooks.push(dropUserPushers);
  await s.push.pushers.start();
  s.onClose.push(() => s.push.pushers.close());
}
