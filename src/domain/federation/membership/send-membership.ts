// The resident server's side of send_join / send_leave: the member event a remote server completed from our
// template comes back signed; it must be that server's user's own join (or leave) for this room, under the
// id in the path, signed by the origin with a matching content hash. A restricted join naming one of our
// users is countersigned here. Then it enters the room through the remote planner, and is refused with
// nothing stored unless it is accepted (a rejected or soft-failed join is a 403); once accepted, we send it
// to the room's other servers on its server's behalf. The join's answer: the state before it and that
// state's auth chain, as PDUs.
// Spec: Server-Server API "Joining Rooms" (PUT /send_join v2), "Leaving Rooms" (PUT /send_leave v2).
import type { Services } from "../../services.ts";
import type { Pdu } from "../../events/types.ts";
import { domainOf } from "../../events/types.ts";
import { MatrixError } from "../../errors.ts";
import { checkContentHash, eventIdOf } from "../../events/hashes.ts";
import { validatePduFormat } from "../../events/validate.ts";
import { stateKeyOf } from "../../store/state-groups.ts";
import { addSignature } from "../../rooms/build-event.ts";
import { checkSignatures } from "../../rooms/pipeline/checks.ts";
import { receiveRemoteEvents } from "../../rooms/receive.ts";
import type { RoomSnapshot } from "../../rooms/room-cache.ts";
import { residentRoom, type Membership } from "./make-membership.ts";
import { authChainOf } from "../dag-walk.ts";
import { pdusForServer } from "../server-visibility.ts";
import { stateBeforeEvent } from "../../rooms/state-before.ts";
import type { StoredEvent } from "../../store/events.ts";
import { joinedServers } from "./residency.ts";
import { assertServerAllowed } from "../server-acl.ts";
import { refuseHandshakeWhilePartial } from "../partial-state/refusals.ts";

export interface SendJoinAnswer {
  origin: string;
  members_omitted: boolean;
  servers_in_room: string[];
  state: Pdu[];
  auth_chain: Pdu[];
  event: Pdu;
}

/** The refusal of a malformed member event: M_INVALID_PARAM for a knock (the spec's SHOULD), else M_BAD_JSON (Synapse's). */
const badFor = (membership: Membership) => (msg: string) => new MatrixError(membership === "knock" ? "M_INVALID_PARAM" : "M_BAD_JSON", msg, 400);
const bad = badFor("join");

/** Checks the returned member event against the request; returns it (countersigned when we authorise it). */
async function checkMemberEvent(s: Services, origin: string, room: RoomSnapshot, eventId: string, body: Record<string, unknown>, membership: Membership): Promise<Pdu> {
  const v = room.version;
  const bad = badFor(membership);
  if (body.room_id !== room.roomId) throw bad("Room ID in body does not match that in request path");
  let pdu = validatePduFormat(body, v);
  if (eventIdOf(pdu, v) !== eventId) throw bad("Event ID in body does not match that in request path");
  if (pdu.type !== "m.room.member" || typeof pdu.state_key !== "string") throw bad("Not an m.room.member event");
  if (pdu.content.membership !== membership) throw bad(`Not a ${membership} event`);
  if (domainOf(pdu.sender) !== origin) throw membership === "knock" ? bad("The sender is not a user of the origin server") : new MatrixError("M_FORBIDDEN", "User not from origin", 403);
  if (pdu.sender !== pdu.state_key) throw bad("state_key and sender must match");
  if (!checkContentHash(pdu)) throw bad("The event's content hash does not match its content");
  const via = pdu.content.join_authorised_via_users_server;
  if (v.restricted && membership === "join" && via !== undefined) {
    // Only this server's users can be vouched for here (as Synapse).
    if (typeof via !== "string" || domainOf(via) !== s.config.server_name)
      throw new MatrixError("M_UNKNOWN", `Cannot authorise membership event for ${String(via)}: only for users of this server`, 400);
    pdu = addSignature(pdu, v, { serverName: s.config.server_name, key: s.signingKeys[0]! });
  }
  try {
    await checkSignatures(s, pdu, v);
  } catch (err) {
    if (membership === "knock") throw bad(`Event ${eventId}: ${(err as Error).message}`);
    throw new MatrixError("M_FORBIDDEN", `Event ${eventId}: ${(err as Error).message}`, 403);
  }
  const { unsigned: _u, ...rest } = pdu;
  return rest as Pdu;
}

