// A remote server invites one of our users (PUT /invite v2, or the v1 older servers send): the invite must be an m.room.member invite
// for an existing local user, sent by a user of the origin server, for the room and event id of the
// path, in a room version this server implements, with a matching content hash and the origin's valid
// signature, and its invite_room_state well formed. This server then countersigns it and keeps it: in a
// room it is in, through the remote planner (a refused invite is a 403 and nothing stored); otherwise —
// the usual case — as an out-of-band membership carrying the stripped state, so the invite shows in the
// user's /sync. The answer is the event with our signature. Retrying the same invite answers the same.
// Spec: Server-Server API "Inviting to a room" (PUT /_matrix/federation/v2/invite/{roomId}/{eventId}, and
// the deprecated PUT /_matrix/federation/v1/invite/{roomId}/{eventId}).
import type { Services } from "../../services.ts";
import type { Pdu } from "../../events/types.ts";
import { domainOf, isPlainObject } from "../../events/types.ts";
import { MatrixError } from "../../errors.ts";
import { checkContentHash, eventIdOf, roomIdOf } from "../../events/hashes.ts";
import { assertCanonicalForVersion, validatePduFormat } from "../../events/validate.ts";
import { getRoomVersion, type RoomVersion } from "../../rooms/room-versions.ts";
import { addSignature } from "../../rooms/build-event.ts";
import { checkSignatures } from "../../rooms/pipeline/checks.ts";
import { commitOutOfBandMembership } from "../../rooms/pipeline/out-of-band.ts";
import { receiveRemoteEvents } from "../../rooms/receive.ts";
import { loadRoom } from "../../rooms/room-cache.ts";
import { checkReceivedInviteState } from "./invite-state.ts";
import { hostInRoom } from "./residency.ts";
import { assertServerAllowed } from "../server-acl.ts";
import { checkInviteTarget } from "../../server-notices/policy.ts";
import { assertInviteNotBlocked } from "../../account-data/invite-filter.ts";

const invalid = (msg: string) => new MatrixError("M_INVALID_PARAM", msg, 400);

function roomVersionOf(body: Record<string, unknown>): RoomVersion {
  const id = body.room_version;
  if (id === undefined) throw new MatrixError("M_MISSING_PARAM", "Missing room_version", 400);
  if (typeof id !== "string") throw new MatrixError("M_BAD_JSON", "room_version must be a string", 400);
  const v = getRoomVersion(id);
  if (!v) throw new MatrixError("M_INCOMPATIBLE_ROOM_VERSION", `This server does not support room version ${id}`, 400, { room_version: id });
  return v;
}

/**
 * The invite event checked against the request: the spec's validation, M_INVALID_PARAM when it fails
 * (M_BAD_JSON for a value its room version forbids).
 */
async function checkInvite(s: Services, origin: string, roomId: string, eventId: string, raw: unknown, v: RoomVersion): Promise<Pdu> {
  if (raw === undefined) throw new MatrixError("M_MISSING_PARAM", "Missing event", 400);
  // A value the room version forbids (a float, say) is M_BAD_JSON, as Synapse answers; other faults below.
  assertCanonicalForVersion(raw, v);
  let pdu: Pdu;
  try {
    pdu = validatePduFormat(raw, v);
  } catch (err) {
    throw invalid(`The invite is not formatted for room version ${v.id}: ${(err as Error).message}`);
  }
  if (roomIdOf(pdu, v) !== roomId) throw invalid("The invite is for another room than the path names");
  if (eventIdOf(pdu, v) !== eventId) throw invalid("The invite's event id is not the one in the path");
  if (pdu.type !== "m.room.member" || pdu.content.membership !== "invite") throw invalid("The event is not an m.room.member invite");
  if (domainOf(pdu.sender) !== origin) throw invalid("The invite was not sent by a user of the origin server");
  if (typeof pdu.state_key !== "string" || domainOf(pdu.state_key) !== s.config.server_name) throw invalid("The invite is not for a user of this server");
  if (!checkContentHash(pdu)) throw invalid("The invite's content hash does not match its content");
  try {
    await checkSignatures(s, pdu, v);
  } catch (err) {
    throw invalid(`The invite fails its signature check: ${(err as Error).message}`);
  }
  checkInviteTarget(s, pdu.state_key);
  const user = await s.users.get(pdu.state_key);
  if (!user) throw new MatrixError("M_NOT_FOUND", "Unknown user", 404);
  if (user.deactivated) throw new MatrixError("M_FORBIDDEN", "This user cannot be invited", 403);
  const { unsigned: _u, ...rest } = pdu;
  return rest as Pdu;
}

