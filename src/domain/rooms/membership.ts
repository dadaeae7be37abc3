// Membership changes made by local users: join (by id or alias), leave, invite, kick, ban, unban, knock,
// forget. Each builds an m.room.member event that the authorization rules accept or refuse; restricted
// joins name a local member who may invite (join_authorised_via_users_server). Spec: Client-Server API
// "Room membership", Room Versions "Authorization rules".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { StoredEvent } from "../store/events.ts";
import { parseUserId } from "../ids.ts";
import { isPlainObject } from "../events/types.ts";
import { appendEvent, type AlreadyDone } from "./append.ts";
import { currentStateEvent, loadRoom, type RoomSnapshot } from "./room-cache.ts";
import { stateKeyOf } from "../store/state-groups.ts";
import { powerLevelsOf } from "./power-levels.ts";
import type { EventDraft } from "./build-event.ts";
import { requireNotGuest } from "../accounts/guest-access.ts";
import { localUserExists } from "../accounts/user-lookup.ts";

/** Resolves a room alias to a room id (the directory's local aliases; remote ones with federation). */
export type AliasResolver = (s: Services, alias: string) => Promise<string | undefined>;

/** The member event content for `userId`, with their profile's displayname and avatar_url when set. */
export async function memberContentFor(s: Services, userId: string, membership: string): Promise<Record<string, unknown>> {
  const content: Record<string, unknown> = { membership };
  if (membership === "join" || membership === "invite" || membership === "knock") {
    const profile = parseUserId(userId).serverName === s.config.server_name ? await s.users.getProfile(userId) : null;
    if (profile?.displayname) content.displayname = profile.displayname;
    if (profile?.avatarUrl) content.avatar_url = profile.avatarUrl;
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
  // Rooms on other servers need federation (make_join / send_join), which comes later.
  if (!room) throw new MatrixError("M_NOT_FOUND", "No known room with that id; joining rooms on other servers needs federation", 404);
  return room;
}

/** For a restricted join: a local joined member who may invite, to name in join_authorised_via_users_server. */
async function authorisingUser(s: Services, room: RoomSnapshot, userId: string): Promise<string | undefined> {
  const rules = await currentStateEvent(s, room, "m.room.join_rules");
  const rule = rules?.content.join_rule;
  if (!((rule === "restricted" && room.version.restricted) || (rule === "knock_restricted" && room.version.knockRestricted))) return undefined;
  const current = (await membershipEvent(s, room, userId))?.content.membership;
  if (current === "join" || current === "invite") return undefined; // already allowed without it
  const allow = Array.isArray(rules!.content.allow) ? rules!.content.allow : [];
  let allowed = false;
  for (const a of allow) {
    if (!isPlainObject(a) || a.type !== "m.room_membership" || typeof a.room_id !== "string") continue;
    const m = await s.rooms.store.membership(a.room_id, userId);
    if (m?.membership === "join") {
      allowed = true;
      break;
    }
  }
  if (!allowed) return undefined;
  const powers = await powerLevelsOf(s, room);
  const needed = powers.named("invite");
  const members = await s.rooms.store.membersOf(room.roomId);
  const local = `:${s.config.server_name}`;
  const candidate = members
    .filter((m) => m.membership === "join" && m.userId.endsWith(local))
    .map((m) => ({ id: m.userId, level: powers.user(m.userId) }))
    .filter((m) => m.level >= needed)
    .sort((a, b) => b.level - a.level)[0];
  return candidate?.id;
}

/**
 * Joins (or re-joins, e.g. to change a per-room profile). `memberContent` is the content a client sent
 * through the state API: its displayname/avatar_url win over the global profile (per-room profiles, as in
 * Synapse); join_authorised_via_users_server is always the server's choice.
 */
export async function joinRoom(
  s: Services,
  r: Requester,
  roomIdOrAlias: string,
  body: Record<string, unknown> = {},
  memberContent?: Record<string, unknown>,
): Promise<{ room_id: string }> {
  const roomId = await resolveRoomIdOrAlias(s, roomIdOrAlias);
  requireLocalRoom(await loadRoom(s, roomId));
  const reason = reasonOf(body);
  await appendEvent(s, roomId, async (room): Promise<EventDraft | AlreadyDone> => {
    const existing = await membershipEvent(s, room, r.userId);
    const content: Record<string, unknown> = { ...(await memberContentFor(s, r.userId, "join")), ...memberContent, membership: "join" };
    delete content.join_authorised_via_users_server;
    if (existing?.content.membership === "join" && existing.content.displayname === content.displayname && existing.content.avatar_url === content.avatar_url) {
      return { alreadyDone: (await s.rooms.events.get(room.state.get(stateKeyOf("m.room.member", r.userId))!))! };
    }
    if (r.isGuest) {
      const ga = await currentStateEvent(s, room, "m.room.guest_access");
      if (ga?.content.guest_access !== "can_join") throw new MatrixError("M_FORBIDDEN", "Guest access is not allowed in this room", 403);
    }
    if (reason !== undefined) content.reason = reason;
    const via = await authorisingUser(s, room, r.userId);
    if (via) content.join_authorised_via_users_server = via;
    return { type: "m.room.member", stateKey: r.userId, sender: r.userId, content };
  });
  return { room_id: roomId };
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

export async function leaveRoom(s: Services, r: Requester, roomId: string, body: Record<string, unknown> = {}): Promise<void> {
  const room = await loadRoom(s, roomId);
  const current = room ? (await membershipEvent(s, room, r.userId))?.content.membership : undefined;
  // Leaving a room you are not in is a no-op, as in Synapse (the spec lists external → leave as valid).
  if (!room || current === undefined || current === "leave") return;
  await changeMembership(s, r, roomId, r.userId, "leave", body);
}

export async function inviteUser(s: Services, r: Requester, roomId: string, body: Record<string, unknown>): Promise<void> {
  requireNotGuest(r, "inviteUser");
  const target = body.user_id;
  if (target === undefined) throw new MatrixError("M_MISSING_PARAM", "Missing user_id", 400);
  if (typeof target !== "string") throw new MatrixError("M_BAD_JSON", "user_id must be a string");
  const { serverName } = parseUserId(target);
  if (serverName !== s.config.server_name) throw new MatrixError("M_FORBIDDEN", "Inviting users on other servers needs federation, which this server does not offer yet", 403);
  if (!(await localUserExists(s, target))) throw new MatrixError("M_NOT_FOUND", "Unknown user", 404);
  await changeMembership(s, r, roomId, target, "invite", body, (current) => {
    if (current === "join") throw new MatrixError("M_FORBIDDEN", `${target} is already in the room.`, 403);
    if (current === "ban") throw new MatrixError("M_FORBIDDEN", `${target} is banned from the room`, 403);
  });
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
  await changeMembership(s, r, roomId, targetOf(body), "ban", body);
}

export async function unbanUser(s: Services, r: Requester, roomId: string, body: Record<string, unknown>): Promise<void> {
  requireNotGuest(r, "unbanUser");
  const target = targetOf(body);
  await changeMembership(s, r, roomId, target, "leave", body, (current) => {
    if (current !== "ban") throw new MatrixError("M_FORBIDDEN", "The target user is not banned", 403);
  });
}

export async function knockRoom(s: Services, r: Requester, roomIdOrAlias: string, body: Record<string, unknown>): Promise<{ room_id: string }> {
  requireNotGuest(r, "knockRoom");
  const roomId = await resolveRoomIdOrAlias(s, roomIdOrAlias);
  const room = requireLocalRoom(await loadRoom(s, roomId));
  if (!room.version.knock) throw new MatrixError("M_FORBIDDEN", `Room version ${room.version.id} does not support knocking`, 403);
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
