// Sync provider of the receipts stream: one `m.receipt` event per joined room (no room_id) in
// rooms.join.<id>.ephemeral, batching the room's receipts changed in the range — every thread's, unthreaded
// and threaded side by side (unthreaded first on one event: MSC4102): content {eventId: {"m.read":
// {userId: {ts, thread_id?}}}}. Private receipts
// (m.read.private) only reach their owner. Spec: Client-Server API "Receipts", "Syncing".
import type { SyncProvider } from "../types.ts";
import { filterPlainEvents, roomWanted } from "../../filters/sync-filter.ts";
import type { ReceiptRow } from "../../store/receipts.ts";

/**
 * The m.receipt content of these receipts (later rows win for the same event, type and user). A user's
 * threaded receipt on an event they also have an unthreaded receipt on is left out: the unthreaded one
 * is shown (MSC4102, as Synapse; the content has room for one receipt per event, type and user).
 */
export function receiptContent(rows: readonly ReceiptRow[]): Record<string, Record<string, Record<string, { ts: number; thread_id?: string }>>> {
  const content: Record<string, Record<string, Record<string, { ts: number; thread_id?: string }>>> = {};
  const unthreaded = new Set<string>();
  for (const r of rows) if (r.threadId === "") unthreaded.add(`${r.userId}\u0000${r.eventId}`);
  for (const r of rows) {
    if (r.threadId !== "" && unthreaded.has(`${r.userId}\u0000${r.eventId}`)) continue;
    const byType = (content[r.eventId] ??= {});
    const byUser = (byType[r.receiptType] ??= {});
    byUser[r.userId] = r.threadId === "" ? { ts: r.ts } : { ts: r.ts, thread_id: r.threadId };
  }
  return content;
}

export const receiptsProvider: SyncProvider = {
  stream: "receipts",
  current: (s) => s.receipts.currentPosition(),
  async collect(ctx, from, to) {
    if (from !== undefined && from >= to) return false;
    const rooms = [...ctx.joinedRooms].filter((id) => roomWanted(ctx.filter, id));
    if (rooms.length === 0) return false;
    const rows = await ctx.s.receipts.inRooms(rooms, from, to, ctx.requester.userId);
    const byRoom = new Map<string, ReceiptRow[]>();
    for (const r of rows) {
      const l = byRoom.get(r.roomId);
      if (l) l.push(r);
      else byRoom.set(r.roomId, [r]);
    }
    let added = false;
    for (const [roomId, list] of byRoom) {
      const events = filterPlainEvents(ctx.filter.room.ephemeral, [{ type: "m.receipt", content: receiptContent(list) }]);
      if (events.length === 0) continue;
      ctx.joinedRoom(roomId).ephemeral.events.push(...events);
      added = true;
    }
    return added;
  },
};
