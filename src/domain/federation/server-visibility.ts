// What another server may read of a room: the one rule every serving endpoint (/event, /state,
// /state_ids, /event_auth, /backfill, /get_missing_events) applies. A server may read a room it is in (one
// of its users joined now); it sees an event when one of its users could: world_readable and shared
// history always, `invited` when one of its users was invited or joined at the event, `joined` when one
// was joined at it. An event it may not see is served redacted (the DAG stays whole for it), as is one a
// redaction took effect on, and an erased user's (as Synapse); rejected events are never served. Outliers (no known state) count as shared.
// A room joined with partial state (partial-state/) refuses the reads that need its full state; those it
// serves count the servers its join named as in it, and redact other servers' events (as Synapse does).
// Spec: Client-Server API "History visibility" (server behaviour); Server-Server API "Retrieving events".
import { assertServerAllowed } from "./server-acl.ts";
import type { Services } from "../services.ts";
import type { Pdu } from "../events/types.ts";
import type { StoredEvent } from "../store/events.ts";
import { stateKeyOf, type StateMap } from "../store/state-groups.ts";
import { redactEvent } from "../events/redaction.ts";
import { MatrixError } from "../errors.ts";
import { loadRoom, type RoomSnapshot } from "../rooms/room-cache.ts";
import { effectiveRedactions } from "../rooms/redactions.ts";
import { isPartialState } from "./partial-state/flag.ts";
import { unableDueToPartialState } from "./partial-state/refusals.ts";
import { joinedServersOfState, withPartialStateServers } from "./room-servers.ts";
import { domainOf } from "../events/types.ts";
import { signOwnEvents } from "../rooms/own-signature.ts";
import { erasedForReader } from "../rooms/erasure.ts";

const MEMBER_PREFIX = "m.room.member\u0000";
const HV_KEY = stateKeyOf("m.room.history_visibility", "");

/** The member keys of `state` whose user lives on `server`. */
function memberKeysOf(state: StateMap, server: string): string[] {
  const suffix = `:${server}`;
  const out: string[] = [];
  for (const k of state.keys()) if (k.startsWith(MEMBER_PREFIX) && k.endsWith(suffix)) out.push(k);
  return out;
}

/** The memberships in `state` of `server`'s users (from the member events, cached as a rule). */
async function membershipsOf(s: Services, state: StateMap, server: string): Promise<string[]> {
  const ids = memberKeysOf(state, server).map((k) => state.get(k)!);
  if (ids.length === 0) return [];
  const events = await s.rooms.events.getMany(ids);
  return ids.map((id) => events.get(id)?.pdu.content["membership"]).filter((m): m is string => typeof m === "string");
}

/** Whether one of `server`'s users is joined to the room now (current state). */
export async function serverInRoom(s: Services, room: RoomSnapshot, server: string): Promise<boolean> {
  return (await membershipsOf(s, room.state, server)).includes("join");
}

/**
 * The room `origin` asks about, if it may read it: 404 M_NOT_FOUND for a room this server does not know,
 * 403 M_FORBIDDEN when the room's server ACL denies `origin` or none of its users is in it (Synapse:
 * "Server is banned from room", "Host not in room."). A room joined with partial state: 403
 * ORG.MATRIX.MSC3895_UNABLE_DUE_TO_PARTIAL_STATE, unless `allowPartialState` (backfill, missing events),
 * where `origin` is in it when its join named it (Synapse's approximation of the servers in the room).
 */
export async function roomForServer(s: Services, roomId: string, origin: string, opts: { allowPartialState?: boolean } = {}): Promise<RoomSnapshot> {
  const room = await loadRoom(s, roomId);
  if (!room) throw new MatrixError("M_NOT_FOUND", "Unknown room", 404);
  const partial = await isPartialState(s, roomId);
  if (partial && opts.allowPartialState !== true) throw unableDueToPartialState();
  await assertServerAllowed(s, room.state, origin);
  const inRoom = partial ? (await withPartialStateServers(s, roomId, await joinedServersOfState(s, roomId, room.state))).includes(origin) : await serverInRoom(s, room, origin);
  if (!inRoom) throw new MatrixError("M_FORBIDDEN", "Host not in room.", 403);
  return room;
}

/** Whether `server` may see each of `events` (by event id), by the history visibility at each. */
export async function visibleToServer(s: Services, server: string, events: readonly StoredEvent[]): Promise<Set<string>> {
  const out = new Set<string>();
  const placed = events.filter((e) => e.stateGroup !== null);
  for (const e of events) if (e.stateGroup === null) out.add(e.eventId);
  if (placed.length === 0) return out;
  const groups = await s.rooms.stateGroups.getMany(placed.map((e) => e.stateGroup!));
  const hvEvents = await s.rooms.events.getMany([...groups.values()].map((g) => g.get(HV_KEY)).filter((id): id is string => id !== undefined));
  const visibilityOf = (g: StateMap) => {
    const id = g.get(HV_KEY);
    const v = id ? hvEvents.get(id)?.pdu.content["history_visibility"] : undefined;
    return typeof v === "string" ? v : "shared";
  };
  // Membership only matters under `invited` and `joined`: one look per distinct state group.
  const verdict = new Map<number, boolean>();
  for (const [id, g] of groups) {
    const visibility = visibilityOf(g);
    if (visibility !== "invited" && visibility !== "joined") {
      verdict.set(id, true);
      continue;
    }
    const ms = await membershipsOf(s, g, server);
    verdict.set(id, ms.includes("join") || (visibility === "invited" && ms.includes("invite")));
  }
  for (const e of placed) if (verdict.get(e.stateGroup!)) out.add(e.eventId);
  return out;
}

/**
 * The PDUs of `events` as `server` may have them, in the same order: rejected events left out; an event
 * it may not see, one a redaction took effect on, or an erased user's, in its redacted form (signatures
 * and hashes kept).
 * `checkVisibility: false` serves auth chains and state, which any server in the room may have (Synapse).
 */
export async function pdusForServer(s: Services, server: string, room: RoomSnapshot, events: readonly StoredEvent[], opts: { checkVisibility?: boolean } = {}): Promise<Pdu[]> {
  const served = events.filter((e) => e.rejectedReason === null);
  const visible = opts.checkVisibility === false ? undefined : await visibleToServer(s, server, served);
  // While the room's state is partial, the servers in it are not known for sure: other servers' events are
  // served redacted (Synapse's filter_out_remote_partial_state_events).
  const hideRemote = visible !== undefined && (await isPartialState(s, room.roomId));
  // An erased user's events reach other servers redacted (Synapse's filter_out_erased_senders).
  const erased = visible !== undefined ? await erasedForReader(s, undefined, served) : undefined;
  const hidden = (e: StoredEvent) => (visible && !visible.has(e.eventId)) || erased?.has(e.eventId) === true || (hideRemote && domainOf(e.pdu.sender) !== s.config.server_name);
  const redacted = await effectiveRedactions(s, served, async () => room.version.id);
  await signOwnEvents(s, served, () => room.version);
  return served.map((e) => (redacted.has(e.eventId) || hidden(e) ? redactEvent(e.pdu, room.version) : e.pdu));
}

/** The envelope GET /event and /backfill answer with (a transaction without destination). */
export function transactionOf(s: Services, pdus: Pdu[]): { origin: string; origin_server_ts: number; pdus: Pdu[] } {
  return { origin: s.config.server_name, origin_server_ts: s.clock.now(), pdus };
}
