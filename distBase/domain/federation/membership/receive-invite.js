import { domainOf } from "../../events/types.js";
import { MatrixError } from "../../errors.js";
import { checkContentHash, eventIdOf, roomIdOf } from "../../events/hashes.js";
import { validatePduFormat } from "../../events/validate.js";
import { getRoomVersion } from "../../rooms/room-versions.js";
import { addSignature } from "../../rooms/build-event.js";
import { checkSignatures } from "../../rooms/pipeline/checks.js";
import { commitOutOfBandMembership } from "../../rooms/pipeline/out-of-band.js";
import { receiveRemoteEvents } from "../../rooms/receive.js";
import { loadRoom } from "../../rooms/room-cache.js";
import { checkReceivedInviteState } from "./invite-state.js";
import { hostInRoom } from "./residency.js";
import { assertServerAllowed } from "../server-acl.js";
const invalid = (msg) => new MatrixError("M_INVALID_PARAM", msg, 400);
function roomVersionOf(body) {
    const id = body.room_version;
    if (id === undefined)
        throw new MatrixError("M_MISSING_PARAM", "Missing room_version", 400);
    if (typeof id !== "string")
        throw new MatrixError("M_BAD_JSON", "room_version must be a string", 400);
    const v = getRoomVersion(id);
    if (!v)
        throw new MatrixError("M_INCOMPATIBLE_ROOM_VERSION", `This server does not support room version ${id}`, 400, { room_version: id });
    return v;
}
/** The invite event checked against the request: the spec's validation, M_INVALID_PARAM when it fails. */
async function checkInvite(s, origin, roomId, eventId, raw, v) {
    if (raw === undefined)
        throw new MatrixError("M_MISSING_PARAM", "Missing event", 400);
    let pdu;
    try {
        pdu = validatePduFormat(raw, v);
    }
    catch (err) {
        throw invalid(`The invite is not formatted for room version ${v.id}: ${err.message}`);
    }
    if (roomIdOf(pdu, v) !== roomId)
        throw invalid("The invite is for another room than the path names");
    if (eventIdOf(pdu, v) !== eventId)
        throw invalid("The invite's event id is not the one in the path");
    if (pdu.type !== "m.room.member" || pdu.content.membership !== "invite")
        throw invalid("The event is not an m.room.member invite");
    if (domainOf(pdu.sender) !== origin)
        throw invalid("The invite was not sent by a user of the origin server");
    if (typeof pdu.state_key !== "string" || domainOf(pdu.state_key) !== s.config.server_name)
        throw invalid("The invite is not for a user of this server");
    if (!checkContentHash(pdu))
        throw invalid("The invite's content hash does not match its content");
    try {
        await checkSignatures(s, pdu, v);
    }
    catch (err) {
        throw invalid(`The invite fails its signature check: ${err.message}`);
    }
    const user = await s.users.get(pdu.state_key);
    if (!user)
        throw new MatrixError("M_NOT_FOUND", "Unknown user", 404);
    if (user.deactivated)
        throw new MatrixError("M_FORBIDDEN", "This user cannot be invited", 403);
    const { unsigned: _u, ...rest } = pdu;
    return rest;
}
/** PUT /invite v2: checks, countersigns and keeps the invite; answers the event with our signature. */
export async function receiveInvite(s, origin, roomId, eventId, body) {
    const claimed = roomVersionOf(body);
    const room = await loadRoom(s, roomId);
    if (room && room.version.id !== claimed.id)
        throw invalid(`Room ${roomId} has version ${room.version.id}, not ${claimed.id}`);
    // A room we know: its ACL decides whether the origin may invite into it (403, as Synapse).
    if (room)
        await assertServerAllowed(s, room.state, origin);
    const v = room?.version ?? claimed;
    const invite = await checkInvite(s, origin, roomId, eventId, body.event, v);
    const inviteState = await checkReceivedInviteState(s, body.invite_room_state, v, roomId);
    const existing = await s.rooms.events.get(eventId);
    if (existing) {
        if (existing.rejectedReason !== null || existing.softFailed)
            throw new MatrixError("M_FORBIDDEN", "This invite was refused", 403);
        const { unsigned: _u, ...stored } = existing.pdu;
        return { event: stored };
    }
    const signed = addSignature(invite, v, { serverName: s.config.server_name, key: s.signingKeys[0] });
    if (room && (await hostInRoom(s, roomId))) {
        // A room this server is in: the invite takes its place in the room, or is refused.
        const [outcome] = await receiveRemoteEvents(s, roomId, [{ pdu: signed }], { mustAccept: [0] });
        if (outcome.status === "accepted" || outcome.status === "duplicate")
            return { event: signed };
        if (outcome.status === "rejected")
            throw new MatrixError("M_FORBIDDEN", `The invite is not allowed: ${outcome.reason}`, 403);
        if (outcome.status === "soft_failed")
            throw new MatrixError("M_FORBIDDEN", "The invite is not allowed by the room's current state", 403);
        // Its prev_events are not known here yet: kept out of band until they arrive.
    }
    await commitOutOfBandMembership(s, { roomId, version: v, eventId, pdu: { ...signed, unsigned: { invite_room_state: inviteState } } });
    return { event: signed };
}
