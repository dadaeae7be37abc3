// Joining a local user to a room on an admin's word (Synapse admin API "Edit Room Membership",
// POST /v1/join/{roomIdOrAlias}), the way auto-join does: a public room is joined directly; any other is
// joined after the admin, a member of it, invited the user. Non-admins get 403 M_FORBIDDEN.
import { MatrixError } from "../errors.js";
import { requireAdmin } from "./require-admin.js";
import { existingLocalUser } from "./users.js";
import { inviteUser, joinRoom } from "../rooms/membership.js";
import { isValidRoomAlias, isValidRoomId } from "../ids.js";
import { loadRoom, currentStateEvent } from "../rooms/room-cache.js";
/** The requester a server-side action of `userId` runs as (no device, no token). */
export function actingAs(userId, isAdmin = false) {
    return { userId, deviceId: null, isGuest: false, isAdmin, accessTokenId: null };
}
export async function adminJoin(s, r, roomIdOrAlias, body) {
    requireAdmin(r);
    const userId = body.user_id;
    if (userId === undefined)
        throw new MatrixError("M_MISSING_PARAM", "Missing param user_id", 400);
    if (typeof userId !== "string")
        throw new MatrixError("M_INVALID_PARAM", "user_id must be a string", 400);
    if (!isValidRoomId(roomIdOrAlias) && !isValidRoomAlias(roomIdOrAlias))
        throw new MatrixError("M_INVALID_PARAM", `${roomIdOrAlias} was not legal room ID or room alias`, 400);
    const user = await existingLocalUser(s, userId, "join");
    if (user.deactivated)
        throw new MatrixError("M_FORBIDDEN", "User is deactivated", 403);
    // Another server's alias: joinRoom asks that server (the room is then unknown here: no invite needed).
    if (roomIdOrAlias.startsWith("#") && !roomIdOrAlias.endsWith(`:${s.config.server_name}`))
        return joinRoom(s, actingAs(userId, user.admin), roomIdOrAlias);
    const roomId = roomIdOrAlias.startsWith("!") ? roomIdOrAlias : await resolveAlias(s, roomIdOrAlias);
    const room = await loadRoom(s, roomId);
    if (room) {
        const joinRule = (await currentStateEvent(s, room, "m.room.join_rules"))?.content.join_rule;
        const membership = (await currentStateEvent(s, room, "m.room.member", userId))?.content.membership;
        if (joinRule !== "public" && membership !== "join" && membership !== "invite") {
            const adminMembership = (await currentStateEvent(s, room, "m.room.member", r.userId))?.content.membership;
            if (adminMembership !== "join")
                throw new MatrixError("M_FORBIDDEN", `${r.userId} not in room ${roomId}, and room isn't public`, 403);
            await inviteUser(s, r, roomId, { user_id: userId });
        }
    }
    return joinRoom(s, actingAs(userId, user.admin), roomId);
}
async function resolveAlias(s, alias) {
    for (const resolve of s.extensions.aliasResolvers) {
        const id = await resolve(s, alias);
        if (id)
            return id;
    }
    throw new MatrixError("M_NOT_FOUND", "Room alias not found", 404);
}
