// Sync provider of the presence stream: top-level presence.events, an `m.presence` event (sender,
// content.presence, last_active_ago, currently_active, status_msg) for each user sharing a room with the
// requester (and the requester) whose presence changed in the range — on an initial sync, everyone of
// them who is not plainly offline. Nothing with `use_presence: false`. Spec: Client-Server API "Presence".
import type { SyncProvider } from "../types.ts";
import { filterPlainEvents } from "../../filters/sync-filter.ts";
import { presenceEvent } from "../../presence/presence.ts";

export const presenceProvider: SyncProvider = {
  stream: "presence",
  current: (s) => s.presence.currentPosition(),
  async collect(ctx, from, to) {
    const { s } = ctx;
    if (!s.config.use_presence || (from !== undefined && from >= to)) return false;
    const me = ctx.requester.userId;
    let rows;
    if (from === undefined) {
      const visible = await s.e2ee.usersSharingRoomsWith(me);
      visible.add(me);
      rows = (await s.presence.ofUsers([...visible], undefined, to)).filter((r) => r.state !== "offline" || r.statusMsg !== null);
    } else {
      rows = await s.presence.changed(from, to);
      if (rows.length === 0) return false;
      const visible = await s.e2ee.usersSharingRoomsWith(me);
      rows = rows.filter((r) => r.userId === me || visible.has(r.userId));
    }
    const now = s.clock.now();
    const events = filterPlainEvents(ctx.filter.presence, rows.map((r) => presenceEvent(r, now)));
    ctx.result.presence.events.push(...events);
    return events.length > 0;
  },
};
