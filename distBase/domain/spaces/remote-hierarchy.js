import { isPlainObject } from "../events/types.js";
import { isValidRoomId } from "../ids.js";
import { fedPath } from "../../federation/client.js";
import { candidateServers } from "../federation/membership/handshake.js";
import { str } from "./hierarchy.js";
const STRING_FIELDS = ["name", "topic", "canonical_alias", "avatar_url", "room_type", "encryption"];
/** Most children of one answer taken, and most children_state entries of one room. */
const MAX_CHILDREN = 50;
const MAX_CHILDREN_STATE = 100;
/** Servers tried for one room. */
const MAX_SERVERS = 3;
/** A summary from another server, or undefined when it is not one. */
export function summaryOf(v) {
    if (!isPlainObject(v) || typeof v.room_id !== "string" || !isValidRoomId(v.room_id))
        return undefined;
    if (!Number.isSafeInteger(v.num_joined_members) || v.num_joined_members < 0)
        return undefined;
    const children = Array.isArray(v.children_state) ? v.children_state.slice(0, MAX_CHILDREN_STATE) : [];
    const out = {
        room_id: v.room_id,
        num_joined_members: v.num_joined_members,
        world_readable: v.world_readable === true,
        guest_can_join: v.guest_can_join === true,
        join_rule: str(v.join_rule) ?? "public",
        room_version: str(v.room_version) ?? "",
        children_state: children
            .filter((e) => isPlainObject(e) && e.type === "m.space.child" && typeof e.state_key === "string" && isPlainObject(e.content) && typeof e.sender === "string" && Number.isSafeInteger(e.origin_server_ts))
            .map((e) => ({ type: "m.space.child", state_key: e.state_key, content: e.content, sender: e.sender, origin_server_ts: e.origin_server_ts })),
    };
    if (out.room_version === "")
        delete out.room_version;
    for (const f of STRING_FIELDS)
        if (typeof v[f] === "string")
            out[f] = v[f];
    if (Array.isArray(v.allowed_room_ids))
        out.allowed_room_ids = v.allowed_room_ids.filter((x) => typeof x === "string").slice(0, MAX_CHILDREN);
    return out;
}
/** How long a remote room's answer is reused, and how many are kept (Synapse's get_room_hierarchy_cache). */
const CACHE_MS = 5 * 60_000;
const CACHE_SIZE = 1000;
function answersOf(s) {
    return s.caches.get("remote_room_hierarchy", CACHE_SIZE);
}
/**
 * The summary of `roomId` (and of its children) from the first of `via` that answers one; undefined when
 * none does. An answer is reused for a while (paging a local /hierarchy does not ask again for each page);
 * failures are not remembered.
 */
export async function fetchRemoteSummary(s, roomId, via, suggestedOnly) {
    const cache = answersOf(s);
    const key = `${suggestedOnly ? "s" : "a"}${roomId}`;
    const hit = cache.get(key);
    if (hit && s.clock.now() - hit.at < CACHE_MS)
        return hit.summary;
    const summary = await askRemoteSummary(s, roomId, via, suggestedOnly);
    if (summary)
        cache.set(key, { at: s.clock.now(), summary });
    return summary;
}
async function askRemoteSummary(s, roomId, via, suggestedOnly) {
    for (const server of candidateServers(s, via).slice(0, MAX_SERVERS)) {
        let answer;
        try {
            answer = await s.federation.getJson(server, fedPath `/_matrix/federation/v1/hierarchy/${roomId}`, { suggested_only: String(suggestedOnly) }, { maxBytes: 1024 * 1024 });
        }
        catch (err) {
            s.log.info({ server, roomId, err: err.message }, "could not read a room's hierarchy from this server");
            continue;
        }
        if (!isPlainObject(answer))
            continue;
        const room = summaryOf(answer.room);
        if (!room || room.room_id !== roomId)
            continue;
        const children = (Array.isArray(answer.children) ? answer.children.slice(0, MAX_CHILDREN) : []).map(summaryOf).filter((c) => c !== undefined && c.room_id !== roomId);
        return { room, children };
    }
    return undefined;
}
/** May the user (with `membership` of the room, and `joinedTo` telling their joined rooms) see this remote room? */
export function remoteRoomVisible(room, membership, joinedTo) {
    if (room.join_rule === "public" || room.join_rule === "knock" || room.join_rule === "knock_restricted" || room.world_readable)
        return true;
    if (membership === "join" || membership === "invite")
        return true;
    if (room.join_rule === "restricted")
        return (room.allowed_room_ids ?? []).some(joinedTo);
    return false;
}
