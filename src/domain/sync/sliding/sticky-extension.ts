// The sticky-events extension of simplified sliding sync (MSC4354, split out as MSC4480;
// `org.matrix.msc4354.sticky_events`, with experimental_features.msc4354_enabled): the unexpired sticky
// events of the joined rooms the connection's lists and subscriptions hold, after the extension's own
// `since` (`sticky_<position>`; from the stream's start without it), at most min(limit, 100), by position,
// as `{rooms: {id: {events}}, next_batch}` — next_batch the last position given when the limit cut the
// answer short, else the stream's position. Events the answer's timeline of the room shows are left out;
// history visibility is not applied. Absent when there is nothing (as Synapse). A `since` ahead of the
// stream answers 400 M_UNKNOWN_POS (Synapse's answer to a token from the future).
// Spec: MSC4354 / MSC4480; Synapse's get_sticky_events_extension_response.
import type { Services } from "../../services.ts";
import type { Requester } from "../../accounts/requester.ts";
import { MatrixError } from "../../errors.ts";
import { DEFAULT_SYNC_FILTER } from "../../filters/sync-filter.ts";
import { withoutIgnored } from "../../account-data/ignored-users.ts";
import { MAX_STICKY_EVENTS_IN_SYNC } from "../../sticky/sticky.ts";
import type { StoredEvent } from "../../store/events.ts";
import { renderEvents } from "../providers/events.ts";
import type { JsonObject } from "../types.ts";

export async function stickyEventsExtension(
  s: Services,
  r: Requester,
  req: { limit: number; since?: number },
  rooms: ReadonlySet<string>,
  timelines: ReadonlyMap<string, ReadonlySet<string>>,
  to: number,
): Promise<JsonObject | undefined> {
  const since = req.since ?? 0;
  if (since > to && since > (await s.sticky.streamIds.current())) {
    throw new MatrixError("M_UNKNOWN_POS", `The \`org.matrix.msc4354.sticky_events\` extension \`since\` token is ahead of the server: start again without it.`, 400);
  }
  const limit = Math.min(req.limit, MAX_STICKY_EVENTS_IN_SYNC);
  const rows = await s.sticky.inRooms(rooms, since, to, s.clock.now(), limit);
  if (rows.length === 0) return undefined;
  const nextBatch = rows.length === limit ? rows[rows.length - 1]!.streamId : Math.max(to, since);
  const stored = await s.rooms.events.getMany(rows.map((x) => x.eventId));
  const events = await withoutIgnored(s, r.userId, rows.map((x) => stored.get(x.eventId)).filter((e): e is StoredEvent => e !== undefined));
  const rendered = await renderEvents(s, r, DEFAULT_SYNC_FILTER, events, new Map(), true, () => undefined);
  const out: Record<string, { events: JsonObject[] }> = {};
  events.forEach((e, i) => {
    if (timelines.get(e.roomId)?.has(e.eventId)) return;
    (out[e.roomId] ??= { events: [] }).events.push(rendered[i]!);
  });
  return { rooms: out, next_batch: `sticky_${nextBatch}` };
}
