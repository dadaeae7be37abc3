// Deletes devices with everything bound to them: access and refresh tokens, pending last-seen records,
// and (once E2EE lands) their keys and to-device messages. The one place devices die.
import type { Services } from "../services.ts";
import { invalidateUserTokens } from "../accounts/authenticate.ts";
import { runWithSettleHooks } from "../../storage/sql.ts";

/** Cleans up a device's data in the deletion's transaction (declared in src/main.ts). */
export type DeviceDeletionHook = (tx: Parameters<Parameters<Services["db"]["$transaction"]>[0]>[0], userId: string, deviceIds: string[], s: Services) => Promise<void>;
/** Runs once the deletion committed (notifications). */
export type DevicesDeletedHook = (s: Services, userId: string, deviceIds: string[]) => Promise<void>;

export async function deleteDevices(s: Services, userId: string, deviceIds: string[]): Promise<void> {
  if (deviceIds.length === 0) return;
  // Settle hooks: the hooks may allocate stream positions (device lists) inside this transaction.
  await runWithSettleHooks<Parameters<DeviceDeletionHook>[0], void>((fn) => s.db.$transaction(fn), async (tx) => {
    await s.sessions.deleteDevices(tx, userId, deviceIds);
    for (const hook of s.extensions.deviceDeleting) await hook(tx, userId, deviceIds, s);
  });
  for (const hook of s.extensions.devicesDeleted) await hook(s, userId, deviceIds);
  s.deviceActivity.forget(userId, deviceIds);
  await invalidateUserTokens(s, userId);
}
