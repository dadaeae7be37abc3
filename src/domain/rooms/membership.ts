// Membership changes made by local users: join (by id or alias), leave, invite, kick, ban, unban, knock,
// forget. Each builds an m.room.member event that the authorization rules accept or refuse; restricted
// joins name a local member who may invite (join_authorised_via_users_server). Where another server must
// take part — a room this server is not in, a remote alias, a remote invitee, an invite received from
// elsewhere, the last local member leaving — the handshake is in src/domain/federation/membership/.
// Spec: Client-Server API "Room membership"; Server-Server API "Joining Rooms", "Inviting to a room",
// "Leaving Rooms"; Room Versions "Authorization rules".
import { assertLocalInviteAllowed } from "../account-data/invite-filter.ts";
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { StoredEvent } from "../store/events.ts";
import { isValidServerName, parseRoomAlias, parseUserId } from "../ids.ts";
import { domainOf, prevEventIds, type Pdu } from "../events/types.ts";
import { appendEvent, type AlreadyDone } from "./append.ts";
import { currentStateEvent, loadRoom, type RoomSnapshot } from "./room-cache.ts";
import { stateKeyOf } from "../store/state-groups.ts";
import type { EventDraft } from "./build-event.ts";
import { requireNotGuest } from "../accounts/guest-access.ts";
import { catchUpWith, eventsArrived, restrictedJoin, serversThatCanInvite } from "./restricted-join.ts";
import { getRoomVersion } from "./room-versions.ts";
import type { MembershipRow } from "../store/rooms.ts";
import { hostInRoom, joinedServers } from "../federation/membership/residency.ts";
import { isPartialState } from "../federation/partial-state/flag.ts";
import { candidateServers } from "../federation/membership/handshake.ts";
import { joinRemoteRoom, type JoinRemoteOptions } from "../federation/membership/join-remote.ts";
import { leaveRemoteRoom, outOfBandLeave } from "../federation/membership/leave-remote.ts";
import { inviteRemoteUser } from "../federation/membership/invite-remote.ts";
import { knockRemoteRoom } from "../federation/membership/knock.ts";
import { checkInviteTarget, checkLeaveAllowed } from "../server-notices/policy.ts";
import { resolveRemoteAlias } from "../federation/remote-alias.ts";
import { canonicalJson } from "../canonical-json.ts";
import { localUserExists } from "../accounts/user-lookup.ts";
import { inviteThirdParty, thirdPartyInviteOf, type LookedUp, type ThirdPartyInvite } from "../threepids/third-party-invite.ts";
import { requireRoomNotBlocked } from "./blocked.ts";
import { shownMxc } from "../media/ids.ts";
import { requireMembershipAllowed, requireNotSuspended } from "../accounts/moderation.ts";
import { roomWriterElsewhere, runOnWriter } from "../cluster/stream-ops.ts";

/** Resolves a room alias to a room id (the directory's local aliases; remote ones with federation). */
export type AliasResolver = (s: Services, alias: string) => Promise<string | undefined>;

/**
 * The member event content for `userId`, with their profile's displayname and avatar_url when set — the
 * avatar as the profile shows it (an MXC URI: a stored value that is none is shown nowhere).
 */
export async function memberContentFor(s: Services, userId: string, membership: string): Promise<Record<string, unknown>> {
  const content: Record<string, unknown> = { membership };
  if (membership === "join" || membership === "invite" || membership === "knock") {
    const profile = parseUserId(userId).serverName === s.config.server_name ? await s.users.getProfile(userId) : null;
    if (profile?.displayname) content.displayname = profile.displayname;
    const avatar = shownMxc(profile?.avatarUrl);
    if (avatar) content.avatar_url = avatar;
  }
  return content;
}

async function membershipEvent(s: Services, room: RoomSnapshot, userId: string) {
  return currentStateEvent(s, room, "m.room.member", userId);
}

function reasonOf(body: Record<string, unknown>): string | undefined {
  const reason = body.reason;
  if (reason === undefined || reason === null) return undefined;
  if (typeof reason !== "string") throw new MatrixError("M_BAD_JSON", "reason must be a string");
  return reason;
}

