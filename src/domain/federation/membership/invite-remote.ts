// A local user invites a user of another server: the invite is built and authorised here (in the room's
// lane, without holding it during the request), sent to the invitee's server with the room's stripped
// state (PUT /invite v2; v1 to a server without it, in rooms of versions 1 and 2), and comes back
// countersigned; only the same event with a valid signature of that server is kept, entering the room
// through the remote planner (its prev_events may no longer be the room's tips by then). A refusal by the
// invitee's server reaches our client as it said it (handshake.ts `clientError`); an answer holding a value
// the room version forbids is 400 M_BAD_JSON.
// Spec: Server-Server API "Inviting to a room" (PUT /_matrix/federation/v2/invite/{roomId}/{eventId}, and
// the deprecated v1).
import type { Services } from "../../services.ts";
import type { Pdu } from "../../events/types.ts";
import { domainOf, isPlainObject } from "../../events/types.ts";
import { MatrixError } from "../../errors.ts";
import { fedPath } from "../../../federation/client.ts";
import { FederationError } from "../../../federation/errors.ts";
import { buildEvent, type EventDraft } from "../../rooms/build-event.ts";
import { authorizeEvent, checkSignatures } from "../../rooms/pipeline/checks.ts";
import { receiveRemoteEvents } from "../../rooms/receive.ts";
import { requireRoom, type RoomSnapshot } from "../../rooms/room-cache.ts";
import { mayUsePolicyServer } from "../../rooms/policy-server.ts";
import { signLocalEvent } from "../../rooms/policy-check.ts";
import { clientError, sameEvent } from "./handshake.ts";
import { assertCanonicalForVersion } from "../../events/validate.ts";
import { putV2OrV1 } from "./v1-fallback.ts";
import { inviteRoomState } from "./invite-state.ts";

/**
 * Builds and authorises `draft` (an invite of a remote user) on the room as it is now, and the stripped
 * state to send with it; `check` sees the room first (the target's current membership). Runs in the lane.
 */
async function buildInvite(s: Services, roomId: string, draft: EventDraft, check: (room: RoomSnapshot) => Promise<void>) {
  return s.rooms.lanes.run(roomId, async () => {
    const room = await requireRoom(s, roomId);
    await check(room);
    if (room.createEvent.content["m.federate"] === false) throw new MatrixError("M_FORBIDDEN", "This room is not federated: users of other servers cannot join it", 403);
    const unsigned = await buildEvent(s, { roomId, version: room.version, state: room.state, extremities: room.extremities, maxDepth: room.maxDepth }, draft);
    await authorizeEvent(s, room, unsigned.pdu, async (id) => (await s.rooms.events.get(id))?.pdu);
    // A room using a Policy Server: it signs the invite before the invitee's server sees it (or refuses it).
    const built = mayUsePolicyServer(room.state) ? await signLocalEvent(s, room, unsigned) : unsigned;
    return { room, built, inviteState: await inviteRoomState(s, room, draft.sender) };
  });
}

/** Invites `draft.stateKey` (a user of another server) to `roomId`. */
export async function inviteRemoteUser(s: Services, roomId: string, draft: EventDraft, check: (room: RoomSnapshot) => Promise<void>): Promise<void> {
  const { room, built, inviteState } = await buildInvite(s, roomId, draft, check);
  const server = domainOf(draft.stateKey!)!;
  let answer: unknown;
  try {
    // A server serving no v2 is asked v1 (the event itself, its stripped state in `unsigned`), which can
    // only carry the event format of room versions 1 and 2 (as Synapse).
    const v1 = room.version.eventIdFormat === "server-assigned";
    answer = await putV2OrV1(s, server, "invite", {
      v2: { path: fedPath`/_matrix/federation/v2/invite/${roomId}/${built.eventId}`, body: { room_version: room.version.id, event: built.pdu, invite_room_state: inviteState } },
      v1: v1 ? { path: fedPath`/_matrix/federation/v1/invite/${roomId}/${built.eventId}`, body: { ...built.pdu, unsigned: { invite_room_state: inviteState } } } : undefined,
      noV1: () => new MatrixError("M_UNSUPPORTED_ROOM_VERSION", "User's homeserver does not support this room version", 400),
    }, { maxBytes: 1024 * 1024 });
  } catch (err) {
    // The spec: the invitee server's M_MISSING_PARAM / M_INVALID_PARAM is our fault, a 5xx for our client.
    if (err instanceof FederationError && (err.remoteErrcode === "M_MISSING_PARAM" || err.remoteErrcode === "M_INVALID_PARAM"))
      throw new MatrixError("M_UNKNOWN", `${server} refused the invite as malformed: ${err.remoteError ?? err.message}`, 502);
    throw clientError(err, "invite the user");
  }
  const returned = isPlainObject(answer) ? answer.event : undefined;
  // A value the room version forbids in the event that came back: 400 M_BAD_JSON (as Synapse answers).
  assertCanonicalForVersion(returned, room.version);
  if (!sameEvent(built.pdu, returned) || !isPlainObject(returned.signatures))
    throw new MatrixError("M_UNKNOWN", `${server} answered the invite with another event`, 502);
  const signatures = returned.signatures as Pdu["signatures"];
  // The invitee's server's signatures beside ours (and, when it is the room's policy server, beside that one's).
  const invite: Pdu = { ...built.pdu, signatures: { ...built.pdu.signatures, [server]: { ...(built.pdu.signatures?.[server] ?? {}), ...(signatures[server] ?? {}) } } };
  try {
    await checkSignatures(s, invite, room.version, [server]);
  } catch (err) {
    throw new MatrixError("M_UNKNOWN", `${server} did not sign the invite validly: ${(err as Error).message}`, 502);
  }
  const [outcome] = await receiveRemoteEvents(s, roomId, [{ pdu: invite }], { mustAccept: [0] });
  if (outcome!.status !== "accepted" && outcome!.status !== "duplicate")
    throw new MatrixError("M_FORBIDDEN", `The invite is no longer allowed in this room (${outcome!.status})`, 403);
}
