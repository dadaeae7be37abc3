// The client serialization of a PDU (ClientEvent): the fields clients see, `unsigned` built by the server
// (age, transaction_id, prev_content, redacted_because, membership), and `redacts` offered both at the top
// level and in content whatever the room version. Federation-only fields never reach clients.
// Spec: Client-Server API "Room Event Format" (ClientEvent), "Redactions"; Room Version 11 "Moving the
// redacts property"; m.room.redaction.
import { resolveRoomVersion } from "../rooms/room-versions.js";
import { eventIdOf, roomIdOf } from "./hashes.js";
import { redactContent, redactsOf } from "./redaction.js";
import { cloneJson } from "./types.js";
import { exceedsJsonDepth, MAX_JSON_DEPTH } from "../json-limits.js";
/** Depth checks of content objects already made (stored events' content is shared and never mutated). */
const tooDeep = new WeakMap();
/**
 * The content clients are served. Content nested deeper than MAX_JSON_DEPTH (stored before the bound
 * was enforced, or sent by a server that does not keep it) is served as if the event were redacted —
 * what the room version's redaction rules keep, or nothing if that is still too deep — so one event can
 * never break a room's history for its readers, over any face. Other content is returned as is.
 */
export function servableContent(type, content, version) {
    let deep = tooDeep.get(content);
    if (deep === undefined)
        tooDeep.set(content, (deep = exceedsJsonDepth(content, MAX_JSON_DEPTH)));
    if (!deep)
        return content;
    const kept = redactContent(type, content, version);
    return exceedsJsonDepth(kept, MAX_JSON_DEPTH) ? {} : kept;
}
/** Serializes a PDU for clients. No hashes, signatures, auth_events, prev_events, depth or origin. */
export function toClientEvent(pdu, opts) {
    const v = resolveRoomVersion(opts.roomVersion);
    const eventId = opts.eventId ?? eventIdOf(pdu, v);
    const stored = pdu.content ?? {};
    const content = servableContent(pdu.type, stored, v);
    const out = {
        event_id: eventId,
        type: pdu.type,
        // Redactions get `redacts` mirrored into content below: always a copy then.
        content: content !== stored || (opts.shareContent && pdu.type !== "m.room.redaction") ? content : cloneJson(content),
        sender: pdu.sender,
        origin_server_ts: pdu.origin_server_ts,
    };
    if (!opts.omitRoomId) {
        const roomId = pdu.room_id ?? opts.roomId ?? (v.roomIdIsCreateEventHash && pdu.type === "m.room.create" ? "!" + eventId.slice(1) : roomIdOf(pdu, v));
        if (roomId !== undefined)
            out.room_id = roomId;
    }
    const isState = typeof pdu.state_key === "string";
    if (isState)
        out.state_key = pdu.state_key;
    if (pdu.type === "m.room.redaction") {
        const target = redactsOf(pdu, v);
        if (target !== undefined) {
            out.redacts = target; // top level: native in v1–10, mirrored for older clients in v11+
            if (typeof out.content["redacts"] !== "string")
                out.content["redacts"] = target; // mirrored for newer clients in v1–10
        }
    }
    const unsigned = { ...(opts.extraUnsigned ?? {}) };
    if (opts.now !== undefined)
        unsigned.age = Math.max(0, opts.now - (opts.ageTs ?? pdu.origin_server_ts));
    if (opts.transactionId !== undefined)
        unsigned.transaction_id = opts.transactionId;
    if (isState && opts.prevContent !== undefined)
        unsigned.prev_content = cloneJson(servableContent(pdu.type, opts.prevContent, v));
    if (isState && opts.prevSender !== undefined)
        unsigned["prev_sender"] = opts.prevSender;
    if (isState && opts.replacesState !== undefined)
        unsigned["replaces_state"] = opts.replacesState;
    if (opts.redactedBecause !== undefined)
        unsigned.redacted_because = opts.redactedBecause;
    if (opts.membership !== undefined)
        unsigned.membership = opts.membership;
    if (Object.keys(unsigned).length > 0)
        out.unsigned = unsigned;
    return out;
}
