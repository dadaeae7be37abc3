// The newest events of many rooms at once, for faces that show a list of rooms with each one's last
// messages (the GraphQL room list's `timeline(last: n)`): what GET /rooms/{roomId}/messages?dir=b from the
// newest gives per room, in a bounded number of queries for the whole batch — the requester's memberships
// (one), the newest event ids of every joined room (one per chunk of rooms), the events (one, or none when
// cached), history visibility judged once over all of them (filterVisible) and one serialization (room
// versions from the first read). Rooms
// this cannot answer alone fall back to readMessages one by one: rooms the requester is not joined to
// (their reads stop at the leave, or follow world_readable rules), rooms with partial state, and rooms
// whose first read does not fill the page with visible events (hidden history, or a history this server
// has not got all of: /messages backfills there).
// Spec: Client-Server API "Getting events for a room" (GET /rooms/{roomId}/messages).
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { ClientEvent } from "../events/format.ts";
import type { StoredEvent } from "../store/events.ts";
import { RoomBatchReads } from "../store/rooms.ts";
import { SyncReads } from "../store/sync-reads.ts";
import { filterVisible } from "./visibility.ts";
import { isPartialState } from "../federation/partial-state/flag.ts";
import { LOWEST, readMessages } from "./read.ts";
import { roomVersionLookup, serializeEvents } from "./serialize.ts";

export interface LatestTimeline {
  /** The newest `limit` visible events, oldest first, each with its stream position. */
  events: { event: ClientEvent; streamOrdering: number }[];
  /** Older events may remain (as readMessages' `more`). */
  more: boolean;
}

/**
 * The newest `limit` visible events of each of `roomIds` for `r` (see the header). A room `r` may not read
 * maps to its error (M_FORBIDDEN), as readMessages throws it.
 */
export async function latestTimelines(s: Services, r: Requester, roomIds: readonly string[], limit: number): Promise<Map<string, LatestTimeline | Error>> {
  const ids = [...new Set(roomIds)];
  const out = new Map<string, LatestTimeline | Error>();
  if (ids.length === 0) return out;
  const rows = await new RoomBatchReads(s.storage.sql).roomsWithMembership(r.userId, ids);
  const joined: string[] = [];
  for (const row of rows) if (row.membership === "join" && !(await isPartialState(s, row.roomId))) joined.push(row.roomId);
  const slow = new Set(ids.filter((id) => !joined.includes(id)));

  if (joined.length > 0 && limit > 0) {
    // Twice the page and one more: enough, when most events are visible, to fill it and know whether more remain.
    const want = limit * 2 + 1;
    const head = await s.rooms.events.maxStreamOrdering();
    const found = await new SyncReads(s.storage.sql).newestEventIds(joined, LOWEST, head, want, "stream");
    const loaded = await s.rooms.events.getMany([...found.values()].flat());
    const candidates = joined.flatMap((id) => (found.get(id) ?? []).map((e) => loaded.get(e)).filter((e): e is StoredEvent => !!e));
    const visible = new Set((await filterVisible(s, r.userId, candidates, "join")).map((e) => e.eventId));
    const picked = new Map<string, { events: StoredEvent[]; more: boolean }>();
    for (const roomId of joined) {
      const read = (found.get(roomId) ?? []).map((e) => loaded.get(e)).filter((e): e is StoredEvent => !!e);
      const shown = read.filter((e) => visible.has(e.eventId));
      // A full page with one visible event to spare: older ones remain. Anything less: /messages decides.
      if (shown.length > limit) picked.set(roomId, { events: shown.slice(0, limit).reverse(), more: true });
      else slow.add(roomId);
    }
    const all = [...picked.values()].flatMap((p) => p.events);
    // As /messages serializes (unsigned.membership at each event), with the versions the first read gave.
    const versions = new Map(rows.map((row) => [row.roomId, row.roomVersion]));
    const lookup = roomVersionLookup(s);
    const rendered = await serializeEvents(s, r, async (roomId) => versions.get(roomId) ?? lookup(roomId), all, { membership: true });
    const byId = new Map(all.map((e, i) => [e.eventId, rendered[i]!]));
    for (const [roomId, p] of picked) out.set(roomId, { events: p.events.map((e) => ({ event: byId.get(e.eventId)!, streamOrdering: e.streamOrdering })), more: p.more });
  } else if (limit === 0) {
    for (const roomId of joined) slow.add(roomId);
  }

  for (const roomId of slow) {
    try {
      const { response, more } = await readMessages(s, r, roomId, { dir: "b", limit, filter: {} });
      const chunk = [...response.chunk].reverse();
      const stored = await s.rooms.events.getMany(chunk.map((e) => e.event_id));
      out.set(roomId, { events: chunk.map((event) => ({ event, streamOrdering: stored.get(event.event_id)!.streamOrdering })), more });
    } catch (err) {
      out.set(roomId, err instanceof Error ? err : new Error(String(err)));
    }
  }
  return out;
}
