// Slot of the typing stream: m.typing events in rooms.join.<id>.ephemeral. A placeholder until its capability lands: position 0, adds
// nothing. The capability replaces it with `s.sync.register({ stream: "typing", current, collect })` from
// its install function, and notifies `s.rooms.notifier.notify({ stream: "typing", position, userIds | roomIds })`
// after each committed change (see src/domain/sync/sync.ts).
import type { SyncProvider } from "../types.ts";

export const typingProvider: SyncProvider = {
  stream: "typing",
  current: () => 0,
  collect: async () => false,
};
