// Sync provider of the presence stream: top-level presence.events, an `m.presence` event (sender,
// content.presence, last_active_ago, currently_active, status_msg) for each user sharing a room with the
// requester (and the requester) whose presence changed in the range — on an initial sync, everyone of
// them who is not plainly offline; on an incremental sync also, changed or not, the users the events
// provider names (members of newly joined rooms, new members: ctx.presenceOf). Nothing with
// `use_presence: false`. Spec: Client-Server API "Presence"; Synapse where it is silent.
import type { SyncProvider } from "../types.ts";
import { filterPlainEvents } from "../../filters/sync-filter.ts";
import { presenceContent, presenceEvent } from "../../presence/presence.ts";
import type { PresenceRow } from "../../store/presence.ts";

export const presenceProvider: SyncProvider = {
  stream: "presence",
  current: (s) => s.presence.currentPosition(),
  async collect(ctx, from, to) {
    const { s } = ctx;
    if (!s.config.use_presence) return false;
    const me = ctx.requester.userId;
    let rows: PresenceRow[] = [];
    if (from === undefined) {
      const visible = await s.e2ee.usersSharingRoomsWith(me);
      visible.add(me);
      rows = (await s.presence.ofUsers([...visible], undefined, to)).filter((r) => r.state !== "offline" || r.statusMsg !== null);
    } else if (from < to) {
      rows = await s.presence.changed(from, to);
      if (rows.length > 0) {
        const visible = await s.e2ee.usersSharingRoomsWith(me);
        rows = rows.filter((r) => r.userId === me || visible.has(r.userId));
      }
    }
    const now = s.clock.now();
    const events = rows.map((r) => presenceEvent(r, now));
    // Members of rooms new to the client and users new in its rooms: their presence as it stands, offline
    // included (those who never set one read as offline), unless the range already brought it.
    const extra = [...ctx.presenceOf].filter((u) => !rows.some((r) => r.userId === u));
    if (from !== undefined && extra.length > 0) {
      const current = new Map((await s.presence.ofUsers(extra, undefined, to)).map((r) => [r.userId, r]));
      for (const u of extra) events.push(current.has(u) ? presenceEvent(current.get(u)!, now) : { type: "m.presence", sender: u, content: presenceContent(undefined, now) });
    }
    const shown = filterPlainEvents(ctx.filter.presence, events);
    ctx.result.presence.events.push(...shown);
    return shown.length > 0;
  },
};
