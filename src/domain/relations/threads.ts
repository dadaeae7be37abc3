// GET /rooms/{roomId}/threads: the room's thread roots the caller can see, newest activity (latest
// reply) first, each with its bundled aggregations (m.thread summary); `include=participated` keeps the
// threads the caller started or replied in. Tokens are stream tokens (`s<pos>`) of the latest activity.
// Spec: Client-Server API "Threading" (GET /threads, v1).
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { ClientEvent } from "../events/format.ts";
import type { StoredEvent } from "../store/events.ts";
import { readAccess } from "../rooms/read-access.ts";
import { filterVisible } from "../rooms/visibility.ts";
import { parseStreamToken, streamToken } from "../rooms/read.ts";
import { roomVersionLookup, serializeEvents } from "../rooms/serialize.ts";

/** Synapse's default page of threads; our ceiling. */
export const THREADS_DEFAULT_LIMIT = 5;
export const THREADS_MAX_LIMIT = 1000;

export interface ThreadsRequest {
  include: "all" | "participated";
  from?: string;
  limit?: number;
}

export interface ThreadsPage {
  roots: StoredEvent[];
  /** Per root: the token that pages on after it (just below its latest activity). */
  cursors: Map<string, string>;
  next?: string;
}

export async function threadsPage(s: Services, r: Requester, roomId: string, req: ThreadsRequest): Promise<ThreadsPage> {
  const access = await readAccess(s, r, roomId);
  const limit = Math.min(Math.max(req.limit ?? THREADS_DEFAULT_LIMIT, 1), THREADS_MAX_LIMIT);
  const head = access.upTo ?? (await s.rooms.events.maxStreamOrdering());
  const upTo = Math.min(req.from !== undefined ? parseStreamToken(req.from, "from") : head, head);
  const rows = await s.relations.threadsOfRoom(roomId, { upTo, limit, participant: req.include === "participated" ? r.userId : undefined });
  const taken = rows.slice(0, limit);
  const stored = await s.rooms.events.getMany(taken.map((x) => x.rootId));
  const roots = taken.map((x) => stored.get(x.rootId)).filter((e): e is StoredEvent => e !== undefined && e.roomId === roomId);
  const visible = await filterVisible(s, r.userId, roots, access.membership);
  const last = taken[taken.length - 1];
  const cursors = new Map(taken.map((x) => [x.rootId, streamToken(x.latest - 1)]));
  return { roots: visible, cursors, ...(rows.length > limit && last ? { next: streamToken(last.latest - 1) } : {}) };
}

export async function getThreads(s: Services, r: Requester, roomId: string, req: ThreadsRequest): Promise<{ chunk: ClientEvent[]; next_batch?: string }> {
  const page = await threadsPage(s, r, roomId, req);
  const chunk = await serializeEvents(s, r, roomVersionLookup(s), page.roots, { membership: true });
  return page.next !== undefined ? { chunk, next_batch: page.next } : { chunk };
}
