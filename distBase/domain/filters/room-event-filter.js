// RoomEventFilter (spec: Client-Server API "Filtering"): which events a read returns — types and
// not_types with `*` wildcards, senders, not_senders, rooms, not_rooms, contains_url, limit — plus the
// lazy-loading flags. Parsed once per request; /messages, /context and /sync share it.
import { MatrixError } from "../errors.js";
import { parseJsonText } from "../json-limits.js";
import { isPlainObject } from "../events/types.js";
function stringList(v, name) {
    if (v === undefined || v === null)
        return undefined;
    if (!Array.isArray(v) || v.some((x) => typeof x !== "string"))
        throw new MatrixError("M_BAD_JSON", `${name} must be a list of strings`);
    return v;
}
function bool(v, name) {
    if (v === undefined || v === null)
        return undefined;
    if (typeof v !== "boolean")
        throw new MatrixError("M_BAD_JSON", `${name} must be a boolean`);
    return v;
}
export function parseRoomEventFilter(raw, where = "filter") {
    if (raw === undefined || raw === null)
        return {};
    if (!isPlainObject(raw))
        throw new MatrixError("M_BAD_JSON", `${where} must be an object`);
    const limit = raw.limit;
    if (limit !== undefined && (typeof limit !== "number" || !Number.isInteger(limit) || limit < 0))
        throw new MatrixError("M_BAD_JSON", `${where}.limit must be a non-negative integer`);
    return {
        limit: limit,
        types: stringList(raw.types, `${where}.types`),
        not_types: stringList(raw.not_types, `${where}.not_types`),
        senders: stringList(raw.senders, `${where}.senders`),
        not_senders: stringList(raw.not_senders, `${where}.not_senders`),
        rooms: stringList(raw.rooms, `${where}.rooms`),
        not_rooms: stringList(raw.not_rooms, `${where}.not_rooms`),
        contains_url: bool(raw.contains_url, `${where}.contains_url`),
        lazy_load_members: bool(raw.lazy_load_members, `${where}.lazy_load_members`),
        include_redundant_members: bool(raw.include_redundant_members, `${where}.include_redundant_members`),
        unread_thread_notifications: bool(raw.unread_thread_notifications, `${where}.unread_thread_notifications`),
    };
}
/** Parses the `filter` query parameter of /messages and /context (URL-encoded JSON). */
export function parseFilterParam(text) {
    if (text === undefined)
        return {};
    return parseRoomEventFilter(parseJsonText(text, { what: "filter" }));
}
/**
 * Does `value` match `pattern`, where `*` matches any run of characters? Linear-time two-pointer
 * matching (a regular expression built from a client's pattern could backtrack for ages).
 */
export function globMatch(pattern, value) {
    if (!pattern.includes("*"))
        return pattern === value;
    let p = 0;
    let v = 0;
    let star = -1;
    let resume = 0;
    while (v < value.length) {
        if (p < pattern.length && pattern[p] !== "*" && pattern[p] === value[v]) {
            p++;
            v++;
        }
        else if (p < pattern.length && pattern[p] === "*") {
            star = p++;
            resume = v;
        }
        else if (star >= 0) {
            p = star + 1;
            v = ++resume;
        }
        else
            return false;
    }
    while (p < pattern.length && pattern[p] === "*")
        p++;
    return p === pattern.length;
}
export function matchesFilter(f, pdu, roomId) {
    if (f.not_rooms?.includes(roomId))
        return false;
    if (f.rooms && !f.rooms.includes(roomId))
        return false;
    if (f.not_senders?.includes(pdu.sender))
        return false;
    if (f.senders && !f.senders.includes(pdu.sender))
        return false;
    if (f.not_types?.some((t) => globMatch(t, pdu.type)))
        return false;
    if (f.types && !f.types.some((t) => globMatch(t, pdu.type)))
        return false;
    if (f.contains_url !== undefined) {
        const hasUrl = typeof pdu.content?.url === "string";
        if (hasUrl !== f.contains_url)
            return false;
    }
    return true;
}
