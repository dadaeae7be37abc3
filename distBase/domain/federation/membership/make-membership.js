import { MatrixError } from "../../errors.js";
import { parseUserId } from "../../ids.js";
import { loadRoom } from "../../rooms/room-cache.js";
import { assertServerAllowed } from "../server-acl.js";
import { unsignedPdu } from "../../rooms/build-event.js";
import { authorizeWithState } from "../../rooms/pipeline/checks.js";
import { restrictedJoin } from "../../rooms/restricted-join.js";
import { hostInRoom } from "./residency.js";
import { refuseHandshakeWhilePartial } from "../partial-state/refusals.js";
/** The room, when this server is in it; 404 otherwise (as Synapse: not an active room on this server). */
export async function residentRoom(s, roomId) {
    const room = await loadRoom(s, roomId);
    if (!room || !(await hostInRoom(s, roomId)))
        throw new MatrixError("M_NOT_FOUND", "Not an active room on this server", 404);
    return room;
}
/** A remote server may speak only for its own users. */
export function requireOriginsUser(origin, userId) {
    let server;
    try {
        server = parseUserId(userId).serverName;
    }
    catch {
        throw new MatrixError("M_INVALID_PARAM", "Invalid user id", 400);
    }
    if (server !== origin)
        throw new MatrixError("M_FORBIDDEN", "User not from origin", 403);
}
/** The `join_authorised_via_users_server` a restricted join needs from this server, or a refusal as Synapse's. */
async function authorisingUser(s, room, userId) {
    const r = await restrictedJoin(s, room, userId);
    switch (r.kind) {
        case "unrestricted":
            return undefined;
        case "authorised":
            return r.via;
        case "no_authoriser":
            throw new MatrixError("M_UNABLE_TO_GRANT_JOIN", "Unable to find a user which could issue an invite", 400);
        case "not_allowed":
            if (r.unknownRooms)
                throw new MatrixError("M_UNABLE_TO_AUTHORISE_JOIN", `Unable to check if ${userId} is in allowed rooms`, 400);
            throw new MatrixError("M_FORBIDDEN", "You do not belong to any of the required rooms/spaces to join this room", 403);
    }
}
/**
 * GET /make_join (membership "join", with the versions the origin supports: `["1"]` when it named none),
 * GET /make_knock (its `ver` required: knocking came with room version 7) and GET /make_leave.
 */
export async function makeMembership(s, origin, roomId, userId, membership, supportedVersions) {
    requireOriginsUser(origin, userId);
    const room = await residentRoom(s, roomId);
    // Synapse answers make_leave in a partial-state room (only its send_leave is refused).
    if (membership !== "leave")
        await refuseHandshakeWhilePartial(s, roomId, `make_${membership}`);
    await assertServerAllowed(s, room.state, origin);
    const v = room.version;
    if (membership !== "leave" && !(supportedVersions ?? ["1"]).includes(v.id))
        throw new MatrixError("M_INCOMPATIBLE_ROOM_VERSION", `Your homeserver does not support the features required to ${membership} on this room (version ${v.id})`, 400, { room_version: v.id });
    // As Synapse: a room version without knocking is a 403 before the join rules are looked at.
    if (membership === "knock" && !v.knock)
        throw new MatrixError("M_FORBIDDEN", "This room version does not support knocking", 403);
    const content = { membership };
    if (membership === "join") {
        const via = await authorisingUser(s, room, userId);
        if (via)
            content.join_authorised_via_users_server = via;
    }
    const draft = { type: "m.room.member", stateKey: userId, sender: userId, content };
    const ctx = { roomId, version: v, state: room.state, extremities: room.extremities, maxDepth: room.maxDepth };
    const pdu = await unsignedPdu(s, ctx, draft, s.clock.now(), s.config.server_name);
    // The joining server signs it; this server signs for its authorising user when the join comes back.
    const signedBy = (server) => server === origin || server === s.config.server_name;
    await authorizeWithState(room, pdu, room.state, signedBy, async (ids) => {
        const found = await s.rooms.events.getMany(ids);
        return new Map([...found].map(([id, e]) => [id, e.pdu]));
    });
    const { hashes: _h, signatures: _s, ...template } = pdu;
    // The spec's template names the resident server as `origin` (Synapse leaves it out from v11, where
    // events carry none; the joining server sets its own or none).
    return { room_version: v.id, event: { ...template, origin: s.config.server_name } };
}
