// Gaps in /sync timelines: a timeline holding an event stored with missing history before it (prev_events
// this server did not have: store gapsAmong) is limited, and an incremental sync's starts at the latest
// such event of its range, so the client paginates the hole instead of reading what came before it as
// adjacent — as Synapse's timeline_gaps (Complement TestSyncTimelineGap). Spec: "Syncing" (limited).
import type { Services } from "../services.ts";
import type { StoredEvent } from "../store/events.ts";
import { domainOf } from "../events/types.ts";

/** What of a room's timeline the check reads and sets (providers/events.ts's Timeline). */
export interface GapTimeline {
  events: StoredEvent[];
  limited: boolean;
  gap: boolean;
  /** Every event looked at while selecting it, newest first. */
  scanned: StoredEvent[];
}

/**
 * Whether an event may have been stored with prev_events outside the DAG: any remote event, and our own
 * member events (a join, leave or knock through another server is built on its make_* template's
 * prev_events); every other local event is built on this server's own forward extremities.
 */
function mayFollowAGap(s: Services, e: StoredEvent): boolean {
  return e.pdu.type === "m.room.member" || domainOf(e.pdu.sender) !== s.config.server_name;
}

/**
 * Marks the timelines (by room) whose looked-at events of the range after `from` hold a gap. One query
 * for all rooms, none when no event may follow one; an initial sync asks only about timelines not
 * already limited (the flag is all a gap changes there: it cuts nothing, as in Synapse).
 */
export async function markGaps<T extends GapTimeline>(s: Services, timelines: Map<string, T>, from: number | undefined): Promise<void> {
  const after = from ?? 0;
  const candidates: string[] = [];
  for (const tl of timelines.values()) {
    if (from === undefined && tl.limited) continue;
    for (const e of tl.scanned) if (e.streamOrdering > after && mayFollowAGap(s, e)) candidates.push(e.eventId);
  }
  if (candidates.length === 0) return;
  const gaps = await s.rooms.events.gapsAmong(candidates);
  if (gaps.size === 0) return;
  for (const [roomId, tl] of timelines) {
    const latest = tl.scanned.find((e) => e.streamOrdering > after && gaps.has(e.eventId));
    if (!latest) continue;
    const events = from === undefined ? tl.events : tl.events.filter((e) => e.streamOrdering >= latest.streamOrdering);
    // The state before the hole came from elsewhere: `state` brings what changed since the token.
    timelines.set(roomId, { ...tl, events, limited: true, gap: true });
  }
}
