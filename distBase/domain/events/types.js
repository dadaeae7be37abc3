// The PDU (persistent data unit) shape shared by every room version, and small readers over it that hide
// the v1–2 / v3+ differences (event_id field, tuple-shaped prev_events/auth_events, room_id on v12 create).
// Spec: Server-Server API "PDUs"; Room Versions "Event format" (pdu_v1, v3, v4, v6, v11, v12).
/** Ids of the events an event references, whatever the room version's shape. */
export function referencedIds(refs) {
    if (!Array.isArray(refs))
        return [];
    return refs.map((r) => (Array.isArray(r) ? String(r[0]) : String(r)));
}
export function prevEventIds(pdu) {
    return referencedIds(pdu.prev_events);
}
export function authEventIds(pdu) {
    return referencedIds(pdu.auth_events);
}
export function isStateEvent(pdu) {
    return typeof pdu.state_key === "string";
}
/** The server name of a user id, room id (v1–11) or v1–2 event id: everything after the first `:`. */
export function domainOf(id) {
    const i = id.indexOf(":");
    return i < 0 ? undefined : id.slice(i + 1);
}
/** Deep copy of a JSON value (events are plain JSON), at any depth. */
export { cloneJson } from "../json-limits.js";
export function isPlainObject(v) {
    return typeof v === "object" && v !== null && !Array.isArray(v);
}
