// Sync provider of the sticky-events stream (MSC4354, declared in src/main.ts with
// experimental_features.msc4354_enabled): rooms.join.<id>.msc4354_sticky.events, the joined rooms' unexpired
// sticky events whose stream positions are in the range — on an initial sync all of them — at most 100 an
// answer (the token then stops at the last one given, and the next sync brings the rest); a room joined
// since the token gets all of its unexpired sticky events at once, whatever the limit. Events the
// response's timeline of the room already shows are left out (after the timeline filter: a sticky event it
// filtered out is here); history visibility is not applied (any joined member may see a sticky event while
// it is sticky), ignored users are. Each carries unsigned.msc4354_sticky_duration_ttl_ms (rooms/serialize.ts).
// Spec: MSC4354 "Sync API changes"; Synapse's sticky_events_by_room / sticky_events_for_newly_joined_rooms.
import type { SyncProvider } from "../types.ts";
import type { StickyRow } from "../../store/sticky-events.ts";
import type { StoredEvent } from "../../store/events.ts";
import { MAX_STICKY_EVENTS_IN_SYNC } from "../../sticky/sticky.ts";
import { withoutIgnored } from "../../account-data/ignored-users.ts";
import { renderEvents } from "./events.ts";

export const stickyEventsProvider: SyncProvider = {
  stream: "sticky_events",
  current: (s) => s.sticky.currentPosition(),
  async collect(ctx, from, to) {
    // A token ahead of the stream (a database restored from backup) reads as "nothing new".
    const after = from === undefined ? 0 : Math.min(from, to);
    const fresh = from === undefined ? new Set<string>() : ctx.newlyJoinedRooms;
    if (after >= to && fresh.size === 0) return false;
    const s = ctx.s;
    const now = s.clock.now();
    const rooms = new Set([...ctx.joinedRooms].filter((id) => !fresh.has(id)));
    const rows: StickyRow[] = after < to ? await s.sticky.inRooms(rooms, after, to, now, MAX_STICKY_EVENTS_IN_SYNC) : [];
    // The limit reached: the token goes up to the last event given (the rest comes next time).
    if (rows.length === MAX_STICKY_EVENTS_IN_SYNC) ctx.to.sticky_events = rows[rows.length - 1]!.streamId;
    if (fresh.size > 0) rows.push(...(await s.sticky.inRooms(fresh, 0, to, now, undefined)));
    if (rows.length === 0) return false;

    const stored = await s.rooms.events.getMany(rows.map((r) => r.eventId));
    const byRoom = new Map<string, StoredEvent[]>();
    for (const row of rows) {
      const e = stored.get(row.eventId);
      if (!e) continue;
      const shown = ctx.result.rooms.join[row.roomId]?.timeline.events;
      if (shown?.some((t) => t.event_id === row.eventId)) continue;
      const list = byRoom.get(row.roomId);
      if (list) list.push(e);
      else byRoom.set(row.roomId, [e]);
    }
    let added = false;
    const all = await withoutIgnored(s, ctx.requester.userId, [...byRoom.values()].flat());
    if (all.length === 0) return false;
    const rendered = await renderEvents(s, ctx.requester, ctx.filter, all, new Map(), true, () => undefined);
    const out = new Map(all.map((e, i) => [e.eventId, rendered[i]!]));
    for (const [roomId, events] of byRoom) {
      const list = events.map((e) => out.get(e.eventId)).filter((x) => x !== undefined);
      if (list.length === 0) continue;
      ctx.joinedRoom(roomId).msc4354_sticky = { events: list };
      added = true;
    }
    return added;
  },
};
