import { total } from "./counts.js";
const shape = (c) => ({ notification_count: c?.notifications ?? 0, highlight_count: c?.highlights ?? 0 });
export async function addUnreadCounts(ctx) {
    const roomIds = Object.keys(ctx.result.rooms.join);
    if (roomIds.length === 0)
        return;
    const counts = await ctx.s.push.counts.get(ctx.s, ctx.requester.userId, roomIds);
    const perThread = ctx.filter.room.timeline.unread_thread_notifications === true;
    for (const roomId of roomIds) {
        const room = ctx.result.rooms.join[roomId];
        const c = counts.get(roomId);
        if (!perThread) {
            room.unread_notifications = shape(total(c));
            continue;
        }
        room.unread_notifications = shape(c?.get("main"));
        const threads = {};
        for (const [threadId, tc] of c ?? [])
            if (threadId !== "main")
                threads[threadId] = shape(tc);
        if (Object.keys(threads).length > 0)
            room.unread_thread_notifications = threads;
    }
}
