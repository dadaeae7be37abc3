import { filterPlainEvents, roomWanted } from "../../filters/sync-filter.js";
/** The m.receipt content of these receipts (later rows win for the same event, type and user). */
export function receiptContent(rows) {
    const content = {};
    for (const r of rows) {
        const byType = (content[r.eventId] ??= {});
        const byUser = (byType[r.receiptType] ??= {});
        byUser[r.userId] = r.threadId === "" ? { ts: r.ts } : { ts: r.ts, thread_id: r.threadId };
    }
    return content;
}
export const receiptsProvider = {
    stream: "receipts",
    current: (s) => s.receipts.currentPosition(),
    async collect(ctx, from, to) {
        if (from !== undefined && from >= to)
            return false;
        const rooms = [...ctx.joinedRooms].filter((id) => roomWanted(ctx.filter, id));
        if (rooms.length === 0)
            return false;
        const rows = await ctx.s.receipts.inRooms(rooms, from, to, ctx.requester.userId);
        const byRoom = new Map();
        for (const r of rows) {
            const l = byRoom.get(r.roomId);
            if (l)
                l.push(r);
            else
                byRoom.set(r.roomId, [r]);
        }
        let added = false;
        for (const [roomId, list] of byRoom) {
            const events = filterPlainEvents(ctx.filter.room.ephemeral, [{ type: "m.receipt", content: receiptContent(list) }]);
            if (events.length === 0)
                continue;
            ctx.joinedRoom(roomId).ephemeral.events.push(...events);
            added = true;
        }
        return added;
    },
};
