// The sync Filter (spec: Client-Server API "Filtering", POST /user/{userId}/filter): event_fields,
// event_format, account_data and presence EventFilters, and the room filter — rooms/not_rooms,
// include_leave, and RoomEventFilters for timeline, state, ephemeral and account_data. Validated once
// (M_BAD_JSON / M_INVALID_PARAM), stored as sent, re-parsed per /sync. Lazy-loading flags are read from
// room.state (as the spec places them) or room.timeline.
import { MatrixError } from "../errors.js";
import { isPlainObject } from "../events/types.js";
import { matchesFilter, parseRoomEventFilter } from "./room-event-filter.js";
/** The default timeline limit when the filter gives none (as Synapse). */
export const DEFAULT_TIMELINE_LIMIT = 10;
function strings(v, name) {
    if (v === undefined || v === null)
        return undefined;
    if (!Array.isArray(v) || v.some((x) => typeof x !== "string"))
        throw new MatrixError("M_BAD_JSON", `${name} must be a list of strings`);
    return v;
}
function roomIds(v, name) {
    for (const id of v ?? [])
        if (!id.startsWith("!"))
            throw new MatrixError("M_INVALID_PARAM", `${name} contains an invalid room ID: ${id}`);
    return v;
}
function userIds(f, name) {
    for (const [k, list] of [["senders", f.senders], ["not_senders", f.not_senders]])
        for (const id of list ?? [])
            if (!id.startsWith("@") || !id.includes(":"))
                throw new MatrixError("M_INVALID_PARAM", `${name}.${k} contains an invalid user ID: ${id}`);
    roomIds(f.rooms, `${name}.rooms`);
    roomIds(f.not_rooms, `${name}.not_rooms`);
    return f;
}
function eventFilter(raw, name) {
    return userIds(parseRoomEventFilter(raw, name), name);
}
/** Validates and parses a filter definition (the body of POST /user/{userId}/filter or inline JSON). */
export function parseSyncFilter(raw) {
    if (!isPlainObject(raw))
        throw new MatrixError("M_BAD_JSON", "A filter must be a JSON object");
    const format = raw.event_format ?? "client";
    if (format !== "client" && format !== "federation")
        throw new MatrixError("M_BAD_JSON", "event_format must be client or federation");
    const room = raw.room ?? {};
    if (!isPlainObject(room))
        throw new MatrixError("M_BAD_JSON", "room must be an object");
    const includeLeave = room.include_leave ?? false;
    if (typeof includeLeave !== "boolean")
        throw new MatrixError("M_BAD_JSON", "room.include_leave must be a boolean");
    const eventFields = strings(raw.event_fields, "event_fields");
    for (const f of eventFields ?? [])
        if (f === "")
            throw new MatrixError("M_BAD_JSON", "event_fields entries must not be empty");
    return {
        event_fields: eventFields,
        event_format: format,
        account_data: eventFilter(raw.account_data, "account_data"),
        presence: eventFilter(raw.presence, "presence"),
        room: {
            rooms: roomIds(strings(room.rooms, "room.rooms"), "room.rooms"),
            not_rooms: roomIds(strings(room.not_rooms, "room.not_rooms"), "room.not_rooms"),
            include_leave: includeLeave,
            timeline: eventFilter(room.timeline, "room.timeline"),
            state: eventFilter(room.state, "room.state"),
            ephemeral: eventFilter(room.ephemeral, "room.ephemeral"),
            account_data: eventFilter(room.account_data, "room.account_data"),
        },
    };
}
export const DEFAULT_SYNC_FILTER = parseSyncFilter({});
/** Is this room wanted by the room filter (rooms / not_rooms)? */
export function roomWanted(f, roomId) {
    if (f.room.not_rooms?.includes(roomId))
        return false;
    if (f.room.rooms && !f.room.rooms.includes(roomId))
        return false;
    return true;
}
export const lazyLoadMembers = (f) => Boolean(f.room.state.lazy_load_members ?? f.room.timeline.lazy_load_members);
export const includeRedundantMembers = (f) => Boolean(f.room.state.include_redundant_members ?? f.room.timeline.include_redundant_members);
/** Filters non-room events ({type, content, sender?}) by an EventFilter (types, senders, limit). */
export function filterPlainEvents(f, events) {
    const out = events.filter((e) => matchesFilter({ ...f, rooms: undefined, not_rooms: undefined, contains_url: undefined }, { type: e.type, sender: e.sender ?? "", content: {} }, ""));
    return f.limit !== undefined ? out.slice(0, f.limit) : out;
}
/** Keeps only `fields` (dotted paths, `\.` escaping a dot) of a serialized event (spec "event_fields"). */
export function pickEventFields(event, fields) {
    if (!fields)
        return event;
    const out = {};
    for (const field of fields) {
        const path = field.split(/(?<!\\)\./).map((p) => p.replace(/\\\./g, "."));
        let src = event;
        for (const p of path)
            src = isPlainObject(src) ? src[p] : undefined;
        if (src === undefined)
            continue;
        let dst = out;
        for (const p of path.slice(0, -1))
            dst = (isPlainObject(dst[p]) ? dst[p] : (dst[p] = {}));
        dst[path[path.length - 1]] = src;
    }
    return out;
}
