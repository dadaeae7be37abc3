import { invalidateUserTokens } from "../accounts/authenticate.js";
import { runWithSettleHooks } from "../../storage/sql.js";
export async function deleteDevices(s, userId, deviceIds) {
    if (deviceIds.length === 0)
        return;
    // Settle hooks: the hooks may allocate stream positions (device lists) inside this transaction.
    await runWithSettleHooks((fn) => s.db.$transaction(fn), async (tx) => {
        await s.sessions.deleteDevices(tx, userId, deviceIds);
        for (const hook of s.extensions.deviceDeleting)
            await hook(tx, userId, deviceIds, s);
    });
    for (const hook of s.extensions.devicesDeleted)
        await hook(s, userId, deviceIds);
    s.deviceActivity.forget(userId, deviceIds);
    invalidateUserTokens(s, userId);
}
