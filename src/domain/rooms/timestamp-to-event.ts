// GET /rooms/{roomId}/timestamp_to_event: the event closest to a timestamp, at or after it (dir f) or
// at or before it (dir b) — ties by the DAG's order — among those the caller may see (read access and
// history visibility); 404 M_NOT_FOUND when there is none. When this server has none, or the one it has
// lies next to a gap in its copy of the room (dir f: history before it is missing; dir b: events after it
// are), the other servers in the room are asked (federation/timestamp-lookup.ts) and their event, fetched
// and placed as backfilled history, is the answer if it is closer (as Synapse's TimestampLookupHandler).
// Spec: Client-Server API "GET /_matrix/client/v1/rooms/{roomId}/timestamp_to_event".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { StoredEvent } from "../store/events.ts";
import { prevEventIds } from "../events/types.ts";
import { readAccess, type ReadAccess } from "./read-access.ts";
import { filterVisible } from "./visibility.ts";
import { timestampToEventElsewhere, type Direction } from "../federation/timestamp-lookup.ts";

const BATCH = 50;
const MAX_SCANNED = 5000;
/** DAG events looked at for a child of the event found (dir b): none among them counts as a gap. */
const CHILD_LOOKAHEAD = 50;

export async function timestampToEvent(s: Services, r: Requester, roomId: string, ts: number, dir: Direction): Promise<{ event_id: string; origin_server_ts: number }> {
  const access = await readAccess(s, r, roomId);
  let found = await closestVisible(s, r, access, roomId, ts, dir);
  if (!found || (await nextToGap(s, access, found, dir))) {
    const remote = await timestampToEventElsewhere(s, access.room, ts, dir);
    if (remote && (!found || Math.abs(remote.pdu.origin_server_ts - ts) < Math.abs(found.pdu.origin_server_ts - ts))) {
      const [visible] = await filterVisible(s, r.userId, [remote], access.membership);
      if (visible && (access.upTo === undefined || visible.streamOrdering <= access.upTo)) found = visible;
    }
  }
  if (!found) throw new MatrixError("M_NOT_FOUND", `Unable to find event ${dir === "f" ? "after" : "before"} ${ts} in room ${roomId}`, 404);
  return { event_id: found.eventId, origin_server_ts: found.pdu.origin_server_ts };
}

async function closestVisible(s: Services, r: Requester, access: ReadAccess, roomId: string, ts: number, dir: Direction): Promise<StoredEvent | undefined> {
  for (let offset = 0; offset < MAX_SCANNED; offset += BATCH) {
    const page = await s.rooms.events.byTimestamp(roomId, ts, dir, BATCH, offset);
    const readable = page.filter((e) => access.upTo === undefined || e.streamOrdering <= access.upTo);
    const [found] = await filterVisible(s, r.userId, readable, access.membership);
    if (found) return found;
    if (page.length < BATCH) break;
  }
  return undefined;
}

/**
 * Whether this server may lack events between `event` and the timestamp: looking forwards, when one of
 * its prev_events is not in the DAG here (history before it is missing); looking backwards, when it is no
 * forward extremity and no event of the DAG after it names it as a prev_event.
 */
async function nextToGap(s: Services, access: ReadAccess, event: StoredEvent, dir: Direction): Promise<boolean> {
  if (dir === "f") {
    const prevs = prevEventIds(event.pdu);
    const held = await s.rooms.events.getMany(prevs);
    return prevs.some((id) => {
      const e = held.get(id);
      return !e || e.outlier;
    });
  }
  if (access.room.extremities.includes(event.eventId)) return false;
  const later = await s.rooms.events.laterInDag(event.roomId, event.pdu.depth, CHILD_LOOKAHEAD);
  return !later.some((e) => prevEventIds(e.pdu).includes(event.eventId));
}