/**
 * PUT /invite v1 (deprecated, still used by older servers): the body is the invite event itself, its
 * stripped state in `unsigned.invite_room_state`, and no room version: the spec says to assume 1 or 2 (the
 * room's, when this server knows it as one of them; else 1, as Synapse — the two share an event format).
 * Then as v2; the v1 answer's `[200, {...}]` wrapper is the route's.
 */
export async function receiveInviteV1(s: Services, origin: string, roomId: string, eventId: string, body: Record<string, unknown>): Promise<{ event: Pdu }> {
  const known = (await loadRoom(s, roomId))?.version.id;
  const unsigned = isPlainObject(body.unsigned) ? body.unsigned : {};
  const version = known === "2" ? "2" : "1";
  return receiveInvite(s, origin, roomId, eventId, { room_version: version, event: body, invite_room_state: unsigned.invite_room_state });
}

/** PUT /invite v2: checks, countersigns and keeps the invite; answers the event with our signature. */
export async function receiveInvite(s: Services, origin: string, roomId: string, eventId: string, body: Record<string, unknown>): Promise<{ event: Pdu }> {
  const room = await loadRoom(s, roomId);
  // A room we know: its ACL decides whether the origin may invite into it (403, as Synapse), first.
  if (room) await assertServerAllowed(s, room.state, origin);
  const claimed = roomVersionOf(body);
  if (room && room.version.id !== claimed.id) throw invalid(`Room ${roomId} has version ${room.version.id}, not ${claimed.id}`);
  const v = room?.version ?? claimed;
  const invite = await checkInvite(s, origin, roomId, eventId, body.event, v);
  // The invitee's invite rules (invite blocking, MSC4155's filter) may refuse the inviter: 403 M_INVITE_BLOCKED.
  await assertInviteNotBlocked(s, invite.state_key!, invite.sender);
  const inviteState = await checkReceivedInviteState(s, body.invite_room_state, v, roomId);

  const existing = await s.rooms.events.get(eventId);
  if (existing) {
    if (existing.rejectedReason !== null || existing.softFailed) throw new MatrixError("M_FORBIDDEN", "This invite was refused", 403);
    const { unsigned: _u, ...stored } = existing.pdu;
    return { event: stored as Pdu };
  }
  const signed = addSignature(invite, v, { serverName: s.config.server_name, key: s.signingKeys[0]! });
  if (room && (await hostInRoom(s, roomId))) {
    // A room this server is in: the invite takes its place in the room, or is refused.
    const [outcome] = await receiveRemoteEvents(s, roomId, [{ pdu: signed }], { mustAccept: [0] });
    if (outcome!.status === "accepted" || outcome!.status === "duplicate") return { event: signed };
    if (outcome!.status === "rejected") throw new MatrixError("M_FORBIDDEN", `The invite is not allowed: ${outcome!.reason}`, 403);
    if (outcome!.status === "soft_failed") throw new MatrixError("M_FORBIDDEN", `The invite is ${"reason" in outcome! ? outcome.reason.toLowerCase() : "not allowed by the room's current state"}`, 403);
    // Its prev_events are not known here yet: kept out of band until they arrive.
  }
  await commitOutOfBandMembership(s, { roomId, version: v, eventId, pdu: { ...signed, unsigned: { invite_room_state: inviteState } } });
  return { event: signed };
}