async function resolveRoomIdOrAlias(s: Services, roomIdOrAlias: string): Promise<string> {
  if (roomIdOrAlias.startsWith("!")) return roomIdOrAlias;
  if (roomIdOrAlias.startsWith("#")) {
    for (const resolve of s.extensions.aliasResolvers) {
      const id = await resolve(s, roomIdOrAlias);
      if (id) return id;
    }
    throw new MatrixError("M_NOT_FOUND", "Room alias not found", 404);
  }
  throw new MatrixError("M_INVALID_PARAM", "Not a room id or alias", 400);
}

function requireLocalRoom(room: RoomSnapshot | undefined): RoomSnapshot {
  if (!room) throw new MatrixError("M_NOT_FOUND", "No known room with that id", 404);
  return room;
}

/**
 * The room a join names, and the servers to ask when this server is not in it: `via` (the client's
 * `via` / `server_name`), or for an alias of another server the room and servers its server answers.
 */
export async function joinTarget(s: Services, roomIdOrAlias: string, via: readonly string[]): Promise<{ roomId: string; servers: string[] }> {
  if (roomIdOrAlias.startsWith("#")) {
    let serverName: string;
    try {
      serverName = parseRoomAlias(roomIdOrAlias).serverName;
    } catch {
      throw new MatrixError("M_INVALID_PARAM", "Not a room id or alias", 400);
    }
    if (serverName !== s.config.server_name) {
      const target = await resolveRemoteAlias(s, roomIdOrAlias);
      // The alias's own server is a candidate too, after those it named.
      const servers = target.servers.includes(serverName) ? target.servers : [...target.servers, serverName];
      return { roomId: target.roomId, servers: [...servers, ...via] };
    }
  }
  return { roomId: await resolveRoomIdOrAlias(s, roomIdOrAlias), servers: [...via] };
}

/** Member event content without the key only the server may set, for comparing a re-join with the current one. */
function comparable(content: Record<string, unknown>): string {
  const { join_authorised_via_users_server: _via, ...rest } = content;
  return canonicalJson(rest);
}

/**
 * Joins (or re-joins, e.g. to change a per-room profile). The keys of the request `body` other than
 * third_party_signed go into the member event (spec "POST /join": the content is the event's; Synapse
 * does the same), and `memberContent` is the content a client sent through the state API: their
 * displayname/avatar_url win over the global profile (per-room profiles, as in Synapse);
 * join_authorised_via_users_server is always the server's choice. A guest's join says `kind: "guest"`
 * (as Synapse), which is how guests are found when a room revokes guest access. `via`: the servers to
 * join through when this server is not in the room.
 */
