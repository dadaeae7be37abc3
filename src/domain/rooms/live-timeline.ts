// A room's timeline as it grows, for live readers (the GraphQL roomTimeline subscription): the events
// after a position that the requester may see, serialized as REST shows them. Access is checked when
// reading starts and re-checked per batch (a user who left stops receiving events after their leave).
// One new event woken N readers: the page is read once and serialized once; per reader only the access
// and visibility checks (from memory) and its own transaction id. Spec: Client-Server API "History visibility".
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { ClientEvent } from "../events/format.ts";
import { readAccess, type KnownMembership } from "./read-access.ts";
import { filterVisible } from "./visibility.ts";
import { forReader, roomVersionLookup, serializeEvents, serializeForAnyReader } from "./serialize.ts";
import { SyncReads } from "../store/sync-reads.ts";
import type { SharedLivePage as Shared } from "../process-state.ts";

export interface LiveEvent {
  event: ClientEvent;
  streamOrdering: number;
}

/**
 * The page of new events, and its serialization, shared by every live reader asking the same question
 * at the same moment: a new event wakes all of a room's subscribers at once, and they read and
 * serialize one page, not one each. Kept until the turn of the event loop after the read settles (the
 * readers woken together all ask within it), then forgotten: a later reader reads afresh.
 */
function shared(s: Services, roomId: string, after: number, upTo: number): Shared {
  const pages = s.processState.livePages;
  const key = `${roomId}\u0000${after}\u0000${upTo}`;
  let sh = pages.get(key);
  if (!sh) {
    const page = s.rooms.events.page(roomId, { after, upTo, dir: "f", limit: 1000 });
    sh = { page };
    pages.set(key, sh);
    const forget = () => void setImmediate(() => pages.delete(key));
    page.then(forget, forget);
  }
  return sh;
}

function serializedOnce(s: Services, sh: Shared, versionOf: (roomId: string) => Promise<string>): Promise<Map<string, ClientEvent> | undefined> {
  return (sh.serialized ??= sh.page.then(async (page) => {
    const out = await serializeForAnyReader(s, versionOf, page);
    return out && new Map(out.map((e) => [e.event_id, e]));
  }));
}

/** The requester's membership in the room from sync's in-memory memberships (current at every commit). */
async function membershipOf(s: Services, userId: string, roomId: string): Promise<KnownMembership> {
  const all = await s.sync.streamCache.membershipsOf(userId, () => new SyncReads(s.storage.sql).membershipsOf(userId));
  return all.find((m) => m.roomId === roomId) ?? null;
}

/** Checks that `r` may read the room now (M_FORBIDDEN otherwise). */
export async function checkLiveAccess(s: Services, r: Requester, roomId: string): Promise<void> {
  await readAccess(s, r, roomId);
}

/** The events of `roomId` with `after < position <= upTo` visible to `r`, oldest first (at most 1000). */
export async function timelineAfter(s: Services, r: Requester, roomId: string, after: number, upTo?: number): Promise<LiveEvent[]> {
  let access;
  try {
    access = await readAccess(s, r, roomId, await membershipOf(s, r.userId, roomId));
  } catch {
    return [];
  }
  const limit = Math.min(upTo ?? Number.MAX_SAFE_INTEGER, access.upTo ?? Number.MAX_SAFE_INTEGER);
  const sh = shared(s, roomId, after, limit);
  const visible = await filterVisible(s, r.userId, await sh.page, access.membership);
  if (visible.length === 0) return [];
  // Per reader only what differs: which events it may see (above) and its own transaction ids.
  // The page holds this room's events only: its version comes from the room's snapshot (no read).
  const lookup = roomVersionLookup(s);
  const versionOf = (id: string) => (id === roomId ? Promise.resolve(access.room.version.id) : lookup(id));
  const once = await serializedOnce(s, sh, versionOf);
  const out = once ? visible.map((e) => forReader(r, e, once.get(e.eventId)!)) : await serializeEvents(s, r, versionOf, visible);
  return out.map((event, i) => ({ event, streamOrdering: visible[i]!.streamOrdering }));
}
