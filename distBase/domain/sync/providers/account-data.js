import { filterPlainEvents, roomWanted } from "../../filters/sync-filter.js";
export const accountDataProvider = {
    stream: "account_data",
    current: (s) => s.accountData.currentPosition(),
    async collect(ctx, from, to) {
        if (from !== undefined && from >= to)
            return false;
        const rows = await ctx.s.accountData.changed(ctx.requester.userId, from, to);
        if (rows.length === 0)
            return false;
        const global = rows.filter((r) => r.roomId === "").map((r) => ({ type: r.type, content: r.content }));
        let added = false;
        for (const e of filterPlainEvents(ctx.filter.account_data, global)) {
            ctx.result.account_data.events.push(e);
            added = true;
        }
        const byRoom = new Map();
        for (const r of rows) {
            if (r.roomId === "" || !ctx.joinedRooms.has(r.roomId) || !roomWanted(ctx.filter, r.roomId))
                continue;
            byRoom.set(r.roomId, [...(byRoom.get(r.roomId) ?? []), { type: r.type, content: r.content }]);
        }
        for (const [roomId, events] of byRoom) {
            const kept = filterPlainEvents({ ...ctx.filter.room.account_data }, events);
            if (kept.length === 0)
                continue;
            ctx.joinedRoom(roomId).account_data.events.push(...kept);
            added = true;
        }
        return added;
    },
};
