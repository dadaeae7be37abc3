// Slot of the receipts stream: m.receipt events in rooms.join.<id>.ephemeral. A placeholder until its capability lands: position 0, adds
// nothing. The capability replaces it with `s.sync.register({ stream: "receipts", current, collect })` from
// its install function, and notifies `s.rooms.notifier.notify({ stream: "receipts", position, userIds | roomIds })`
// after each committed change (see src/domain/sync/sync.ts).
import type { SyncProvider } from "../types.ts";

export const receiptsProvider: SyncProvider = {
  stream: "receipts",
  current: () => 0,
  collect: async () => false,
};
