import { isPlainObject } from "../../events/types.js";
import { eventReference } from "../../events/hashes.js";
import { randomString } from "../../ids.js";
import { fedPath } from "../../../federation/client.js";
import { MAX_AUTH_EVENTS } from "../../events/validate.js";
import { sealEvent } from "../../rooms/build-event.js";
import { loadRoom } from "../../rooms/room-cache.js";
import { receiveRemoteEvents } from "../../rooms/receive.js";
import { commitOutOfBandMembership } from "../../rooms/pipeline/out-of-band.js";
import { badAnswer, makeAndSign, throughServers } from "./handshake.js";
/**
 * Keeps this server's own member event that a remote handshake produced: in the room through the remote
 * planner (from its prev_events' state, or — when those are not known here — from current state), else
 * out of band (a room whose state this server does not hold).
 */
export async function keepOwnMembership(s, roomId, version, eventId, pdu) {
    const room = await loadRoom(s, roomId);
    if (room) {
        for (const stateBefore of [undefined, room.state]) {
            const [o] = await receiveRemoteEvents(s, roomId, [{ pdu, stateBefore, noSoftFail: true }], { mustAccept: [0] });
            if (o.status === "accepted" || o.status === "duplicate")
                return;
            if (o.status !== "outlier")
                break;
        }
    }
    await commitOutOfBandMembership(s, { roomId, version: room?.version ?? version, eventId, pdu });
}
/** Leaves `roomId` through the first of `servers` that takes the leave; `content` is the member event's. */
export async function leaveRemoteRoom(s, roomId, userId, servers, content) {
    await throughServers(s, servers, "leave the room", async (server) => {
        const { version, built } = await makeAndSign(s, server, roomId, userId, "leave", content);
        const answer = await s.federation.putJson(server, fedPath `/_matrix/federation/v2/send_leave/${roomId}/${built.eventId}`, built.pdu, { maxBytes: 64 * 1024 });
        if (!isPlainObject(answer))
            throw badAnswer(server, "send_leave answered no object");
        await keepOwnMembership(s, roomId, version, built.eventId, built.pdu);
    });
}
/**
 * A leave made up here in answer to `previous` (the user's invite), when no server in the room takes one:
 * it follows the invite (its only prev event) and is authorised by the invite's auth events and the
 * invite. Kept out of band: no other server hears of it.
 */
export async function outOfBandLeave(s, version, previous, content) {
    const prev = previous.pdu;
    const userId = prev.state_key;
    const ref = version.eventIdFormat === "server-assigned" ? eventReference(prev, version) : previous.eventId;
    const auth = [...prev.auth_events, ref].slice(-MAX_AUTH_EVENTS);
    const pdu = {
        room_id: previous.roomId,
        sender: userId,
        type: "m.room.member",
        state_key: userId,
        content: { ...content, membership: "leave" },
        origin_server_ts: s.clock.now(),
        depth: prev.depth + 1,
        prev_events: [ref],
        auth_events: auth,
        hashes: { sha256: "" },
        signatures: {},
    };
    if (!version.updatedRedactionRules)
        pdu.origin = s.config.server_name;
    if (version.eventIdFormat === "server-assigned")
        pdu.event_id = `$${randomString(18)}:${s.config.server_name}`;
    const built = sealEvent(pdu, version, { serverName: s.config.server_name, key: s.signingKeys[0] });
    await commitOutOfBandMembership(s, { roomId: previous.roomId, version, eventId: built.eventId, pdu: built.pdu });
}
