import { domainOf, isPlainObject } from "../../events/types.js";
import { MatrixError } from "../../errors.js";
import { fedPath } from "../../../federation/client.js";
import { FederationError } from "../../../federation/errors.js";
import { buildEvent } from "../../rooms/build-event.js";
import { authorizeEvent, checkSignatures } from "../../rooms/pipeline/checks.js";
import { receiveRemoteEvents } from "../../rooms/receive.js";
import { requireRoom } from "../../rooms/room-cache.js";
import { clientError, sameEvent } from "./handshake.js";
import { inviteRoomState } from "./invite-state.js";
/**
 * Builds and authorises `draft` (an invite of a remote user) on the room as it is now, and the stripped
 * state to send with it; `check` sees the room first (the target's current membership). Runs in the lane.
 */
async function buildInvite(s, roomId, draft, check) {
    return s.rooms.lanes.run(roomId, async () => {
        const room = await requireRoom(s, roomId);
        await check(room);
        if (room.createEvent.content["m.federate"] === false)
            throw new MatrixError("M_FORBIDDEN", "This room is not federated: users of other servers cannot join it", 403);
        const built = await buildEvent(s, { roomId, version: room.version, state: room.state, extremities: room.extremities, maxDepth: room.maxDepth }, draft);
        await authorizeEvent(s, room, built.pdu, async (id) => (await s.rooms.events.get(id))?.pdu);
        return { room, built, inviteState: await inviteRoomState(s, room, draft.sender) };
    });
}
/** Invites `draft.stateKey` (a user of another server) to `roomId`. */
export async function inviteRemoteUser(s, roomId, draft, check) {
    const { room, built, inviteState } = await buildInvite(s, roomId, draft, check);
    const server = domainOf(draft.stateKey);
    let answer;
    try {
        answer = await s.federation.putJson(server, fedPath `/_matrix/federation/v2/invite/${roomId}/${built.eventId}`, {
            room_version: room.version.id,
            event: built.pdu,
            invite_room_state: inviteState,
        }, { maxBytes: 1024 * 1024 });
    }
    catch (err) {
        // The spec: the invitee server's M_MISSING_PARAM / M_INVALID_PARAM is our fault, a 5xx for our client.
        if (err instanceof FederationError && (err.remoteErrcode === "M_MISSING_PARAM" || err.remoteErrcode === "M_INVALID_PARAM"))
            throw new MatrixError("M_UNKNOWN", `${server} refused the invite as malformed: ${err.remoteError ?? err.message}`, 502);
        throw clientError(err, "invite the user");
    }
    const returned = isPlainObject(answer) ? answer.event : undefined;
    if (!sameEvent(built.pdu, returned) || !isPlainObject(returned.signatures))
        throw new MatrixError("M_UNKNOWN", `${server} answered the invite with another event`, 502);
    const signatures = returned.signatures;
    const invite = { ...built.pdu, signatures: { ...built.pdu.signatures, [server]: signatures[server] ?? {} } };
    try {
        await checkSignatures(s, invite, room.version, [server]);
    }
    catch (err) {
        throw new MatrixError("M_UNKNOWN", `${server} did not sign the invite validly: ${err.message}`, 502);
    }
    const [outcome] = await receiveRemoteEvents(s, roomId, [{ pdu: invite }], { mustAccept: [0] });
    if (outcome.status !== "accepted" && outcome.status !== "duplicate")
        throw new MatrixError("M_FORBIDDEN", `The invite is no longer allowed in this room (${outcome.status})`, 403);
}
