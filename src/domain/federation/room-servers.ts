// Which servers are in a room, and so which servers a local event must reach: the servers of the room's
// joined members (in current state, or in the state at an event), plus, for a membership event, the
// server of its target — the user who left, was kicked or banned, or had their knock refused hears of it
// though no longer joined. An invite reaches the invitee's server through the `invite` request instead
// (fed-membership), not through the queue. Our own server is never a destination.
// Spec: Server-Server API "Transactions", "PDUs" (sending to every server in the room); Synapse sends to
// the hosts joined in the state before the event, which is what this computes from the state after it.
// Servers the room's m.room.server_acl denies are never destinations (server-acl.ts) — but a new ACL
// itself still reaches the servers it denies, as in Synapse. Our join made through a remote handshake
// (partial or not) is sent on by the resident server that took it, not by us (as Synapse).
import type { Services } from "../services.ts";
import type { StoredEvent } from "../store/events.ts";
import type { StateMap } from "../store/state-groups.ts";
import { loadRoom } from "../rooms/room-cache.ts";
import { tryParseServerName } from "../ids.ts";
import { aclOfState, serverAllowedByAcl, type ServerAcl } from "./server-acl.ts";
import { isPartialStateJoin, partialStateOf, partialStateRooms } from "./partial-state/flag.ts";

const MEMBER_PREFIX = "m.room.member\u0000";

/** The server part of a user id (everything after the first colon), or undefined when malformed. */
export function serverOfUser(userId: string): string | undefined {
  const i = userId.indexOf(":");
  if (!userId.startsWith("@") || i < 0) return undefined;
  const server = userId.slice(i + 1);
  return tryParseServerName(server) ? server : undefined;
}

/** What is remembered per room: the joined members of one state map, and their servers. */
interface JoinedOfState {
  state: StateMap;
  /** Joined user id → their member event id. */
  joined: Map<string, string>;
  servers: string[];
}

function cacheOf(s: Services) {
  return s.caches.get<string, JoinedOfState>("joined_servers_of_room", 2000);
}

/**
 * The servers of the members joined in `state`, a state map of `roomId`. Computed from the last state
 * map seen for the room: only member entries that changed are read (one batched read), so a room's
 * successive states cost little however many members it has.
 */
export async function joinedServersOfState(s: Services, roomId: string, state: StateMap): Promise<readonly string[]> {
  return (await joinedOfState(s, roomId, state)).servers;
}

async function joinedOfState(s: Services, roomId: string, state: StateMap): Promise<JoinedOfState> {
  const cache = cacheOf(s);
  const prev = cache.get(roomId);
  if (prev?.state === state) return prev;
  const joined = new Map(prev?.joined ?? []);
  const changed = new Map<string, string>();
  for (const [key, eventId] of state) {
    if (!key.startsWith(MEMBER_PREFIX)) continue;
    if (prev && prev.state.get(key) === eventId) continue;
    changed.set(key.slice(MEMBER_PREFIX.length), eventId);
  }
  // Members whose entry left the state (state resolution can drop a key) are no longer joined.
  if (prev) for (const userId of joined.keys()) if (!state.has(MEMBER_PREFIX + userId)) joined.delete(userId);
  if (changed.size > 0) {
    const events = await s.rooms.events.getMany(changed.values());
    for (const [userId, eventId] of changed) {
      const membership = (events.get(eventId)?.pdu.content as { membership?: unknown } | undefined)?.membership;
      if (membership === "join") joined.set(userId, eventId);
      else joined.delete(userId);
    }
  }
  const servers = new Set<string>();
  for (const userId of joined.keys()) {
    const server = serverOfUser(userId);
    if (server) servers.add(server);
  }
  const entry: JoinedOfState = { state, joined, servers: [...servers] };
  cache.set(roomId, entry);
  return entry;
}

/**
 * Whether `e`, a local user's join, made this server a member of the room: no other user of ours is joined
 * in the state after it. Such a join came through a remote handshake (a local join needs this server in
 * the room: rooms/membership.ts), and the resident server that took it sends it on to the room's other
 * servers (send-membership.ts, on our behalf): we do not send it ourselves (Synapse: proactively_send
 * false, "the remote server is responsible for sending our join event to the rest of the federation").
 */
async function joinedThroughHandshake(s: Services, e: StoredEvent, joined: ReadonlyMap<string, string>): Promise<boolean> {
  const p = e.pdu;
  if (p.type !== "m.room.member" || p.state_key !== p.sender || (p.content as { membership?: unknown }).membership !== "join") return false;
  if (joined.get(p.sender) !== e.eventId) return false;
  for (const userId of joined.keys()) if (userId !== p.sender && serverOfUser(userId) === s.config.server_name) return false;
  // A join replacing a join is a profile change (display name, avatar), made here: ours to send.
  if (e.replacesState) {
    const before = await s.rooms.events.get(e.replacesState);
    if ((before?.pdu.content as { membership?: unknown } | undefined)?.membership === "join") return false;
  }
  return true;
}

/** The servers of the room's joined members in current state (ours included when we have a member); [] for an unknown room. */
export async function serversInRoom(s: Services, roomId: string): Promise<string[]> {
  const room = await loadRoom(s, roomId);
  if (!room) return [];
  return [...(await joinedServersOfState(s, roomId, room.state))];
}

/**
 * Whether a server other than this one is in the room at `state`: one of its users joined, or (partial
 * state) the join's answer named it. The messages built while none is are stored unsigned (own-signature.ts).
 */
export async function otherServerInRoom(s: Services, roomId: string, state: StateMap): Promise<boolean> {
  const servers = await withPartialStateServers(s, roomId, await joinedServersOfState(s, roomId, state));
  return servers.some((d) => d !== s.config.server_name);
}

