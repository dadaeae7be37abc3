// Unread notification counts in /sync (spec: Client-Server API "Receiving notifications", threaded
// notifications): `unread_notifications` on every joined room of the response — all threads together, or
// the main timeline only when the filter asks for `unread_thread_notifications`, which then lists the
// threads with unread notifications. A sync decorator: it runs after every provider (sync/registry.ts).
import type { SyncContext } from "../sync/types.ts";
import { total, type Count } from "./counts.ts";

const shape = (c: Count | undefined) => ({ notification_count: c?.notifications ?? 0, highlight_count: c?.highlights ?? 0 });

export async function addUnreadCounts(ctx: SyncContext): Promise<void> {
  const roomIds = Object.keys(ctx.result.rooms.join);
  if (roomIds.length === 0) return;
  const counts = await ctx.s.push.counts.get(ctx.s, ctx.requester.userId, roomIds);
  const perThread = ctx.filter.room.timeline.unread_thread_notifications === true;
  for (const roomId of roomIds) {
    const room = ctx.result.rooms.join[roomId]!;
    const c = counts.get(roomId);
    if (!perThread) {
      room.unread_notifications = shape(total(c));
      continue;
    }
    room.unread_notifications = shape(c?.get("main"));
    const threads: Record<string, { notification_count: number; highlight_count: number }> = {};
    for (const [threadId, tc] of c ?? []) if (threadId !== "main") threads[threadId] = shape(tc);
    if (Object.keys(threads).length > 0) room.unread_thread_notifications = threads;
  }
}
