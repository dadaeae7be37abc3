// A local user leaves a room through another server (make_leave / send_leave): rejecting an invite, or
// withdrawing a knock, to a room this server is not in (through the inviting server; when it cannot be
// reached, a leave made up here, as Synapse does, so the invite goes away at least for us). A room this
// server is in is left with a local leave, even by its last user (as Synapse). The leave is kept in the room when this server can place it, else out of
// band like the invite it answers.
// Spec: Server-Server API "Leaving Rooms (Rejecting Invites)" (make_leave, send_leave v2; v1 for a server
// that serves no v2).
import type { Services } from "../../services.ts";
import type { Pdu } from "../../events/types.ts";
import { isPlainObject } from "../../events/types.ts";
import { eventReference } from "../../events/hashes.ts";
import { randomString } from "../../ids.ts";
import { fedPath } from "../../../federation/client.ts";
import { MAX_AUTH_EVENTS } from "../../events/validate.ts";
import { sealEvent } from "../../rooms/build-event.ts";
import { loadRoom } from "../../rooms/room-cache.ts";
import { receiveRemoteEvents } from "../../rooms/receive.ts";
import { commitOutOfBandMembership } from "../../rooms/pipeline/out-of-band.ts";
import type { RoomVersion } from "../../rooms/room-versions.ts";
import type { StoredEvent } from "../../store/events.ts";
import { badAnswer, makeAndSign, throughServers } from "./handshake.ts";
import { putV2OrV1 } from "./v1-fallback.ts";

/**
 * Keeps this server's own member event that a remote handshake produced: in the room through the remote
 * planner (from its prev_events' state, or — when those are not known here — from current state), else
 * out of band (a room whose state this server does not hold).
 */
export async function keepOwnMembership(s: Services, roomId: string, version: RoomVersion, eventId: string, pdu: Pdu): Promise<void> {
  const room = await loadRoom(s, roomId);
  if (room) {
    for (const stateBefore of [undefined, room.state]) {
      const [o] = await receiveRemoteEvents(s, roomId, [{ pdu, stateBefore, noSoftFail: true }], { mustAccept: [0] });
      if (o!.status === "accepted" || o!.status === "duplicate") return;
      if (o!.status !== "outlier") break;
    }
  }
  await commitOutOfBandMembership(s, { roomId, version: room?.version ?? version, eventId, pdu });
}

/** Leaves `roomId` through the first of `servers` that takes the leave; `content` is the member event's. */
export async function leaveRemoteRoom(s: Services, roomId: string, userId: string, servers: readonly string[], content: Record<string, unknown>): Promise<void> {
  await throughServers(s, servers, "leave the room", async (server) => {
    const { version, built } = await makeAndSign(s, server, roomId, userId, "leave", content);
    const answer = await putV2OrV1(s, server, "send_leave", {
      v2: { path: fedPath`/_matrix/federation/v2/send_leave/${roomId}/${built.eventId}`, body: built.pdu },
      v1: { path: fedPath`/_matrix/federation/v1/send_leave/${roomId}/${built.eventId}`, body: built.pdu },
    }, { maxBytes: 64 * 1024 });
    if (!isPlainObject(answer)) throw badAnswer(server, "send_leave answered no object");
    await keepOwnMembership(s, roomId, version, built.eventId, built.pdu);
  });
}

/**
 * A leave made up here in answer to `previous` (the user's invite), when no server in the room takes one:
 * it follows the invite (its only prev event) and is authorised by the invite's auth events and the
 * invite. Kept out of band: no other server hears of it.
 */
export async function outOfBandLeave(s: Services, version: RoomVersion, previous: StoredEvent, content: Record<string, unknown>): Promise<void> {
  const prev = previous.pdu;
  const userId = prev.state_key!;
  const ref = version.eventIdFormat === "server-assigned" ? eventReference(prev, version) : previous.eventId;
  const auth = [...(prev.auth_events as unknown[]), ref].slice(-MAX_AUTH_EVENTS);
  const pdu: Pdu = {
    room_id: previous.roomId,
    sender: userId,
    type: "m.room.member",
    state_key: userId,
    content: { ...content, membership: "leave" },
    origin_server_ts: s.clock.now(),
    depth: prev.depth + 1,
    prev_events: [ref] as Pdu["prev_events"],
    auth_events: auth as Pdu["auth_events"],
    hashes: { sha256: "" },
    signatures: {},
  };
  if (!version.updatedRedactionRules) pdu.origin = s.config.server_name;
  if (version.eventIdFormat === "server-assigned") pdu.event_id = `$${randomString(18)}:${s.config.server_name}`;
  const built = sealEvent(pdu, version, { serverName: s.config.server_name, key: s.signingKeys[0]! });
  await commitOutOfBandMembership(s, { roomId: previous.roomId, version, eventId: built.eventId, pdu: built.pdu });
}
