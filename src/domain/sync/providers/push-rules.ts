// Slot of the push_rules stream: m.push_rules in the top-level account_data. A placeholder until its capability lands: position 0, adds
// nothing. The capability replaces it by declaring its provider `{ stream: "push_rules", current, collect }`
// in src/main.ts (`syncProviders`), and notifies `s.rooms.notifier.notify({ stream: "push_rules", position, userIds | roomIds })`
// after each committed change (see src/domain/sync/sync.ts).
import type { SyncProvider } from "../types.ts";

export const pushRulesProvider: SyncProvider = {
  stream: "push_rules",
  current: () => 0,
  collect: async () => false,
};
