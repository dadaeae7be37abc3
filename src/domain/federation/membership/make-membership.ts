// The resident server's side of make_join / make_leave: a template of the member event a remote user would
// send — prev_events, auth_events and depth from this server's view of the room — after checking the
// user is the origin's, this server is in the room, the joining server supports the room's version, and
// the auth rules would allow the event against current state (so `m.federate: false` rooms and banned
// users are refused here). Restricted rooms name a local member who may invite, when there is one.
// Spec: Server-Server API "Joining Rooms" (GET /make_join), "Leaving Rooms" (GET /make_leave).
import type { Services } from "../../services.ts";
import type { Pdu } from "../../events/types.ts";
import { MatrixError } from "../../errors.ts";
import { parseUserId } from "../../ids.ts";
import { loadRoom, type RoomSnapshot } from "../../rooms/room-cache.ts";
import { assertServerAllowed } from "../server-acl.ts";
import { unsignedPdu } from "../../rooms/build-event.ts";
import { authorizeWithState } from "../../rooms/pipeline/checks.ts";
import { restrictedJoin } from "../../rooms/restricted-join.ts";
import { hostInRoom } from "./residency.ts";
import { refuseHandshakeWhilePartial } from "../partial-state/refusals.ts";

export type Membership = "join" | "leave" | "knock";

export interface MembershipTemplate {
  room_version: string;
  event: Pdu;
}

/** The room, when this server is in it; 404 otherwise (as Synapse: not an active room on this server). */
export async function residentRoom(s: Services, roomId: string): Promise<RoomSnapshot> {
  const room = await loadRoom(s, roomId);
  if (!room || !(await hostInRoom(s, roomId))) throw new MatrixError("M_NOT_FOUND", "Not an active room on this server", 404);
  return room;
}

/** A remote server may speak only for its own users. */
export function requireOriginsUser(origin: string, userId: string): void {
  let server: string;
  try {
    server = parseUserId(userId).serverName;
  } catch {
    throw new MatrixError("M_INVALID_PARAM", "Invalid user id", 400);
  }
  if (server !== origin) throw new MatrixError("M_FORBIDDEN", "User not from origin", 403);
}

/** The `join_authorised_via_users_server` a restricted join needs from this server, or a refusal as Synapse's. */
async function authorisingUser(s: Services, room: RoomSnapshot, userId: string): Promise<string | undefined> {
  const r = await restrictedJoin(s, room, userId);
  switch (r.kind) {
    case "unrestricted":
      return undefined;
    case "authorised":
      return r.via;
    case "no_authoriser":
      throw new MatrixError("M_UNABLE_TO_GRANT_JOIN", "Unable to find a user which could issue an invite", 400);
    case "not_allowed":
      if (r.unknownRooms) throw new MatrixError("M_UNABLE_TO_AUTHORISE_JOIN", `Unable to check if ${userId} is in allowed rooms`, 400);
      throw new MatrixError("M_FORBIDDEN", "You do not belong to any of the required rooms/spaces to join this room", 403);
  }
}

/**
 * GET /make_join (membership "join", with the versions the origin supports: `["1"]` when it named none),
 * GET /make_knock (its `ver` required: knocking came with room version 7) and GET /make_leave.
 */
export async function makeMembership(s: Services, origin: string, roomId: string, userId: string, membership: Membership, supportedVersions?: readonly string[]): Promise<MembershipTemplate> {
  requireOriginsUser(origin, userId);
  const room = await residentRoom(s, roomId);
  // Synapse answers make_leave in a partial-state room (only its send_leave is refused).
  if (membership !== "leave") await refuseHandshakeWhilePartial(s, roomId, `make_${membership}`);
  await assertServerAllowed(s, room.state, origin);
  const v = room.version;
  if (membership !== "leave" && !(supportedVersions ?? ["1"]).includes(v.id))
    throw new MatrixError("M_INCOMPATIBLE_ROOM_VERSION", `Your homeserver does not support the features required to ${membership} on this room (version ${v.id})`, 400, { room_version: v.id });
  // As Synapse: a room version without knocking is a 403 before the join rules are looked at.
  if (membership === "knock" && !v.knock) throw new MatrixError("M_FORBIDDEN", "This room version does not support knocking", 403);
  const content: Record<string, unknown> = { membership };
  if (membership === "join") {
    const via = await authorisingUser(s, room, userId);
    if (via) content.join_authorised_via_users_server = via;
  }
  const draft = { type: "m.room.member", stateKey: userId, sender: userId, content };
  const ctx = { roomId, version: v, state: room.state, extremities: room.extremities, maxDepth: room.maxDepth };
  const pdu = await unsignedPdu(s, ctx, draft, s.clock.now(), s.config.server_name);
  // The joining server signs it; this server signs for its authorising user when the join comes back.
  const signedBy = (server: string) => server === origin || server === s.config.server_name;
  await authorizeWithState(room, pdu, room.state, signedBy, async (ids) => {
    const found = await s.rooms.events.getMany(ids);
    return new Map([...found].map(([id, e]) => [id, e.pdu]));
  });
  const { hashes: _h, signatures: _s, ...template } = pdu;
  // The spec's template names the resident server as `origin` (Synapse leaves it out from v11, where
  // events carry none; the joining server sets its own or none).
  return { room_version: v.id, event: { ...template, origin: s.config.server_name } as Pdu };
}
