import { domainOf } from "../../events/types.js";
import { withPartialStateServers } from "../room-servers.js";
/**
 * The servers whose users are joined to the room (this one included when it is). In a room joined with
 * partial state, the servers its join's answer named too (their members are not known here yet).
 */
export async function joinedServers(s, roomId) {
    const out = [];
    for (const m of await s.rooms.store.membersOf(roomId)) {
        if (m.membership !== "join")
            continue;
        const d = domainOf(m.userId);
        if (d)
            out.push(d);
    }
    return new Set(await withPartialStateServers(s, roomId, out));
}
/** Is one of this server's users joined to the room? */
export async function hostInRoom(s, roomId) {
    return (await joinedServers(s, roomId)).has(s.config.server_name);
}
/** This server's users joined to the room. */
export async function localJoinedMembers(s, roomId) {
    return (await s.rooms.store.membersOf(roomId)).filter((m) => m.membership === "join" && domainOf(m.userId) === s.config.server_name).map((m) => m.userId);
}