export async function joinRoom(
  s: Services,
  r: Requester,
  roomIdOrAlias: string,
  body: Record<string, unknown> = {},
  memberContent?: Record<string, unknown>,
  via: readonly string[] = [],
): Promise<{ room_id: string }> {
  requireNotSuspended(r, "Joining rooms");
  for (const server of via) if (!isValidServerName(server)) throw new MatrixError("M_INVALID_PARAM", `Not a server name: ${server}`, 400);
  const { roomId, servers } = await joinTarget(s, roomIdOrAlias, via);
  // A room another instance writes: it joins (cluster/stream-ops.ts).
  const writer = roomWriterElsewhere(s, roomId);
  if (writer) return runOnWriter(s, writer, "joinRoom", r, [roomIdOrAlias, body, memberContent ?? null, via]);
  await requireRoomNotBlocked(s, roomId);
  const reason = reasonOf(body);
  const { third_party_signed: _signed, reason: _reason, ...extra } = body;
  const known = await loadRoom(s, roomId);
  // A room joined with partial state is joined remotely by a user not yet joined (as Synapse: this server
  // cannot authorise the join against state it lacks).
  const partial = known !== undefined && (await isPartialState(s, roomId)) && (await s.rooms.store.membership(roomId, r.userId))?.membership !== "join";
  if (!known || partial || !(await hostInRoom(s, roomId))) {
    await joinThroughServers(s, r, roomId, servers, reason, { ...extra, ...memberContent });
    return { room_id: roomId };
  }
  try {
    await joinLocally(s, r, roomId, reason, extra, memberContent);
  } catch (err) {
    if (!(err instanceof NoLocalAuthoriser)) throw err;
    // A restricted room none of our members may authorise the join to: a remote join through a server
    // whose member may (as Synapse; the room stays as it is here until the join comes back). Decided in
    // the room's lane, so power levels that arrived just before count.
    // Beyond Synapse (which races here): our events to those servers (the user's join to the allowed
    // room) get a moment to reach them, and theirs to reach us (the events their make_join answer names
    // as prev_events) — and after each wait, and after a refusal, the join is decided here again: a
    // member of ours may authorise it after all (power levels that were on their way).
    const again = async (): Promise<boolean> => {
      try {
        await joinLocally(s, r, roomId, reason, extra, memberContent);
        return true;
      } catch {
        return false;
      }
    };
    await catchUpWith(s, err.servers);
    if (await again()) return { room_id: roomId };
    const instead = async (template: Pdu): Promise<boolean> => {
      await eventsArrived(s, prevEventIds(template));
      return again();
    };
    try {
      await joinThroughServers(s, r, roomId, [...err.servers, ...servers], reason, { ...extra, ...memberContent }, { instead });
    } catch (remoteErr) {
      if (!(await again())) throw remoteErr;
    }
  }
  return { room_id: roomId };
}

/** Thrown from the room's lane: no member of ours may authorise this restricted join, these servers' may. */
class NoLocalAuthoriser extends Error {
  constructor(readonly servers: string[]) {
    super("No member of this server may authorise the join");
  }
}

/** The join built and committed here (this server is in the room). */
async function joinLocally(s: Services, r: Requester, roomId: string, reason: string | undefined, extra: Record<string, unknown>, memberContent?: Record<string, unknown>): Promise<void> {
  await appendEvent(s, roomId, async (room): Promise<EventDraft | AlreadyDone> => {
    const existing = await membershipEvent(s, room, r.userId);
    const content: Record<string, unknown> = { ...(await memberContentFor(s, r.userId, "join")), ...extra, ...memberContent, membership: "join" };
    delete content.join_authorised_via_users_server;
    if (reason !== undefined) content.reason = reason;
    if (r.isGuest) content.kind = "guest";
    if (existing?.content.membership === "join" && comparable(existing.content) === comparable(content)) {
      return { alreadyDone: (await s.rooms.events.get(room.state.get(stateKeyOf("m.room.member", r.userId))!))! };
    }
    if (r.isGuest) {
      const ga = await currentStateEvent(s, room, "m.room.guest_access");
      if (ga?.content.guest_access !== "can_join") throw new MatrixError("M_FORBIDDEN", "Guest access is not allowed in this room", 403);
    }
    const restricted = await restrictedJoin(s, room, r.userId);
    if (restricted.kind === "no_authoriser") {
      const inviters = await serversThatCanInvite(s, room);
      if (inviters.length > 0) throw new NoLocalAuthoriser(inviters);
    }
    if (restricted.kind === "authorised") content.join_authorised_via_users_server = restricted.via;
    return { type: "m.room.member", stateKey: r.userId, sender: r.userId, content };
  });
}

/**
 * A join of a room this server is not in, through servers that are: those named, the inviter's when the
 * user is invited, and — when none is named — those of the room's last known state. Guests may not (as Synapse: their access
 * is judged by room state this server does not hold).
 */
