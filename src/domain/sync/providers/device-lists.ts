// Slot of the device_lists stream: device_lists.changed/left, device_one_time_keys_count and device_unused_fallback_key_types. A placeholder until its capability lands: position 0, adds
// nothing. The capability replaces it with `s.sync.register({ stream: "device_lists", current, collect })` from
// its install function, and notifies `s.rooms.notifier.notify({ stream: "device_lists", position, userIds | roomIds })`
// after each committed change (see src/domain/sync/sync.ts).
import type { SyncProvider } from "../types.ts";

export const deviceListsProvider: SyncProvider = {
  stream: "device_lists",
  current: () => 0,
  collect: async () => false,
};
