// Restricted joins (room versions 8+ `restricted`, 10+ `knock_restricted`): whether a join needs a
// `join_authorised_via_users_server`, and which of this server's joined members may sign for it (one who
// can invite). Used when a local user joins (through another server whose member can, when none of ours
// can), and when this server answers a remote server's make_join. A join that must go through another
// server first gives the events on their way between the two a moment (catchUpWith, eventsArrived): our
// user's join to the allowed room, the power levels letting a member of ours authorise it after all.
// Spec: Client-Server API "Restricted rooms"; Room Versions v8 "Authorization rules" (member, join).
import type { Services } from "../services.ts";
import { domainOf, isPlainObject } from "../events/types.ts";
import { currentStateEvent, type RoomSnapshot } from "./room-cache.ts";
import { powerLevelsOf } from "./power-levels.ts";
import { federationSenderConsumer } from "../../federation/sender/consumer.ts";

export type RestrictedJoin =
  /** The join needs no authorising user: not a restricted room, or the user is invited or joined already. */
  | { kind: "unrestricted" }
  /** The user is in an allowed room and this member of the room may authorise the join. */
  | { kind: "authorised"; via: string }
  /** The user is in an allowed room but no member of this server may invite. */
  | { kind: "no_authoriser" }
  /** The user is in none of the allowed rooms this server knows; `unknownRooms` when it is not in all of them. */
  | { kind: "not_allowed"; unknownRooms: boolean };

/** How a join of `userId` to `room` stands against the room's restricted join rule, as this server sees it. */
export async function restrictedJoin(s: Services, room: RoomSnapshot, userId: string): Promise<RestrictedJoin> {
  const rules = await currentStateEvent(s, room, "m.room.join_rules");
  const rule = rules?.content.join_rule;
  if (!((rule === "restricted" && room.version.restricted) || (rule === "knock_restricted" && room.version.knockRestricted))) return { kind: "unrestricted" };
  const current = (await currentStateEvent(s, room, "m.room.member", userId))?.content.membership;
  if (current === "join" || current === "invite") return { kind: "unrestricted" };
  const allow = Array.isArray(rules!.content.allow) ? rules!.content.allow : [];
  let allowed = false;
  let unknownRooms = false;
  const local = domainOf(userId) === s.config.server_name;
  for (const a of allow) {
    if (!isPlainObject(a) || a.type !== "m.room_membership" || typeof a.room_id !== "string") continue;
    // What this server knows of a room it is no longer in is stale: a remote user's membership there is
    // not taken (as Synapse, which drops the state of rooms it left); our own users' is ours.
    const here = await s.rooms.store.membersOf(a.room_id);
    const hostJoined = here.some((x) => x.membership === "join" && domainOf(x.userId) === s.config.server_name);
    if (!hostJoined) unknownRooms = true;
    if ((hostJoined || local) && (await s.rooms.store.membership(a.room_id, userId))?.membership === "join") {
      allowed = true;
      break;
    }
  }
  if (!allowed) return { kind: "not_allowed", unknownRooms };
  const powers = await powerLevelsOf(s, room);
  const needed = powers.named("invite");
  const candidate = (await s.rooms.store.membersOf(room.roomId))
    .filter((m) => m.membership === "join" && domainOf(m.userId) === s.config.server_name)
    .map((m) => ({ id: m.userId, level: powers.user(m.userId) }))
    .filter((m) => m.level >= needed)
    .sort((a, b) => b.level - a.level)[0];
  return candidate ? { kind: "authorised", via: candidate.id } : { kind: "no_authoriser" };
}

/**
 * The other servers with a joined member who may invite (highest level first): where a local user's
 * restricted join goes when no member of ours may authorise it (Synapse's servers_that_can_issue_invite).
 */
export async function serversThatCanInvite(s: Services, room: RoomSnapshot): Promise<string[]> {
  const powers = await powerLevelsOf(s, room);
  const needed = powers.named("invite");
  const members = (await s.rooms.store.membersOf(room.roomId))
    .filter((m) => m.membership === "join" && domainOf(m.userId) !== s.config.server_name)
    .map((m) => ({ server: domainOf(m.userId), level: powers.user(m.userId) }))
    .filter((m) => m.level >= needed)
    .sort((a, b) => b.level - a.level);
  return [...new Set(members.map((m) => m.server).filter((x): x is string => x !== undefined))];
}

/** How long a restricted join through another server waits for the events on their way between the two. */
const CATCH_UP_MS = 1_000;
const POLL_MS = 10;
const pause = () => new Promise((r) => setTimeout(r, POLL_MS));

/**
 * Before a restricted join goes through `servers`: what this server has sent them — the user's join to
 * the allowed room, made here a moment ago — is given a moment (at most CATCH_UP_MS) to get there, else
 * they refuse a join they would allow. A destination that is down is not waited for.
 */
export async function catchUpWith(s: Services, servers: readonly string[]): Promise<void> {
  const deadline = Date.now() + CATCH_UP_MS;
  await s.consumers.reach(federationSenderConsumer.name, await s.rooms.events.streamIds.current(), CATCH_UP_MS);
  for (;;) {
    const states = await Promise.all(servers.map((d) => s.federationSender.describe(d)));
    if (states.every((st) => !st || st.down || st.queuedPdus === 0) || Date.now() >= deadline) return;
    await pause();
  }
}

/** Waits (at most CATCH_UP_MS) until these events are in this server's copy of the room's DAG. */
export async function eventsArrived(s: Services, eventIds: readonly string[]): Promise<void> {
  const deadline = Date.now() + CATCH_UP_MS;
  for (;;) {
    const held = await s.rooms.events.getMany(eventIds);
    if (eventIds.every((id) => held.get(id) && !held.get(id)!.outlier) || Date.now() >= deadline) return;
    await pause();
  }
}