async function joinThroughServers(s: Services, r: Requester, roomId: string, servers: readonly string[], reason: string | undefined, memberContent?: Record<string, unknown>, opts?: JoinRemoteOptions): Promise<void> {
  const row = await s.rooms.store.membership(roomId, r.userId);
  const inviter = row?.membership === "invite" ? domainOf(row.sender) : undefined;
  // As Synapse: the servers named and the inviter's; those of the room's last known state only when the
  // client named none (a server refusing the join is not bypassed through servers the client did not name).
  const lastKnown = servers.length > 0 ? [] : [...(await joinedServers(s, roomId))];
  const candidates = candidateServers(s, [...servers, inviter, ...lastKnown]);
  if (candidates.length === 0) throw new MatrixError("M_NOT_FOUND", "No known room with that id, and no server to join it through", 404);
  if (r.isGuest) throw new MatrixError("M_FORBIDDEN", "Guest access is not allowed in rooms on other servers", 403);
  const content: Record<string, unknown> = { ...(await memberContentFor(s, r.userId, "join")), ...memberContent, membership: "join" };
  delete content.join_authorised_via_users_server;
  if (reason !== undefined) content.reason = reason;
  await joinRemoteRoom(s, roomId, r.userId, candidates, content, opts);
}

/** Sets another user's membership (invite, kick → leave, ban, unban → leave) or one's own (leave, knock). */
async function changeMembership(
  s: Services,
  r: Requester,
  roomId: string,
  target: string,
  membership: "invite" | "leave" | "ban" | "knock",
  body: Record<string, unknown>,
  check?: (current: string | undefined) => void,
): Promise<StoredEvent> {
  parseUserId(target);
  const reason = reasonOf(body);
  requireLocalRoom(await loadRoom(s, roomId));
  return appendEvent(s, roomId, async (room) => {
    const current = (await membershipEvent(s, room, target))?.content.membership as string | undefined;
    check?.(current);
    const content = await memberContentFor(s, target, membership);
    if (reason !== undefined) content.reason = reason;
    if (membership === "invite" && body.is_direct === true) content.is_direct = true;
    return { type: "m.room.member", stateKey: target, sender: r.userId, content };
  });
}

/**
 * Leaves (or declines an invite, or withdraws a knock). As in Synapse: a room this server does not know
 * is 404, leaving again after leaving is a no-op, and anyone else — never in the room, or banned — is
 * refused by the authorization rules (403: only a member, an invitee or a knocker may leave).
 */
export async function leaveRoom(s: Services, r: Requester, roomId: string, body: Record<string, unknown> = {}): Promise<void> {
  const writer = roomWriterElsewhere(s, roomId);
  if (writer) return runOnWriter(s, writer, "leaveRoom", r, [roomId, body]);
  const room = await loadRoom(s, roomId);
  const row = await s.rooms.store.membership(roomId, r.userId);
  const current = row?.membership;
  if (current === "leave") return;
  await checkLeaveAllowed(s, roomId, current);
  const reason = reasonOf(body);
  const content: Record<string, unknown> = { membership: "leave", ...(reason !== undefined ? { reason } : {}) };
  // An invite from one of our users whose members here have all left since: declined with an event of
  // the room built here, as any leave (it reaches the servers still in the room), as Synapse does.
  const localInvite = room !== undefined && current === "invite" && domainOf(row!.sender) === s.config.server_name;
  if (!localInvite && (!room || !(await hostInRoom(s, roomId)))) {
    // A room this server is not in: an invite (or knock) held out of band is answered remotely.
    if (current === "invite" || current === "knock") return rejectRemotely(s, roomId, row!, content);
    if (!room) throw new MatrixError("M_NOT_FOUND", "Not a known room", 404);
    throw new MatrixError("M_FORBIDDEN", "You are not in this room", 403);
  }
  await changeMembership(s, r, roomId, r.userId, "leave", body);
}

/** The servers of the senders of a knock's stored knock_room_state (who answered the send_knock). */
function knockStateServers(knock: StoredEvent): string[] {
  const list = knock.pdu.unsigned?.["knock_room_state"];
  if (!Array.isArray(list)) return [];
  return [...new Set(list.map((e: Record<string, unknown>) => (typeof e.sender === "string" ? domainOf(e.sender) : undefined)).filter((d): d is string => !!d))];
}

