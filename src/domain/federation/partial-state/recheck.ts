// Events placed while a room's state was partial, placed again once its full state is known (Synapse's
// de-partial-stating, `update_state_for_partial_state_event`): from our join on, parents before children,
// each event's state before it is computed anew from its prev_events' new states (the join's from the
// full state before it; a prev_event this server lacks has its state fetched, as on receipt), resolved
// when they differ, and the auth rules run again on its auth events and that state. An event the full
// state does not authorise is rejected (its state is then the state before it); one rejected while
// partial that the full state authorises is accepted (Synapse updates the rejection either way). Current
// state is resolved anew at the forward extremities. Not re-soft-failed (Synapse does not either).
// Spec: Server-Server API "Checks performed on receipt of a PDU", "Rejection", "Room State Resolution".
import type { Services } from "../../services.ts";
import type { SqlExecutor } from "../../../storage/sql.ts";
import type { Pdu } from "../../events/types.ts";
import { authEventIds, prevEventIds } from "../../events/types.ts";
import type { StoredEvent } from "../../store/events.ts";
import { stateKeyOf, type StateMap } from "../../store/state-groups.ts";
import { stateBeforeEvent } from "../../rooms/state-before.ts";
import { authorizeWithAuthEvents, authorizeWithState, requiredSigners } from "../../rooms/pipeline/checks.ts";
import { stateChanges } from "../../rooms/pipeline/plan.ts";
import { indexStateChanges, writeMemberships } from "../../rooms/pipeline/commit.ts";
import { resolveState, trivialResolution } from "../../state/resolve.ts";
import { relationsOfEvents } from "../../relations/index-hook.ts";
import { searchableText } from "../../search/index-hooks.ts";
import type { RoomSnapshot } from "../../rooms/room-cache.ts";

const BATCH = 500;

/** What the check changes of one event. */
export interface RecheckedEvent {
  event: StoredEvent;
  /** The state its stored group holds. */
  storedAfter: StateMap;
  /** The state after it, when it differs from its stored group's (a new group is stored). */
  stateAfter?: StateMap;
  rejectedReason: string | null;
  replacesState: string | null;
}

export interface RecheckPlan {
  changed: RecheckedEvent[];
  /** How current state changes. */
  currentChanges: ReadonlyMap<string, string | null>;
  currentState: StateMap;
}

/** Where the states of the join's prev_events, and of other prev_events this server lacks, come from. */
export interface RecheckSources {
  /** The full state before our join. */
  beforeJoin: StateMap;
  /** The state after an event this server lacks (or holds only as an outlier), from another server. */
  stateAfterMissing: (eventId: string) => Promise<StateMap>;
}

/** The events of the room placed from our join on (not outliers; rejected ones too), in stream order. */
async function placedSinceJoin(s: Services, roomId: string, join: StoredEvent): Promise<StoredEvent[]> {
  const rows = await s.storage.sql.all<{ event_id: string }>(
    `SELECT event_id FROM events WHERE room_id = ? AND stream_ordering >= ? AND outlier = FALSE ORDER BY stream_ordering`,
    [roomId, join.streamOrdering],
  );
  const ids = rows.map((r) => r.event_id);
  const out: StoredEvent[] = [];
  for (let i = 0; i < ids.length; i += BATCH) {
    const events = await s.rooms.events.getMany(ids.slice(i, i + BATCH));
    for (const id of ids.slice(i, i + BATCH)) {
      const e = events.get(id);
      if (e && e.stateGroup !== null) out.push(e);
    }
  }
  return out;
}

/** Parents before children (by prev_events within the list), stream order otherwise. */
function parentsFirst(events: StoredEvent[]): StoredEvent[] {
  const byId = new Map(events.map((e) => [e.eventId, e]));
  const done = new Set<string>();
  const out: StoredEvent[] = [];
  const visit = (e: StoredEvent) => {
    if (done.has(e.eventId)) return;
    done.add(e.eventId);
    for (const id of prevEventIds(e.pdu)) {
      const p = byId.get(id);
      if (p) visit(p);
    }
    out.push(e);
  };
  for (const e of events) visit(e);
  return out;
}

