// The space hierarchy over federation, this server answering (GET /_matrix/federation/v1/hierarchy/{roomId}):
// the room's summary with its m.space.child events, and one level of children — those this server holds
// and the requesting server could peek or join (public, knockable, world_readable, one of its users
// joined, or restricted through a room it is in) summarised, the others it holds named in
// `inaccessible_children` (so are those whose server ACL denies the requesting server); children this
// server does not hold are left out. A room the requesting server could not peek or join is a 404, as an
// unknown one; one whose server ACL denies it, 403 M_FORBIDDEN (spec "Server Access Control Lists").
// No pagination (the requesting server filters).
// Spec: Server-Server API "Spaces" (GET /hierarchy/{roomId}, v1).
import { MatrixError } from "../errors.js";
import { loadRoom } from "../rooms/room-cache.js";
import { SpaceReads } from "../store/spaces.js";
import { joinedServers } from "../federation/membership/residency.js";
import { assertServerAllowed, serverAllowedInState } from "../federation/server-acl.js";
import { allowedRoomIds, entryOf, MAX_CHILDREN_PER_SPACE, RoomFacts, str } from "./hierarchy.js";
/** Could `origin` peek or join `room`? (Synapse's rule for a request over federation.) */
async function accessibleToServer(s, facts, room, origin) {
    const rules = (await facts.state(room, "m.room.join_rules"))?.pdu.content;
    const rule = str(rules?.join_rule);
    if (rule === "public")
        return true;
    if ((rule === "knock" && room.version.knock) || (rule === "knock_restricted" && room.version.knockRestricted))
        return true;
    if (str((await facts.state(room, "m.room.history_visibility"))?.pdu.content.history_visibility) === "world_readable")
        return true;
    if ((await joinedServers(s, room.roomId)).has(origin))
        return true;
    if ((rule === "restricted" && room.version.restricted) || (rule === "knock_restricted" && room.version.knockRestricted)) {
        for (const id of allowedRoomIds(rules))
            if ((await joinedServers(s, id)).has(origin))
                return true;
    }
    return false;
}
export async function federationHierarchy(s, origin, roomId, suggestedOnly) {
    // The facts of rooms, not of a user: no user's memberships are read.
    const facts = new RoomFacts(s, "");
    const root = await loadRoom(s, roomId);
    if (!root || !(await accessibleToServer(s, facts, root, origin)))
        throw new MatrixError("M_NOT_FOUND", "Unknown room", 404);
    // The room's server ACL: a denied server gets the spec's 403 M_FORBIDDEN (after the 404 for a room it
    // could not see anyway, so the answer reveals nothing of a room it has no access to).
    await assertServerAllowed(s, root.state, origin);
    const rootChildren = await facts.children(root, suggestedOnly);
    const children = [];
    const inaccessible = [];
    for (const c of rootChildren.slice(0, MAX_CHILDREN_PER_SPACE)) {
        const child = await loadRoom(s, c.pdu.state_key);
        if (!child)
            continue;
        if ((await serverAllowedInState(s, child.state, origin)) && (await accessibleToServer(s, facts, child, origin)))
            children.push({ room: child, children: await facts.children(child, suggestedOnly) });
        else
            inaccessible.push(child.roomId);
    }
    const counts = await new SpaceReads(s.storage.sql).joinedCounts([roomId, ...children.map((c) => c.room.roomId)]);
    const room = await entryOf(s, facts, root, rootChildren, counts.get(roomId) ?? 0);
    const entries = [];
    for (const c of children)
        entries.push(await entryOf(s, facts, c.room, c.children, counts.get(c.room.roomId) ?? 0));
    return { room, children: entries, inaccessible_children: inaccessible };
}
