// A room's timeline as it grows, for live readers (the GraphQL roomTimeline subscription): the events
// after a position that the requester may see, serialized as REST shows them. Access is checked when
// reading starts and re-checked per batch (a user who left stops receiving events after their leave).
// Spec: Client-Server API "History visibility".
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { ClientEvent } from "../events/format.ts";
import { readAccess } from "./read-access.ts";
import { filterVisible } from "./visibility.ts";
import { roomVersionLookup, serializeEvents } from "./serialize.ts";

export interface LiveEvent {
  event: ClientEvent;
  streamOrdering: number;
}

type Page = Awaited<ReturnType<Services["rooms"]["events"]["page"]>>;
const pagesInFlight = new WeakMap<Services, Map<string, Promise<Page>>>();

/**
 * The page of new events, shared by every live reader asking the same question at the same moment: a new
 * event wakes all of a room's subscribers at once, and they read one page, not one each.
 */
function sharedPage(s: Services, roomId: string, after: number, upTo: number): Promise<Page> {
  let pages = pagesInFlight.get(s);
  if (!pages) pagesInFlight.set(s, (pages = new Map()));
  const key = `${roomId}\u0000${after}\u0000${upTo}`;
  let p = pages.get(key);
  if (!p) {
    p = s.rooms.events.page(roomId, { after, upTo, dir: "f", limit: 1000 });
    pages.set(key, p);
    const forget = () => pages.delete(key);
    p.then(forget, forget);
  }
  return p;
}

/** Checks that `r` may read the room now (M_FORBIDDEN otherwise). */
export async function checkLiveAccess(s: Services, r: Requester, roomId: string): Promise<void> {
  await readAccess(s, r, roomId);
}

/** The events of `roomId` with `after < position <= upTo` visible to `r`, oldest first (at most 1000). */
export async function timelineAfter(s: Services, r: Requester, roomId: string, after: number, upTo?: number): Promise<LiveEvent[]> {
  let access;
  try {
    access = await readAccess(s, r, roomId);
  } catch {
    return [];
  }
  const limit = Math.min(upTo ?? Number.MAX_SAFE_INTEGER, access.upTo ?? Number.MAX_SAFE_INTEGER);
  const page = await sharedPage(s, roomId, after, limit);
  const visible = await filterVisible(s, r.userId, page, access.membership);
  const out = await serializeEvents(s, r, roomVersionLookup(s), visible);
  return out.map((event, i) => ({ event, streamOrdering: visible[i]!.streamOrdering }));
}
