import { isPlainObject } from "../../events/types.js";
import { fedPath } from "../../../federation/client.js";
import { commitOutOfBandMembership } from "../../rooms/pipeline/out-of-band.js";
import { badAnswer, makeAndSign, throughServers } from "./handshake.js";
import { inviteRoomState, keptKnockState } from "./invite-state.js";
/** The answer to an accepted send_knock. */
export async function sendKnockAnswer(s, room) {
    const state = await inviteRoomState(s, room);
    return { knock_room_state: state, knock_state_events: state };
}
/** Knocks as `userId` on `roomId` through the first of `servers` that takes the knock; `content` is the member event's. */
export async function knockRemoteRoom(s, roomId, userId, servers, content) {
    await throughServers(s, servers, "knock on the room", async (server) => {
        const { version, built } = await makeAndSign(s, server, roomId, userId, "knock", content);
        const answer = await s.federation.putJson(server, fedPath `/_matrix/federation/v1/send_knock/${roomId}/${built.eventId}`, built.pdu, { maxBytes: 1024 * 1024 });
        if (!isPlainObject(answer))
            throw badAnswer(server, "send_knock answered no object");
        const raw = answer.knock_room_state ?? answer.knock_state_events;
        if (!Array.isArray(raw))
            throw badAnswer(server, "send_knock answered no knock_room_state");
        const knockState = await keptKnockState(s, raw, version, roomId);
        await commitOutOfBandMembership(s, { roomId, version, eventId: built.eventId, pdu: { ...built.pdu, unsigned: { knock_room_state: knockState } } });
    });
}
