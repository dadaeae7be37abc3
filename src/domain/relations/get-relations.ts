// GET /rooms/{roomId}/relations/{eventId}[/{relType}[/{eventType}]]: the events relating to a parent
// event the caller can see, paged by stream position with the same `s<pos>` tokens as /messages (a
// /messages or /sync token works as `from`/`to`), optionally through relations of relations (3 levels,
// as Synapse). Spec: Client-Server API "Relationships" (GET /relations, v1).
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { ClientEvent } from "../events/format.ts";
import { readAccess } from "../rooms/read-access.ts";
import { filterVisible } from "../rooms/visibility.ts";
import { parseStreamToken, streamToken } from "../rooms/read.ts";
import { roomVersionLookup, serializeEvents } from "../rooms/serialize.ts";
import type { StoredEvent } from "../store/events.ts";

/** Synapse's defaults: 5 events a page unless asked, at most 1000; recursion 3 levels deep. */
export const RELATIONS_DEFAULT_LIMIT = 5;
export const RELATIONS_MAX_LIMIT = 1000;
export const RELATIONS_RECURSION_DEPTH = 3;

export interface RelationsRequest {
  relType?: string;
  eventType?: string;
  from?: string;
  to?: string;
  dir: "b" | "f";
  limit?: number;
  /** undefined: the parameter was not sent (then no recursion_depth in the answer). */
  recurse?: boolean;
}

export interface RelationsResponse {
  chunk: ClientEvent[];
  next_batch?: string;
  prev_batch?: string;
  recursion_depth?: number;
}

export interface RelationsPage {
  events: StoredEvent[];
  /** The token of the next page, if more may remain. */
  next?: string;
}

const notFound = () => new MatrixError("M_NOT_FOUND", "Event not found", 404);

/** The parent event as the requester may see it (else 404), and their read access to the room. */
export async function visibleParent(s: Services, r: Requester, roomId: string, eventId: string) {
  const access = await readAccess(s, r, roomId).catch(() => {
    throw notFound();
  });
  const parent = await s.rooms.events.get(eventId);
  if (!parent || parent.roomId !== roomId || (access.upTo !== undefined && parent.streamOrdering > access.upTo)) throw notFound();
  if ((await filterVisible(s, r.userId, [parent], access.membership)).length === 0) throw notFound();
  return { access, parent };
}

/** One page of relations as stored events (the REST route and GraphQL's Event.relations share it). */
export async function relationsPage(s: Services, r: Requester, roomId: string, eventId: string, req: RelationsRequest): Promise<RelationsPage> {
  const { access } = await visibleParent(s, r, roomId, eventId);
  const limit = Math.min(Math.max(req.limit ?? RELATIONS_DEFAULT_LIMIT, 1), RELATIONS_MAX_LIMIT);
  const head = access.upTo ?? (await s.rooms.events.maxStreamOrdering());
  const from = req.from !== undefined ? parseStreamToken(req.from, "from") : undefined;
  const to = req.to !== undefined ? parseStreamToken(req.to, "to") : undefined;
  // Same positions as /messages: backwards takes events at or below `from` (down to above `to`),
  // forwards takes events above `from` (up to `to`).
  const after = req.dir === "b" ? Math.max(to ?? 0, 0) : (from ?? 0);
  const upTo = req.dir === "b" ? Math.min(from ?? head, head) : Math.min(to ?? head, head);
  const rows = await s.relations.page({
    roomId,
    parentId: eventId,
    relType: req.relType,
    eventType: req.eventType,
    depth: req.recurse ? RELATIONS_RECURSION_DEPTH : 1,
    dir: req.dir,
    after,
    upTo,
    limit: limit + 1,
  });
  const more = rows.length > limit;
  const taken = rows.slice(0, limit);
  const stored = await s.rooms.events.getMany(taken.map((x) => x.eventId));
  const events = taken.map((x) => stored.get(x.eventId)).filter((e): e is StoredEvent => e !== undefined);
  const visible = await filterVisible(s, r.userId, events, access.membership);
  const last = taken[taken.length - 1];
  const next = more && last ? streamToken(req.dir === "b" ? last.streamOrdering - 1 : last.streamOrdering) : undefined;
  return { events: visible, ...(next !== undefined ? { next } : {}) };
}

export async function getRelations(s: Services, r: Requester, roomId: string, eventId: string, req: RelationsRequest): Promise<RelationsResponse> {
  const page = await relationsPage(s, r, roomId, eventId, req);
  const res: RelationsResponse = { chunk: await serializeEvents(s, r, roomVersionLookup(s), page.events, { membership: true }) };
  if (page.next !== undefined) res.next_batch = page.next;
  if (req.from !== undefined) res.prev_batch = req.from;
  if (req.recurse !== undefined) res.recursion_depth = req.recurse ? RELATIONS_RECURSION_DEPTH : 1;
  return res;
}