/** The remote servers in a room now (serversInRoom without our own, nor those its server ACL denies): where a room's EDUs go. */
export async function remoteServersInRoom(s: Services, roomId: string): Promise<string[]> {
  const room = await loadRoom(s, roomId);
  if (!room) return [];
  const acl = await aclOfState(s, room.state);
  return (await withPartialStateServers(s, roomId, await joinedServersOfState(s, roomId, room.state))).filter((d) => d !== s.config.server_name && (!acl || serverAllowedByAcl(acl, d)));
}

/**
 * In a room joined with partial state, the servers the join's answer named (servers_in_room) are in it too:
 * current state lacks their members until the full state is known (Synapse sends to them alike).
 */
export async function withPartialStateServers(s: Services, roomId: string, servers: readonly string[]): Promise<string[]> {
  const ps = await partialStateOf(s, roomId);
  return ps ? [...new Set([...servers, ...ps.servers])] : [...servers];
}

/** Whether a stored event is one of ours to send: in the timeline and sent by a local user. */
export function isLocalTimelineEvent(s: Services, e: StoredEvent): boolean {
  return !e.outlier && e.rejectedReason === null && !e.softFailed && serverOfUser(e.pdu.sender) === s.config.server_name;
}

/**
 * The remote servers each of `events` must be sent to (local timeline events only; others map to []):
 * the servers joined in the state after the event, plus a membership event's target's server unless it
 * is an invite. The state maps are read in one batch; events sharing a state share the computation.
 */
export async function destinationsOfEvents(s: Services, events: readonly StoredEvent[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  const local = events.filter((e) => isLocalTimelineEvent(s, e) && e.stateGroup !== null);
  // Our join that made a room partial went out through the resident server (send_join): not sent again.
  const ours: StoredEvent[] = [];
  for (const e of local) if (!(e.pdu.type === "m.room.member" && (await isPartialStateJoin(s, e.eventId)))) ours.push(e);
  if (ours.length === 0) return out;
  const states = await s.rooms.stateGroups.getMany(ours.map((e) => e.stateGroup!));
  // Per state group (a room's messages share one): its joined servers and its ACL, found once.
  const ofGroup = new Map<number, { servers: string[]; joined: ReadonlyMap<string, string>; acl: ServerAcl | undefined }>();
  for (const e of ours) {
    let g = ofGroup.get(e.stateGroup!);
    if (!g) {
      const state = states.get(e.stateGroup!)!;
      const of = await joinedOfState(s, e.roomId, state);
      g = { servers: await withPartialStateServers(s, e.roomId, of.servers), joined: of.joined, acl: await aclOfState(s, state) };
      ofGroup.set(e.stateGroup!, g);
    }
    if (await joinedThroughHandshake(s, e, g.joined)) {
      out.set(e.eventId, []);
      continue;
    }
    const dests = new Set(g.servers);
    const p = e.pdu;
    if (p.type === "m.room.member" && typeof p.state_key === "string") {
      const membership = (p.content as { membership?: unknown }).membership;
      const target = serverOfUser(p.state_key);
      if (target && membership !== "invite") dests.add(target);
    }
    dests.delete(s.config.server_name);
    // Servers the room's ACL denies are not sent to: the ACL in force before the event, so that a new ACL
    // still reaches the servers it denies (they learn they are shut out; Synapse sends it to them too).
    const acl = p.type === "m.room.server_acl" && p.state_key === "" ? await aclBefore(s, e) : g.acl;
    out.set(e.eventId, acl ? [...dests].filter((d) => serverAllowedByAcl(acl, d)) : [...dests]);
  }
  return out;
}

/** The ACL an m.room.server_acl event replaced (undefined: none). */
async function aclBefore(s: Services, e: StoredEvent): Promise<ServerAcl | undefined> {
  return e.replacesState ? aclOfState(s, new Map([["m.room.server_acl\u0000", e.replacesState]])) : undefined;
}

/**
 * The remote servers sharing a room with each of `userIds` (joined on both sides), and for a room joined
 * with partial state the servers its join named (Synapse sends to them alike): where their presence and
 * device-list updates go. One query for all of them (two with partial-state rooms).
 */
export async function serversSharingRoomsWith(s: Services, userIds: readonly string[]): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  const ids = [...new Set(userIds)];
  const partial = await partialStateRooms(s);
  if (partial.length > 0) {
    const servers = new Map(partial.map((p) => [p.roomId, p.servers]));
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      const rooms = [...servers.keys()];
      const rows = await s.storage.sql.all<{ user_id: string; room_id: string }>(
        `SELECT user_id, room_id FROM room_memberships WHERE membership = 'join' AND user_id IN (${chunk.map(() => "?").join(",")}) AND room_id IN (${rooms.map(() => "?").join(",")})`,
        [...chunk, ...rooms],
      );
      for (const r of rows) {
        let set = out.get(r.user_id);
        if (!set) out.set(r.user_id, (set = new Set()));
        for (const d of servers.get(r.room_id) ?? []) if (d !== s.config.server_name) set.add(d);
      }
    }
  }
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    const rows = await s.storage.sql.all<{ user_id: string; other: string }>(
      `SELECT DISTINCT a.user_id AS user_id, b.user_id AS other FROM room_memberships a
       JOIN room_memberships b ON b.room_id = a.room_id AND b.membership = 'join'
       WHERE a.membership = 'join' AND a.user_id IN (${chunk.map(() => "?").join(",")})`,
      chunk,
    );
    for (const r of rows) {
      const server = serverOfUser(r.other);
      if (!server || server === s.config.server_name) continue;
      let set = out.get(r.user_id);
      if (!set) out.set(r.user_id, (set = new Set()));
      set.add(server);
    }
  }
  return out;
}
