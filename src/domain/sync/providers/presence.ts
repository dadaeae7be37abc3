// Slot of the presence stream: top-level presence.events. A placeholder until its capability lands: position 0, adds
// nothing. The capability replaces it with `s.sync.register({ stream: "presence", current, collect })` from
// its install function, and notifies `s.rooms.notifier.notify({ stream: "presence", position, userIds | roomIds })`
// after each committed change (see src/domain/sync/sync.ts).
import type { SyncProvider } from "../types.ts";

export const presenceProvider: SyncProvider = {
  stream: "presence",
  current: () => 0,
  collect: async () => false,
};