/** PUT /send_join v2, /send_knock v1 and /send_leave v2: checks and accepts the event (idempotent for one already accepted). */
export async function sendMembership(s: Services, origin: string, roomId: string, eventId: string, body: Record<string, unknown>, membership: Membership): Promise<{ room: RoomSnapshot; pdu: Pdu }> {
  const room = await residentRoom(s, roomId);
  await refuseHandshakeWhilePartial(s, roomId, `send_${membership}`);
  await assertServerAllowed(s, room.state, origin);
  if (membership === "knock" && !room.version.knock) throw new MatrixError("M_FORBIDDEN", "This room version does not support knocking", 403);
  const pdu = await checkMemberEvent(s, origin, room, eventId, body, membership);
  const [outcome] = await receiveRemoteEvents(s, roomId, [{ pdu }], { mustAccept: [0] });
  switch (outcome!.status) {
    case "accepted": {
      // The other servers in the room hear of it from us, the resident server (not only from its own).
      const stored = await s.rooms.events.get(eventId);
      if (stored) await s.federationSender.sendOnBehalfOf(origin, stored).catch((err: unknown) => s.log.warn({ err, eventId }, "could not queue a member event for the room's other servers"));
      break;
    }
    case "duplicate": {
      const stored = await s.rooms.events.get(eventId);
      if (!stored || stored.rejectedReason !== null || stored.softFailed || stored.outlier) throw new MatrixError("M_FORBIDDEN", `The ${membership} event was not accepted`, 403);
      break;
    }
    case "rejected":
      throw new MatrixError("M_FORBIDDEN", `The ${membership} event was rejected: ${outcome!.reason}`, 403);
    case "soft_failed":
      throw new MatrixError("M_FORBIDDEN", `The ${membership} event is ${"reason" in outcome! ? outcome.reason.toLowerCase() : "not allowed by the room's current state"}`, 403);
    case "outlier":
      throw new MatrixError("M_INVALID_PARAM", "The event's prev_events are unknown to this server", 400);
    case "dropped":
      throw bad(`The event cannot be accepted: ${outcome!.reason}`);
  }
  return { room, pdu };
}

/** How many members a room summary names as heroes (spec: /sync `m.heroes`, up to 5). */
const HEROES = 5;

/**
 * The state a partial-state join answer keeps (send_join v2 with omit_members=true): every event but the
 * m.room.member ones, except the heroes' when the room has neither a name nor a canonical alias (the
 * members a room summary would name: joined or invited, oldest first, not the joiner), as the spec says.
 */
async function keptForPartialJoin(s: Services, room: RoomSnapshot, state: StoredEvent[], joiner: string): Promise<StoredEvent[]> {
  const named = state.some((e) => (e.pdu.type === "m.room.name" || e.pdu.type === "m.room.canonical_alias") && e.pdu.state_key === "");
  const heroes = new Set<string>();
  if (!named) {
    const members = (await s.rooms.store.membersOf(room.roomId))
      .filter((m) => (m.membership === "join" || m.membership === "invite") && m.userId !== joiner)
      .sort((a, b) => Number(a.streamOrdering) - Number(b.streamOrdering));
    for (const m of members.slice(0, HEROES)) heroes.add(m.userId);
  }
  return state.filter((e) => e.pdu.type !== "m.room.member" || heroes.has(e.pdu.state_key!));
}

/**
 * The answer to an accepted send_join: the state before the join and its auth chain. With
 * `omitMembers` (a partial-state join), the members the joining server does not need are left out of
 * the state (keptForPartialJoin), and the auth chain holds only what the kept state and the join itself
 * need, without the events already in `state` (the spec allows both); `members_omitted` says so and
 * `servers_in_room` names where the rest can be fetched.
 */
export async function sendJoinAnswer(s: Services, room: RoomSnapshot, joinId: string, omitMembers = false): Promise<SendJoinAnswer> {
  const join = (await s.rooms.events.get(joinId))!;
  const after = (await s.rooms.stateGroups.getMany([join.stateGroup!])).get(join.stateGroup!)!;
  const stateIds = [...stateBeforeEvent(join, after).values()];
  const found = await s.rooms.events.getMany(stateIds);
  const full = stateIds.map((id) => found.get(id)).filter((e) => e !== undefined);
  const state = omitMembers ? await keptForPartialJoin(s, room, full, join.pdu.state_key!) : full;
  let chain = await authChainOf(s, room, omitMembers ? [...state, join] : state);
  if (omitMembers) {
    const inState = new Set(state.map((e) => e.eventId));
    chain = chain.filter((e) => !inState.has(e.eventId));
  }
  // The joining server is entitled to the state it joins into: no history-visibility filter.
  const served = (events: StoredEvent[]) => pdusForServer(s, s.config.server_name, room, events, { checkVisibility: false });
  const [statePdus, chainPdus, [event]] = await Promise.all([served(state), served(chain), served([join])]);
  // The servers in the room before the join (its own server is not, unless another of its users is).
  const servers = await joinedServers(s, room.roomId);
  const origin = domainOf(join.pdu.sender);
  if (origin && !full.some((e) => e.pdu.type === "m.room.member" && e.pdu.content.membership === "join" && domainOf(e.pdu.state_key!) === origin)) servers.delete(origin);
  return {
    origin: s.config.server_name,
    members_omitted: omitMembers,
    servers_in_room: [...servers],
    state: statePdus,
    auth_chain: chainPdus,
    event: event!,
  };
}
