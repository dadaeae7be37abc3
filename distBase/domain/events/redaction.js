// The redaction algorithm of every room version: which top-level keys and which content keys survive.
// Also reads the id a redaction targets (`redacts` top-level in v1–10, in content from v11).
// Spec: Room Versions v1/v6/v8/v9/v11 "Redactions"; Client-Server API "Redactions".
import { resolveRoomVersion } from "../rooms/room-versions.js";
import { cloneJson, isPlainObject } from "./types.js";
const TOP_LEVEL_V1 = [
    "event_id",
    "type",
    "room_id",
    "sender",
    "state_key",
    "content",
    "hashes",
    "signatures",
    "depth",
    "prev_events",
    "prev_state",
    "auth_events",
    "origin",
    "origin_server_ts",
    "membership",
];
// v11 no longer protects origin, membership and prev_state.
const TOP_LEVEL_V11 = TOP_LEVEL_V1.filter((k) => k !== "origin" && k !== "membership" && k !== "prev_state");
const POWER_LEVELS_V1 = ["ban", "events", "events_default", "kick", "redact", "state_default", "users", "users_default"];
const POWER_LEVELS_V11 = [...POWER_LEVELS_V1, "invite"];
/** The top-level keys a redacted event keeps in this room version. */
export function keptTopLevelKeys(version) {
    return resolveRoomVersion(version).updatedRedactionRules ? TOP_LEVEL_V11 : TOP_LEVEL_V1;
}
function pick(content, keys) {
    const out = {};
    for (const k of keys)
        if (Object.hasOwn(content, k))
            out[k] = cloneJson(content[k]);
    return out;
}
/** The content an event of `type` keeps when redacted. */
export function redactContent(type, content, version) {
    const v = resolveRoomVersion(version);
    if (!isPlainObject(content))
        return {};
    switch (type) {
        case "m.room.member": {
            const keys = v.redactionKeepsJoinAuthorisedVia ? ["membership", "join_authorised_via_users_server"] : ["membership"];
            const out = pick(content, keys);
            if (v.updatedRedactionRules) {
                const tpi = content["third_party_invite"];
                if (isPlainObject(tpi) && Object.hasOwn(tpi, "signed"))
                    out["third_party_invite"] = { signed: cloneJson(tpi["signed"]) };
            }
            return out;
        }
        case "m.room.create":
            return v.updatedRedactionRules ? cloneJson(content) : pick(content, ["creator"]);
        case "m.room.join_rules":
            return pick(content, v.redactionKeepsJoinRulesAllow ? ["join_rule", "allow"] : ["join_rule"]);
        case "m.room.power_levels":
            return pick(content, v.updatedRedactionRules ? POWER_LEVELS_V11 : POWER_LEVELS_V1);
        case "m.room.history_visibility":
            return pick(content, ["history_visibility"]);
        case "m.room.aliases":
            return v.redactionKeepsAliases ? pick(content, ["aliases"]) : {};
        case "m.room.redaction":
            return v.updatedRedactionRules ? pick(content, ["redacts"]) : {};
        default:
            return {};
    }
}
/**
 * Returns a redacted copy of `pdu` (the input is not modified). `unsigned` is removed like any other
 * unprotected key; a server that shows the result to clients adds `redacted_because` itself.
 * `shareTopLevel` reuses the top-level values instead of copying them, for a caller that only encodes
 * the result and drops it (signing, hashing).
 */
export function redactEvent(pdu, version, opts = {}) {
    const v = resolveRoomVersion(version);
    const out = {};
    for (const k of keptTopLevelKeys(v)) {
        if (k === "content")
            continue;
        if (Object.hasOwn(pdu, k) && pdu[k] !== undefined)
            out[k] = opts.shareTopLevel ? pdu[k] : cloneJson(pdu[k]);
    }
    out["content"] = redactContent(pdu.type, pdu.content, v);
    return out;
}
/** The event id a redaction event targets, or undefined (not a redaction, or the field is missing). */
export function redactsOf(pdu, version) {
    if (pdu.type !== "m.room.redaction")
        return undefined;
    const v = resolveRoomVersion(version);
    const target = v.redactsInContent ? pdu.content["redacts"] : pdu.redacts;
    return typeof target === "string" ? target : undefined;
}
