// Sync provider of the account-data stream: the user's global account data (top-level `account_data`)
// and per-room account data, room tags included (`rooms.join.<id>.account_data`), changed in the range.
// Spec: Client-Server API "Client Config", "Room Tagging". With MSC3391 an entry deleted (content `{}`)
// shows in incremental syncs and is left out of initial ones, as Synapse serves it.
import type { SyncProvider } from "../types.ts";
import { filterPlainEvents, roomWanted } from "../../filters/sync-filter.ts";

export const accountDataProvider: SyncProvider = {
  stream: "account_data",
  current: (s) => s.accountData.currentPosition(),
  async collect(ctx, from, to) {
    if (from !== undefined && from >= to) return false;
    const skipDeleted = from === undefined && ctx.s.config.experimental_features.msc3391_enabled;
    const rows = await ctx.s.accountData.changed(ctx.requester.userId, from, to, skipDeleted);
    if (rows.length === 0) return false;
    const global = rows.filter((r) => r.roomId === "").map((r) => ({ type: r.type, content: r.content }));
    let added = false;
    for (const e of filterPlainEvents(ctx.filter.account_data, global)) {
      ctx.result.account_data.events.push(e);
      added = true;
    }
    const byRoom = new Map<string, { type: string; content: Record<string, unknown> }[]>();
    for (const r of rows) {
      if (r.roomId === "" || !ctx.joinedRooms.has(r.roomId) || !roomWanted(ctx.filter, r.roomId)) continue;
      byRoom.set(r.roomId, [...(byRoom.get(r.roomId) ?? []), { type: r.type, content: r.content }]);
    }
    for (const [roomId, events] of byRoom) {
      const kept = filterPlainEvents({ ...ctx.filter.room.account_data }, events);
      if (kept.length === 0) continue;
      ctx.joinedRoom(roomId).account_data.events.push(...kept);
      added = true;
    }
    return added;
  },
};
