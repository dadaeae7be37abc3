// Slot of the to_device stream: top-level to_device.events (and their deletion once the next token is used). A placeholder until its capability lands: position 0, adds
// nothing. The capability replaces it with `s.sync.register({ stream: "to_device", current, collect })` from
// its install function, and notifies `s.rooms.notifier.notify({ stream: "to_device", position, userIds | roomIds })`
// after each committed change (see src/domain/sync/sync.ts).
import type { SyncProvider } from "../types.ts";

export const toDeviceProvider: SyncProvider = {
  stream: "to_device",
  current: () => 0,
  collect: async () => false,
};