/** The servers whose signatures were verified when the event was received (those the room version requires). */
function signedByOf(pdu: Pdu, room: RoomSnapshot): (server: string) => boolean {
  let required: Set<string>;
  try {
    required = requiredSigners(pdu, room.version);
  } catch {
    required = new Set();
  }
  return (server) => required.has(server) && pdu.signatures?.[server] !== undefined;
}

function sameState(a: StateMap, b: StateMap): boolean {
  if (a === b) return true;
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

/**
 * Places again every event placed since `join` (the room's full state known from `sources`), reading
 * only; the room's lane is held by the caller. Returns what changes.
 */
export async function recheckSinceJoin(s: Services, room: RoomSnapshot, join: StoredEvent, sources: RecheckSources): Promise<RecheckPlan> {
  const events = parentsFirst(await placedSinceJoin(s, room.roomId, join));
  const stored = await s.rooms.stateGroups.getMany(events.map((e) => e.stateGroup!));
  /** The new state after each event placed again, and whether it is rejected now. */
  const after = new Map<string, StateMap>();
  const rejected = new Set<string>();
  const pdus = new Map<string, Pdu>(events.map((e) => [e.eventId, e.pdu]));
  const lookup = async (want: readonly string[]) => {
    const out = new Map<string, Pdu>();
    const rest = want.filter((id) => {
      const p = pdus.get(id);
      if (p) out.set(id, p);
      return !p;
    });
    if (rest.length > 0)
      for (const [id, e] of await s.rooms.events.getMany(rest)) {
        pdus.set(id, e.pdu);
        out.set(id, e.pdu);
        if (e.rejectedReason !== null && !after.has(id)) rejected.add(id);
      }
    return out;
  };
  const isRejected = (id: string) => rejected.has(id);
  const resolve = async (sets: StateMap[]) => trivialResolution(sets) ?? (await resolveState({ version: room.version, stateSets: sets, loadEvents: lookup, isRejected }));
  /** The state after a prev_event outside the events placed again (before our join, or lacked here). */
  const outside = new Map<string, StateMap>();
  const stateAfterOutside = async (id: string): Promise<StateMap> => {
    const known = outside.get(id);
    if (known) return known;
    const e = await s.rooms.events.get(id);
    const state = e && !e.outlier && e.stateGroup !== null ? await s.rooms.stateGroups.get(e.stateGroup) : await sources.stateAfterMissing(id);
    outside.set(id, state);
    return state;
  };

  const changed: RecheckedEvent[] = [];
  for (const e of events) {
    const storedAfter = stored.get(e.stateGroup!)!;
    let before: StateMap;
    if (e.eventId === join.eventId) before = sources.beforeJoin;
    else {
      try {
        const sets: StateMap[] = [];
        for (const id of prevEventIds(e.pdu)) sets.push(after.get(id) ?? (await stateAfterOutside(id)));
        before = await resolve(sets);
      } catch (err) {
        // A prev_event's state cannot be had: the event keeps the state it was placed with.
        s.log.warn({ roomId: room.roomId, eventId: e.eventId, err: (err as Error).message }, "partial-state recheck: the state before an event cannot be computed anew");
        before = stateBeforeEvent(e, storedAfter);
      }
    }
    const key = e.pdu.state_key !== undefined ? stateKeyOf(e.pdu.type, e.pdu.state_key) : undefined;
    let rejectedReason: string | null = null;
    const signedBy = signedByOf(e.pdu, room);
    try {
      const ids = authEventIds(e.pdu);
      const found = await lookup(ids);
      const missing = ids.find((id) => !found.has(id));
      if (missing) throw new Error(`Unknown auth event ${missing}`);
      const byPdu = new Map(ids.map((id) => [found.get(id)!, id]));
      authorizeWithAuthEvents(room, e.pdu, ids.map((id) => found.get(id)!), signedBy, (p) => rejected.has(byPdu.get(p) ?? ""));
      await authorizeWithState(room, e.pdu, before, signedBy, lookup);
    } catch (err) {
      rejectedReason = e.rejectedReason ?? `Not authorised by the room's full state: ${(err as Error).message}`;
    }
    if (rejectedReason !== null) rejected.add(e.eventId);
    else rejected.delete(e.eventId);
    let stateAfter = key && rejectedReason === null ? new Map(before).set(key, e.eventId) : before;
    if (sameState(stateAfter, storedAfter)) stateAfter = storedAfter;
    after.set(e.eventId, stateAfter);
    const replacesState = key && rejectedReason === null ? (before.get(key) ?? null) : null;
    const wasRejected = e.rejectedReason !== null;
    if (stateAfter !== storedAfter || wasRejected !== (rejectedReason !== null) || (rejectedReason === null && replacesState !== e.replacesState))
      changed.push({ event: e, storedAfter, ...(stateAfter !== storedAfter ? { stateAfter } : {}), rejectedReason, replacesState: rejectedReason === null ? replacesState : e.replacesState });
  }
  const tips: StateMap[] = [];
  for (const id of room.extremities) tips.push(after.get(id) ?? (await stateAfterOutside(id).catch(() => room.state)));
  let currentState = tips.length > 0 ? await resolve(tips) : room.state;
  if (sameState(currentState, room.state)) currentState = room.state;
  return { changed, currentChanges: stateChanges(room.state, currentState), currentState };
}

/**
 * Writes a recheck's outcome in `tx`: new state groups, rejections (out of search and relations) and
 * acceptances (into them), current state and memberships.
 */
export async function writeRecheck(s: Services, tx: SqlExecutor, room: RoomSnapshot, plan: RecheckPlan): Promise<void> {
  const roomId = room.roomId;
  // Events whose new state is the same map share its new group.
  const regrouped = new Map<StateMap, number>();
  for (const c of plan.changed) {
    const e = c.event;
    let stateGroup = e.stateGroup;
    if (c.stateAfter && c.stateAfter !== c.storedAfter) {
      const old = e.stateGroup!;
      stateGroup = regrouped.get(c.stateAfter) ?? (await s.rooms.stateGroups.create(tx, roomId, e.eventId, c.stateAfter, { id: old, state: c.storedAfter }));
      regrouped.set(c.stateAfter, stateGroup);
    }
    // Object.assign, not a literal that starts with a spread: the cached copy keeps the shape events share.
    await s.rooms.events.restate(tx, Object.assign({}, e, { stateGroup, rejectedReason: c.rejectedReason, replacesState: c.replacesState }));
  }
  // What the timeline's indexers wrote for the events now rejected: out of the search index and relations.
  const rejected = plan.changed.filter((c) => c.rejectedReason !== null && c.event.rejectedReason === null).map((c) => c.event.eventId);
  if (rejected.length > 0) {
    await s.search.remove(tx, roomId, rejected);
    await s.relations.remove(tx, rejected);
  }
  // And for those accepted now: into them.
  const accepted = plan.changed.filter((c) => c.rejectedReason === null && c.event.rejectedReason !== null).map((c) => c.event);
  if (accepted.length > 0) {
    const texts = accepted.flatMap((e) => {
      const value = searchableText(e);
      return value !== undefined ? [{ streamOrdering: e.streamOrdering, value }] : [];
    });
    if (texts.length > 0) await s.search.index(tx, texts);
    const rows = await relationsOfEvents(tx, s, roomId, accepted);
    if (rows.length > 0) await s.relations.insert(tx, rows);
  }
  if (plan.currentChanges.size > 0) {
    await s.rooms.store.changeCurrentState(tx, roomId, plan.currentChanges);
    await writeMemberships(s, tx, roomId, plan.currentChanges, new Map());
    await indexStateChanges(s, tx, room, plan.currentChanges);
  }
}
