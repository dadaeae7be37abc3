// Finding room events by full text, as the requester may see them: the rooms they are joined to (whole)
// and the rooms they left or were banned from (up to that moment, unless forgotten), narrowed by a
// RoomEventFilter, with history visibility applied to every hit. Pages follow the index's order (rank or
// recency) with opaque batch tokens; a token may also pin the search to one room or sender (the groups'
// next_batch). Shared by POST /search and GraphQL searchMessages.
// Spec: Client-Server API "Server Side Search".
import { MatrixError } from "../errors.js";
import { matchesFilter } from "../filters/room-event-filter.js";
import { filterVisible } from "../rooms/visibility.js";
import { SEARCH_KEYS } from "./index-hooks.js";
import { checkSearchTerm } from "../text.js";
const MAX_WORDS = 32;
export const DEFAULT_SEARCH_LIMIT = 10;
export const MAX_SEARCH_LIMIT = 100;
/** The words of a search term: runs of letters and digits, lower-cased, each searched as a prefix. */
export function searchWords(term) {
    const words = term.normalize("NFKC").toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
    return [...new Set(words)].slice(0, MAX_WORDS);
}
export function encodeBatchToken(t) {
    const raw = { o: t.orderBy, p: t.after.streamOrdering };
    if (t.orderBy === "rank")
        raw.r = t.after.rank;
    if (t.room !== undefined)
        raw.room = t.room;
    if (t.sender !== undefined)
        raw.sender = t.sender;
    return Buffer.from(JSON.stringify(raw), "utf8").toString("base64url");
}
export function decodeBatchToken(token) {
    const bad = () => new MatrixError("M_INVALID_PARAM", "Invalid next_batch token", 400);
    let raw;
    try {
        raw = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
    }
    catch {
        throw bad();
    }
    if (typeof raw !== "object" || raw === null)
        throw bad();
    const { o, p, r, room, sender } = raw;
    if ((o !== "rank" && o !== "recent") || typeof p !== "number" || !Number.isSafeInteger(p))
        throw bad();
    if (o === "rank" && (typeof r !== "number" || !Number.isFinite(r)))
        throw bad();
    if ((room !== undefined && typeof room !== "string") || (sender !== undefined && typeof sender !== "string"))
        throw bad();
    return { orderBy: o, after: { rank: o === "rank" ? r : 0, streamOrdering: p }, room, sender };
}
/** One page of the events matching `req` that `r` may see. */
export async function findEvents(s, r, req, batch) {
    checkSearchTerm(req.term, "search_term");
    const orderBy = req.orderBy ?? "rank";
    if (batch && batch.orderBy !== orderBy)
        throw new MatrixError("M_INVALID_PARAM", "next_batch belongs to a search with another order_by", 400);
    const filter = req.filter ?? {};
    const words = searchWords(req.term);
    const keys = req.keys && req.keys.length > 0 ? req.keys : Object.keys(SEARCH_KEYS);
    const limit = Math.min(filter.limit || DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT);
    const scopes = (await s.search.scopesOf(r.userId)).filter((x) => (!filter.rooms || filter.rooms.includes(x.roomId)) && !filter.not_rooms?.includes(x.roomId) && (batch?.room === undefined || batch.room === x.roomId));
    const memberships = new Map(scopes.map((x) => [x.roomId, x.membership]));
    let senders = filter.senders;
    if (batch?.sender !== undefined)
        senders = (senders ?? [batch.sender]).filter((x) => x === batch.sender);
    const query = {
        words,
        rooms: scopes.map(({ roomId, upTo }) => ({ roomId, upTo })),
        types: keys.map((k) => SEARCH_KEYS[k]),
        senders,
        notSenders: filter.not_senders,
        orderBy,
        limit,
    };
    const empty = { hits: [], count: 0, highlights: words, next: undefined, from: batch, memberships };
    if (words.length === 0 || scopes.length === 0)
        return empty;
    const hits = [];
    let cursor = batch?.after;
    let more = false;
    const batchSize = Math.max(limit * 2, 20);
    for (let round = 0;; round++) {
        if (round === 10) {
            more = true; // give the page back as it is; the token goes on from here
            break;
        }
        const raw = await s.search.search({ ...query, after: cursor, limit: batchSize });
        const events = await s.rooms.events.getMany(raw.map((h) => h.eventId));
        const visible = await visibleIds(s, r.userId, [...events.values()], memberships);
        let i = 0;
        for (; i < raw.length && hits.length < limit; i++) {
            const h = raw[i];
            cursor = { rank: h.rank, streamOrdering: h.streamOrdering };
            const e = events.get(h.eventId);
            if (e && visible.has(e.eventId) && matchesFilter(filter, e.pdu, e.roomId))
                hits.push({ event: e, rank: h.rank });
        }
        if (hits.length >= limit) {
            more = i < raw.length || raw.length === batchSize;
            break;
        }
        if (raw.length < batchSize)
            break;
    }
    const next = more && cursor ? { orderBy, after: cursor, room: batch?.room, sender: batch?.sender } : undefined;
    return { hits, count: await s.search.count(query), highlights: words, next, from: batch, memberships };
}
async function visibleIds(s, userId, events, memberships) {
    const byRoom = new Map();
    for (const e of events)
        byRoom.set(e.roomId, [...(byRoom.get(e.roomId) ?? []), e]);
    const out = new Set();
    for (const [roomId, list] of byRoom)
        for (const e of await filterVisible(s, userId, list, memberships.get(roomId)))
            out.add(e.eventId);
    return out;
}
