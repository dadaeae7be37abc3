import { filterPlainEvents } from "../../filters/sync-filter.js";
import { getRuleset } from "../../push/rules-api.js";
export const pushRulesProvider = {
    stream: "push_rules",
    current: (s) => s.push.rules.store.currentPosition(),
    async collect(ctx, from, to) {
        const userId = ctx.requester.userId;
        if (from !== undefined) {
            if (from >= to)
                return false;
            const last = await ctx.s.push.rules.store.lastChange(userId);
            if (last === undefined || last <= from || last > to)
                return false;
        }
        const events = filterPlainEvents(ctx.filter.account_data, [{ type: "m.push_rules", content: { global: await getRuleset(ctx.s, userId) } }]);
        ctx.result.account_data.events.push(...events);
        return from !== undefined && events.length > 0;
    },
};