/**
 * Rejects an invite to a room this server is not in through the inviting server, or withdraws a knock
 * through the room's servers; when that fails, a leave made up here (as Synapse) so the user is out of
 * the room at least on this server.
 */
async function rejectRemotely(s: Services, roomId: string, row: MembershipRow, content: Record<string, unknown>): Promise<void> {
  const previous = await s.rooms.events.get(row.eventId);
  const version = getRoomVersion((await s.rooms.store.getRoom(roomId))?.roomVersion ?? "");
  if (!previous || !version) throw new MatrixError("M_NOT_FOUND", "The membership to leave is not known here", 404);
  // An invite is rejected through the inviting server; a knock withdrawn through the servers whose
  // members' events described the room in the knock's answer (the room's).
  const servers = row.membership === "invite" ? [domainOf(row.sender)] : knockStateServers(previous);
  if (servers.length > 0) {
    try {
      await leaveRemoteRoom(s, roomId, row.userId, candidateServers(s, servers), content);
      return;
    } catch (err) {
      s.log.info({ roomId, err: (err as Error).message }, `answering the ${row.membership} through another server failed; leaving it locally`);
    }
  }
  await outOfBandLeave(s, version, previous, content);
}

export async function inviteUser(s: Services, r: Requester, roomId: string, body: Record<string, unknown>): Promise<void> {
  requireNotGuest(r, "inviteUser");
  requireNotSuspended(r, "Sending invites");
  const writer = roomWriterElsewhere(s, roomId);
  if (writer) return runOnWriter(s, writer, "inviteUser", r, [roomId, body]);
  // Invite by third-party identifier: a user the identity server knows is invited as anyone else.
  const thirdParty = thirdPartyInviteOf(body);
  if (thirdParty) return inviteByThirdPartyId(s, r, roomId, thirdParty);
  const target = body.user_id;
  if (target === undefined) throw new MatrixError("M_MISSING_PARAM", "Missing user_id", 400);
  if (typeof target !== "string") throw new MatrixError("M_BAD_JSON", "user_id must be a string");
  const { serverName } = parseUserId(target);
  checkInviteTarget(s, target);
  await requireRoomNotBlocked(s, roomId);
  const check = (current: string | undefined) => {
    if (current === "join") throw new MatrixError("M_FORBIDDEN", `${target} is already in the room.`, 403);
    if (current === "ban") throw new MatrixError("M_FORBIDDEN", `${target} is banned from the room`, 403);
  };
  if (serverName !== s.config.server_name) {
    // A user of another server: their server countersigns the invite before it is kept.
    const reason = reasonOf(body);
    const content: Record<string, unknown> = { membership: "invite" };
    if (reason !== undefined) content.reason = reason;
    if (body.is_direct === true) content.is_direct = true;
    await inviteRemoteUser(s, roomId, { type: "m.room.member", stateKey: target, sender: r.userId, content }, async (room) => check((await membershipEvent(s, room, target))?.content.membership as string | undefined));
    return;
  }
  if (!(await localUserExists(s, target))) throw new MatrixError("M_NOT_FOUND", "Unknown user", 404);
  await assertLocalInviteAllowed(s, r, target);
  await changeMembership(s, r, roomId, target, "invite", body, check);
}

/**
 * Invites by third-party identifier (POST /invite with an id_server, createRoom's invite_3pid): a user the
 * identity server knows the address of is invited as anyone else, otherwise the invite is stored there.
 */
export async function inviteByThirdPartyId(s: Services, r: Requester, roomId: string, t: ThirdPartyInvite, looked?: LookedUp): Promise<void> {
  requireNotGuest(r, "inviteUser");
  const done = await inviteThirdParty(s, r, roomId, t, looked);
  if ("userId" in done) await inviteUser(s, r, roomId, { user_id: done.userId });
}

function targetOf(body: Record<string, unknown>): string {
  const target = body.user_id;
  if (target === undefined) throw new MatrixError("M_MISSING_PARAM", "Missing user_id", 400);
  if (typeof target !== "string") throw new MatrixError("M_BAD_JSON", "user_id must be a string");
  return target;
}

