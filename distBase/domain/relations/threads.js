import { readAccess } from "../rooms/read-access.js";
import { filterVisible } from "../rooms/visibility.js";
import { parseStreamToken, streamToken } from "../rooms/read.js";
import { roomVersionLookup, serializeEvents } from "../rooms/serialize.js";
/** Synapse's default page of threads; our ceiling. */
export const THREADS_DEFAULT_LIMIT = 5;
export const THREADS_MAX_LIMIT = 1000;
export async function threadsPage(s, r, roomId, req) {
    const access = await readAccess(s, r, roomId);
    const limit = Math.min(Math.max(req.limit ?? THREADS_DEFAULT_LIMIT, 1), THREADS_MAX_LIMIT);
    const head = access.upTo ?? (await s.rooms.events.maxStreamOrdering());
    const upTo = Math.min(req.from !== undefined ? parseStreamToken(req.from, "from") : head, head);
    const rows = await s.relations.threadsOfRoom(roomId, { upTo, limit, participant: req.include === "participated" ? r.userId : undefined });
    const taken = rows.slice(0, limit);
    const stored = await s.rooms.events.getMany(taken.map((x) => x.rootId));
    const roots = taken.map((x) => stored.get(x.rootId)).filter((e) => e !== undefined && e.roomId === roomId);
    const visible = await filterVisible(s, r.userId, roots, access.membership);
    const last = taken[taken.length - 1];
    const cursors = new Map(taken.map((x) => [x.rootId, streamToken(x.latest - 1)]));
    return { roots: visible, cursors, ...(rows.length > limit && last ? { next: streamToken(last.latest - 1) } : {}) };
}
export async function getThreads(s, r, roomId, req) {
    const page = await threadsPage(s, r, roomId, req);
    const chunk = await serializeEvents(s, r, roomVersionLookup(s), page.roots);
    return page.next !== undefined ? { chunk, next_batch: page.next } : { chunk };
}
