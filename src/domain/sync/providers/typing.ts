// Sync provider of the typing stream: an `m.typing` event (content.user_ids, no room_id) in
// rooms.join.<id>.ephemeral for each joined room whose typing list changed in the range — every room
// where someone is typing on an initial sync. The state is in memory (src/domain/typing/typing-state.ts):
// a token from before a restart (above the current position) reads as an initial sync of this stream.
// Spec: Client-Server API "Typing Notifications", "Syncing".
import type { SyncProvider } from "../types.ts";
import { filterPlainEvents, roomWanted } from "../../filters/sync-filter.ts";

export const typingProvider: SyncProvider = {
  stream: "typing",
  current: (s) => s.typing.position,
  async collect(ctx, from, to) {
    if (from !== undefined && from > to) from = undefined;
    if (from !== undefined && from === to) return false;
    let added = false;
    for (const roomId of ctx.s.typing.changedRooms(ctx.joinedRooms, from)) {
      if (!roomWanted(ctx.filter, roomId)) continue;
      const events = filterPlainEvents(ctx.filter.room.ephemeral, [{ type: "m.typing", content: { user_ids: ctx.s.typing.typingIn(roomId) } }]);
      if (events.length === 0) continue;
      ctx.joinedRoom(roomId).ephemeral.events.push(...events);
      added = true;
    }
    return added;
  },
};