export async function kickUser(s: Services, r: Requester, roomId: string, body: Record<string, unknown>): Promise<void> {
  requireNotGuest(r, "kickUser");
  const target = targetOf(body);
  await changeMembership(s, r, roomId, target, "leave", body, (current) => {
    if (current !== "join" && current !== "invite" && current !== "knock")
      throw new MatrixError("M_FORBIDDEN", "The target user is not in the room", 403);
  });
}

export async function banUser(s: Services, r: Requester, roomId: string, body: Record<string, unknown>): Promise<void> {
  requireNotGuest(r, "banUser");
  requireMembershipAllowed(r, "ban");
  await changeMembership(s, r, roomId, targetOf(body), "ban", body);
}

export async function unbanUser(s: Services, r: Requester, roomId: string, body: Record<string, unknown>): Promise<void> {
  requireNotGuest(r, "unbanUser");
  const target = targetOf(body);
  await changeMembership(s, r, roomId, target, "leave", body, (current) => {
    if (current !== "ban") throw new MatrixError("M_FORBIDDEN", "The target user is not banned", 403);
  });
}

/**
 * Knocks on a room (v7+). A room this server is not in is knocked on through other servers — `via`, the
 * servers of a remote alias, those of the room's last known state — and the knock kept out of band.
 */
export async function knockRoom(s: Services, r: Requester, roomIdOrAlias: string, body: Record<string, unknown>, via: readonly string[] = []): Promise<{ room_id: string }> {
  requireNotGuest(r, "knockRoom");
  requireNotSuspended(r, "Knocking on rooms");
  for (const server of via) if (!isValidServerName(server)) throw new MatrixError("M_INVALID_PARAM", `Not a server name: ${server}`, 400);
  const { roomId, servers } = await joinTarget(s, roomIdOrAlias, via);
  const writer = roomWriterElsewhere(s, roomId);
  if (writer) return runOnWriter(s, writer, "knockRoom", r, [roomIdOrAlias, body, via]);
  await requireRoomNotBlocked(s, roomId);
  const known = await loadRoom(s, roomId);
  if (!known || !(await hostInRoom(s, roomId))) {
    const current = (await s.rooms.store.membership(roomId, r.userId))?.membership;
    if (current === "join") throw new MatrixError("M_FORBIDDEN", "You are already in the room", 403);
    if (current === "ban") throw new MatrixError("M_FORBIDDEN", "You are banned from the room", 403);
    const candidates = candidateServers(s, [...servers, ...(await joinedServers(s, roomId))]);
    if (candidates.length === 0) throw new MatrixError("M_NOT_FOUND", "No known room with that id, and no server to knock through", 404);
    const content = await memberContentFor(s, r.userId, "knock");
    const reason = reasonOf(body);
    if (reason !== undefined) content.reason = reason;
    await knockRemoteRoom(s, roomId, r.userId, candidates, content);
    return { room_id: roomId };
  }
  if (!known.version.knock) throw new MatrixError("M_FORBIDDEN", `Room version ${known.version.id} does not support knocking`, 403);
  await changeMembership(s, r, roomId, r.userId, "knock", body, (current) => {
    if (current === "join") throw new MatrixError("M_FORBIDDEN", "You are already in the room", 403);
    if (current === "ban") throw new MatrixError("M_FORBIDDEN", "You are banned from the room", 403);
  });
  return { room_id: roomId };
}

export async function forgetRoom(s: Services, r: Requester, roomId: string): Promise<void> {
  const m = await s.rooms.store.membership(roomId, r.userId);
  // Nothing to forget (the spec documents no 404 here; Synapse answers 200).
  if (!m) return;
  if (m.membership === "join" || m.membership === "invite" || m.membership === "knock")
    throw new MatrixError("M_UNKNOWN", "User is in the room and cannot forget it", 400);
  await s.rooms.store.forget(roomId, r.userId);
  s.sync.streamCache.invalidateMemberships(r.userId);
}
