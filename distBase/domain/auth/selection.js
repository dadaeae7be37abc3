// Auth events selection (which state an event's auth_events are drawn from) and the auth rule on the
// auth_events list itself: no duplicate (type, state_key), nothing outside the selection, the create event
// present (v1–11) or absent (v12), no rejected entries, every entry in the event's room.
// Spec: Server-Server API "Auth events selection"; Room Versions "Authorisation rules" rule 2 (3 in v12).
import { authEventIds } from "../events/types.js";
import { roomIdOf } from "../events/hashes.js";
import { resolveRoomVersion } from "../rooms/room-versions.js";
import { forbid, isPlainObject, stateMapKey } from "./context.js";
import { thirdPartyInviteToken } from "./third-party-invite.js";
/**
 * The (type, state_key) pairs whose current state events make up the auth_events of an event with these
 * fields. Empty for the create event.
 */
export function authTypesForEvent(version, type, stateKey, sender, content) {
    const v = resolveRoomVersion(version);
    if (type === "m.room.create" && stateKey === "")
        return [];
    const out = [];
    const seen = new Set();
    const add = (t, k) => {
        const key = stateMapKey(t, k);
        if (!seen.has(key)) {
            seen.add(key);
            out.push([t, k]);
        }
    };
    if (v.createInAuthEvents)
        add("m.room.create", "");
    add("m.room.power_levels", "");
    add("m.room.member", sender);
    if (type === "m.room.member" && typeof stateKey === "string") {
        add("m.room.member", stateKey);
        const membership = isPlainObject(content) ? content["membership"] : undefined;
        if (membership === "join" || membership === "invite" || membership === "knock")
            add("m.room.join_rules", "");
        if (membership === "invite") {
            const token = thirdPartyInviteToken(content);
            if (token !== undefined)
                add("m.room.third_party_invite", token);
        }
        const via = content["join_authorised_via_users_server"];
        if (membership === "join" && v.restricted && typeof via === "string")
            add("m.room.member", via);
    }
    return out;
}
/**
 * Checks an event's auth_events (given as the events themselves, in any order) against the rule on the
 * list. The caller resolves `event.auth_events` ids to events; a missing one is the caller's concern.
 */
export function checkAuthEventsList(event, authEvents, version, options = {}) {
    const v = resolveRoomVersion(version);
    if (event.type === "m.room.create" && event.state_key === "")
        return; // rule 1 decides create events
    const ids = authEventIds(event);
    if (new Set(ids).size !== ids.length)
        forbid("auth_events.duplicate", "auth_events lists the same event twice");
    if (authEvents.length !== ids.length)
        forbid("auth_events.count", "the auth events given do not match auth_events");
    const allowed = new Set(authTypesForEvent(v, event.type, event.state_key, event.sender, event.content).map(([t, k]) => stateMapKey(t, k)));
    const seen = new Set();
    const roomId = roomIdOf(event, v);
    let hasCreate = false;
    for (const ae of authEvents) {
        if (typeof ae.state_key !== "string")
            forbid("auth_events.not_state", `auth event of type ${ae.type} is not a state event`);
        const key = stateMapKey(ae.type, ae.state_key);
        if (seen.has(key))
            forbid("auth_events.duplicate", `auth_events has two (${ae.type}, ${JSON.stringify(ae.state_key)}) entries`);
        seen.add(key);
        if (!allowed.has(key))
            forbid("auth_events.unexpected", `auth_events has an unexpected (${ae.type}, ${JSON.stringify(ae.state_key)}) entry`);
        if (ae.type === "m.room.create")
            hasCreate = true;
        if (options.isRejected?.(ae))
            forbid("auth_events.rejected", `auth event (${ae.type}, ${JSON.stringify(ae.state_key)}) was rejected`);
        if (ae.room_id !== roomId)
            forbid("auth_events.room_id", "an auth event belongs to another room");
    }
    if (v.createInAuthEvents && !hasCreate)
        forbid("auth_events.create", "auth_events has no m.room.create event");
}
