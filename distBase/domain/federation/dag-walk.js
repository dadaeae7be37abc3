import { authEventIds, prevEventIds } from "../events/types.js";
/** Most events an auth chain walk collects (a room's whole auth graph is far smaller in practice). */
const MAX_AUTH_CHAIN = 100_000;
/** An event's auth event ids, with the create event v12 implies (its id is the room id's). */
export function authIdsOf(pdu, room) {
    const ids = authEventIds(pdu);
    if (room.version.roomIdIsCreateEventHash && !(pdu.type === "m.room.create" && pdu.state_key === "")) {
        const createId = "$" + room.roomId.slice(1);
        if (!ids.includes(createId))
            ids.unshift(createId);
    }
    return ids;
}
/**
 * The auth chain of `events`: every stored event of the room reachable through auth_events, the given
 * events themselves left out unless another one's chain holds them.
 */
export async function authChainOf(s, room, events) {
    const out = new Map();
    const seen = new Set();
    let front = [...new Set(events.flatMap((e) => authIdsOf(e.pdu, room)))];
    for (const id of front)
        seen.add(id);
    while (front.length > 0 && out.size < MAX_AUTH_CHAIN) {
        const found = await s.rooms.events.getMany(front);
        const next = [];
        for (const id of front) {
            const e = found.get(id);
            if (!e || e.roomId !== room.roomId)
                continue;
            out.set(id, e);
            for (const a of authIdsOf(e.pdu, room)) {
                if (seen.has(a))
                    continue;
                seen.add(a);
                next.push(a);
            }
        }
        front = next;
    }
    return [...out.values()];
}
/**
 * The events /get_missing_events answers: a breadth-first walk of prev_events from `latest`, never
 * entering `earliest`, stopping at `limit` ids; events below `minDepth` are left out and not walked
 * through. Oldest first (approximately: the walk reversed), as Synapse answers.
 */
export async function missingEventsWalk(s, room, earliest, latest, limit, minDepth) {
    const seen = new Set(earliest);
    let front = [...new Set(latest)].filter((id) => !seen.has(id));
    for (const id of front)
        seen.add(id);
    const out = [];
    let first = true;
    while (front.length > 0 && out.length < limit) {
        const found = await s.rooms.events.getMany(front);
        const next = [];
        for (const id of front) {
            const e = found.get(id);
            if (!e || e.roomId !== room.roomId || e.outlier)
                continue;
            if (!first) {
                if (e.pdu.depth < minDepth)
                    continue;
                out.push(e);
                if (out.length >= limit)
                    break;
            }
            for (const prev of prevEventIds(e.pdu)) {
                if (seen.has(prev))
                    continue;
                seen.add(prev);
                next.push(prev);
            }
        }
        front = next;
        first = false;
    }
    return out.reverse();
}
/**
 * The events /backfill answers: `from` (the given events, when stored in the room) and the events before
 * them, walking prev_events through the DAG (outliers are not in it) newest first — by depth, then stream
 * position — at most `limit`, newest first. The room's events below the newest one are read ahead in one
 * query, so the walk's lookups are served from the event cache.
 */
export async function backfillWalk(s, room, from, limit) {
    const out = new Map();
    const queued = new Map();
    const seen = new Set();
    const enqueue = async (ids) => {
        const fresh = ids.filter((id) => !seen.has(id));
        for (const id of fresh)
            seen.add(id);
        if (fresh.length === 0)
            return;
        const found = await s.rooms.events.getMany(fresh);
        for (const e of found.values())
            if (e.roomId === room.roomId && !e.outlier)
                queued.set(e.eventId, e);
    };
    await enqueue([...from]);
    if (queued.size === 0)
        return [];
    await s.rooms.events.readAheadInDag(room.roomId, Math.max(...[...queued.values()].map((e) => e.pdu.depth)), limit * 2);
    const newer = (a, b) => b.pdu.depth - a.pdu.depth || b.streamOrdering - a.streamOrdering;
    while (queued.size > 0 && out.size < limit) {
        let next;
        for (const e of queued.values())
            if (!next || newer(e, next) < 0)
                next = e;
        queued.delete(next.eventId);
        out.set(next.eventId, next);
        await enqueue(prevEventIds(next.pdu));
    }
    return [...out.values()];
}
