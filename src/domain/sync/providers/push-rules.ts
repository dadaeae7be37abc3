// Sync provider of the push_rules stream: the user's whole ruleset as the `m.push_rules` event in the
// top-level account_data — on every initial sync, and on an incremental one when the user's rules changed
// in the range (as Synapse does). Spec: Client-Server API "Push Rules: Events".
import type { SyncProvider } from "../types.ts";
import { filterPlainEvents } from "../../filters/sync-filter.ts";
import { getRuleset } from "../../push/rules-api.ts";

export const pushRulesProvider: SyncProvider = {
  stream: "push_rules",
  current: (s) => s.push.rules.store.currentPosition(),
  async collect(ctx, from, to) {
    const userId = ctx.requester.userId;
    if (from !== undefined) {
      if (from >= to) return false;
      const last = await ctx.s.push.rules.store.lastChange(userId);
      if (last === undefined || last <= from || last > to) return false;
    }
    const events = filterPlainEvents(ctx.filter.account_data, [{ type: "m.push_rules", content: { global: await getRuleset(ctx.s, userId) } }]);
    ctx.result.account_data.events.push(...events);
    return from !== undefined && events.length > 0;
  },
};
