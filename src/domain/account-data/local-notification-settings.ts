// MSC3890 local notification settings (experimental_features.msc3890_enabled, as Synapse): a device's
// settings are the global account data `org.matrix.msc3890.local_notification_settings.<device_id>`, and
// deleting the device deletes them (MSC3391's deletion: incremental syncs show `{}`, GET answers 404).
import type { DevicesDeletedHook } from "../devices/delete-devices.ts";
import { removeAccountData } from "./account-data.ts";

export const LOCAL_NOTIFICATION_SETTINGS_PREFIX = "org.matrix.msc3890.local_notification_settings.";

/** After devices were deleted (src/main.ts `devicesDeleted`): their local notification settings go too. */
export const dropLocalNotificationSettings: DevicesDeletedHook = async (s, userId, deviceIds) => {
  if (!s.config.experimental_features.msc3890_enabled) return;
  for (const deviceId of deviceIds) await removeAccountData(s, userId, "", LOCAL_NOTIFICATION_SETTINGS_PREFIX + deviceId);
};
