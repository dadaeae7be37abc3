import { filterPlainEvents } from "../../filters/sync-filter.js";
import { presenceEvent } from "../../presence/presence.js";
export const presenceProvider = {
    stream: "presence",
    current: (s) => s.presence.currentPosition(),
    async collect(ctx, from, to) {
        const { s } = ctx;
        if (!s.config.use_presence || (from !== undefined && from >= to))
            return false;
        const me = ctx.requester.userId;
        let rows;
        if (from === undefined) {
            const visible = await s.e2ee.usersSharingRoomsWith(me);
            visible.add(me);
            rows = (await s.presence.ofUsers([...visible], undefined, to)).filter((r) => r.state !== "offline" || r.statusMsg !== null);
        }
        else {
            rows = await s.presence.changed(from, to);
            if (rows.length === 0)
                return false;
            const visible = await s.e2ee.usersSharingRoomsWith(me);
            rows = rows.filter((r) => r.userId === me || visible.has(r.userId));
        }
        const now = s.clock.now();
        const events = filterPlainEvents(ctx.filter.presence, rows.map((r) => presenceEvent(r, now)));
        ctx.result.presence.events.push(...events);
        return events.length > 0;
    },
};
