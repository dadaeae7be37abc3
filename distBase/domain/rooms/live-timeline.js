import { readAccess } from "./read-access.js";
import { filterVisible } from "./visibility.js";
import { forReader, roomVersionLookup, serializeEvents, serializeForAnyReader } from "./serialize.js";
import { SyncReads } from "../store/sync-reads.js";
const inFlight = new WeakMap();
/**
 * The page of new events, and its serialization, shared by every live reader asking the same question
 * at the same moment: a new event wakes all of a room's subscribers at once, and they read and
 * serialize one page, not one each. Kept until the turn of the event loop after the read settles (the
 * readers woken together all ask within it), then forgotten: a later reader reads afresh.
 */
function shared(s, roomId, after, upTo) {
    let pages = inFlight.get(s);
    if (!pages)
        inFlight.set(s, (pages = new Map()));
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
function serializedOnce(s, sh, versionOf) {
    return (sh.serialized ??= sh.page.then(async (page) => {
        const out = await serializeForAnyReader(s, versionOf, page);
        return out && new Map(out.map((e) => [e.event_id, e]));
    }));
}
/** The requester's membership in the room from sync's in-memory memberships (current at every commit). */
async function membershipOf(s, userId, roomId) {
    const all = await s.sync.streamCache.membershipsOf(userId, () => new SyncReads(s.storage.sql).membershipsOf(userId));
    return all.find((m) => m.roomId === roomId) ?? null;
}
/** Checks that `r` may read the room now (M_FORBIDDEN otherwise). */
export async function checkLiveAccess(s, r, roomId) {
    await readAccess(s, r, roomId);
}
/** The events of `roomId` with `after < position <= upTo` visible to `r`, oldest first (at most 1000). */
export async function timelineAfter(s, r, roomId, after, upTo) {
    let access;
    try {
        access = await readAccess(s, r, roomId, await membershipOf(s, r.userId, roomId));
    }
    catch {
        return [];
    }
    const limit = Math.min(upTo ?? Number.MAX_SAFE_INTEGER, access.upTo ?? Number.MAX_SAFE_INTEGER);
    const sh = shared(s, roomId, after, limit);
    const visible = await filterVisible(s, r.userId, await sh.page, access.membership);
    if (visible.length === 0)
        return [];
    // Per reader only what differs: which events it may see (above) and its own transaction ids.
    // The page holds this room's events only: its version comes from the room's snapshot (no read).
    const lookup = roomVersionLookup(s);
    const versionOf = (id) => (id === roomId ? Promise.resolve(access.room.version.id) : lookup(id));
    const once = await serializedOnce(s, sh, versionOf);
    const out = once ? visible.map((e) => forReader(r, e, once.get(e.eventId))) : await serializeEvents(s, r, versionOf, visible);
    return out.map((event, i) => ({ event, streamOrdering: visible[i].streamOrdering }));
}
