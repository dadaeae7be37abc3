// Knocking over federation (room versions 7+). As the resident server: the answer to an accepted
// send_knock — the room's stripped-state events as PDUs (`knock_room_state`, and Synapse's older
// `knock_state_events` alias). As the knocking server: a local user knocks on a room this server is not in
// through servers that are (make_knock, the knock signed here, send_knock v1); the knock is kept out of
// band with the stripped state the resident server answered (its improperly signed entries left out), so
// it shows in the user's /sync `rooms.knock` until an invite, a join or a leave follows it.
// Spec: Server-Server API "Knocking Rooms" (make_knock, send_knock v1); Client-Server API "Knocking on rooms".
import type { Services } from "../../services.ts";
import type { Pdu } from "../../events/types.ts";
import { isPlainObject } from "../../events/types.ts";
import { fedPath } from "../../../federation/client.ts";
import { commitOutOfBandMembership } from "../../rooms/pipeline/out-of-band.ts";
import type { RoomSnapshot } from "../../rooms/room-cache.ts";
import { badAnswer, makeAndSign, throughServers } from "./handshake.ts";
import { inviteRoomState, keptKnockState } from "./invite-state.ts";

export interface SendKnockAnswer {
  knock_room_state: Pdu[];
  /** The same list under the name Synapse used before the spec settled (still read by older servers). */
  knock_state_events: Pdu[];
}

/** The answer to an accepted send_knock. */
export async function sendKnockAnswer(s: Services, room: RoomSnapshot): Promise<SendKnockAnswer> {
  const state = await inviteRoomState(s, room);
  return { knock_room_state: state, knock_state_events: state };
}

/** Knocks as `userId` on `roomId` through the first of `servers` that takes the knock; `content` is the member event's. */
export async function knockRemoteRoom(s: Services, roomId: string, userId: string, servers: readonly string[], content: Record<string, unknown>): Promise<void> {
  await throughServers(s, servers, "knock on the room", async (server) => {
    const { version, built } = await makeAndSign(s, server, roomId, userId, "knock", content);
    const answer = await s.federation.putJson<unknown>(server, fedPath`/_matrix/federation/v1/send_knock/${roomId}/${built.eventId}`, built.pdu, { maxBytes: 1024 * 1024 });
    if (!isPlainObject(answer)) throw badAnswer(server, "send_knock answered no object");
    const raw = answer.knock_room_state ?? answer.knock_state_events;
    if (!Array.isArray(raw)) throw badAnswer(server, "send_knock answered no knock_room_state");
    const knockState = await keptKnockState(s, raw, version, roomId);
    await commitOutOfBandMembership(s, { roomId, version, eventId: built.eventId, pdu: { ...built.pdu, unsigned: { knock_room_state: knockState } } });
  });
}
