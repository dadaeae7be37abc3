// Deletes devices with everything bound to them: access and refresh tokens, pending last-seen records,
// and (once E2EE lands) their keys and to-device messages. The one place devices die.
import type { Services } from "../services.ts";
import { invalidateUserTokens } from "../accounts/authenticate.ts";
import { runWithSettleHooks } from "../../storage/sql.ts";

/** Hooks later capabilities register to clean up a device's data in the same transaction. */
export type DeviceDeletionHook = (tx: Parameters<Parameters<Services["db"]["$transaction"]>[0]>[0], userId: string, deviceIds: string[], s: Services) => Promise<void>;
export const deviceDeletionHooks: DeviceDeletionHook[] = [];
/** Hooks that run once the deletion committed (notifications). */
export const deviceDeletedHooks: ((s: Services, userId: string, deviceIds: string[]) => Promise<void>)[] = [];

export async function deleteDevices(s: Services, userId: string, deviceIds: string[]): Promise<void> {
  if (deviceIds.length === 0) return;
  // Settle hooks: the hooks may allocate stream positions (device lists) inside this transaction.
  await runWithSettleHooks<Parameters<DeviceDeletionHook>[0], void>((fn) => s.db.$transaction(fn), async (tx) => {
    await s.sessions.deleteDevices(tx, userId, deviceIds);
    for (const hook of deviceDeletionHooks) await hook(tx, userId, deviceIds, s);
  });
  for (const hook of deviceDeletedHooks) await hook(s, userId, deviceIds);
  s.deviceActivity.forget(userId, deviceIds);
  invalidateUserTokens(s, userId);
}
