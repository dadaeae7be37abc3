// Events placed while a room's state was partial, checked again once its full state is known (as Synapse's
// de-partial-stating does): in stream order from our join, each event's state before it is taken from its
// completed state group (the full state at the join fills what the partial state lacked), with the events
// found unauthorised so far taken out of it, and the auth rules run again. An event the full state does
// not authorise is marked rejected (its state is then the state before it and it leaves every later
// state: where it stood, the event it replaced stands); current state follows the same way (Synapse
// resolves it again from the tips; here the rejected entries are replaced in place). Not re-soft-failed,
// and nothing rejected is accepted again (Synapse does not soft-fail here either, and a partial check
// hardly rejects what the full state allows: it sees the same state where it has it, the event's own auth
// events elsewhere, and those passed already).
// Spec: Server-Server API "Checks performed on receipt of a PDU", "Rejection".
import type { Services } from "../../services.ts";
import type { SqlExecutor } from "../../../storage/sql.ts";
import type { Pdu } from "../../events/types.ts";
import type { StoredEvent } from "../../store/events.ts";
import { stateKeyOf, type StateMap } from "../../store/state-groups.ts";
import { stateBeforeEvent } from "../../rooms/state-before.ts";
import { authorizeWithState, requiredSigners } from "../../rooms/pipeline/checks.ts";
import { stateChanges } from "../../rooms/pipeline/plan.ts";
import { writeMemberships } from "../../rooms/pipeline/commit.ts";
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
  /** How current state changes (the rejected events taken out of it). */
  currentChanges: ReadonlyMap<string, string | null>;
  currentState: StateMap;
}

/** The events of the room placed from our join on (not outliers, not rejected), in stream order. */
async function placedSinceJoin(s: Services, roomId: string, joinEventId: string): Promise<string[]> {
  const join = await s.rooms.events.get(joinEventId);
  if (!join) return [];
  const rows = await s.storage.sql.all<{ event_id: string }>(
    `SELECT event_id FROM events WHERE room_id = ? AND stream_ordering >= ? AND outlier = FALSE AND rejected_reason IS NULL ORDER BY stream_ordering`,
    [roomId, join.streamOrdering],
  );
  return rows.map((r) => r.event_id);
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

/**
 * Checks every event placed since `joinEventId` against the full state (`fullAtJoin`: the full state at
 * the join, already merged into the room's state groups). Runs in the room's lane; reads only.
 */
export async function recheckSinceJoin(s: Services, room: RoomSnapshot, joinEventId: string, fullAtJoin: StateMap): Promise<RecheckPlan> {
  const ids = await placedSinceJoin(s, room.roomId, joinEventId);
  /** Rejected state events still in some state → their key and what the key holds instead (null: nothing). */
  const taken = new Map<string, { key: string; instead: string | null }>();
  const fix = (state: StateMap): StateMap => {
    let out: Map<string, string> | undefined;
    for (const [id, { key, instead }] of taken) {
      if (state.get(key) !== id) continue;
      out ??= new Map(state);
      if (instead === null) out.delete(key);
      else out.set(key, instead);
    }
    return out ?? state;
  };
  // A group's fixed state, shared by the events of that group while no new rejection changes it.
  let version = 0;
  const fixedGroups = new Map<number, { version: number; state: StateMap }>();
  const fixGroup = (group: number, state: StateMap): StateMap => {
    const hit = fixedGroups.get(group);
    if (hit?.version === version) return hit.state;
    const fixed = fix(state);
    fixedGroups.set(group, { version, state: fixed });
    return fixed;
  };
  const lookup = async (want: string[]) => new Map([...(await s.rooms.events.getMany(want))].map(([id, e]) => [id, e.pdu]));
  const changed: RecheckedEvent[] = [];
  for (let i = 0; i < ids.length; i += BATCH) {
    const events = await s.rooms.events.getMany(ids.slice(i, i + BATCH));
    const placed = ids.slice(i, i + BATCH).map((id) => events.get(id)).filter((e): e is StoredEvent => e !== undefined && e.stateGroup !== null);
    const groups = await s.rooms.stateGroups.getMany(placed.map((e) => e.stateGroup!));
    for (const e of placed) {
      const after = groups.get(e.stateGroup!)!;
      const key = e.pdu.state_key !== undefined ? stateKeyOf(e.pdu.type, e.pdu.state_key) : undefined;
      let before = fix(stateBeforeEvent(e, after));
      // A state event whose key the partial state lacked: the full state at the join held it before.
      let replacesState = e.replacesState;
      if (key && !before.has(key) && after.get(key) === e.eventId && fullAtJoin.has(key)) {
        replacesState = fullAtJoin.get(key)!;
        before = new Map(before).set(key, replacesState);
      }
      let rejectedReason: string | null = null;
      try {
        await authorizeWithState(room, e.pdu, before, signedByOf(e.pdu, room), lookup);
      } catch (err) {
        rejectedReason = `Not authorised by the room's full state: ${(err as Error).message}`;
      }
      if (rejectedReason !== null) {
        if (key && after.get(key) === e.eventId) {
          taken.set(e.eventId, { key, instead: before.get(key) ?? null });
          version++;
        }
        changed.push({ event: e, storedAfter: after, stateAfter: before, rejectedReason, replacesState });
        continue;
      }
      const fixed = fixGroup(e.stateGroup!, after);
      if (fixed !== after || replacesState !== e.replacesState) changed.push({ event: e, storedAfter: after, ...(fixed !== after ? { stateAfter: fixed } : {}), rejectedReason: null, replacesState });
    }
  }
  const currentState = fix(room.state);
  return { changed, currentChanges: stateChanges(room.state, currentState), currentState };
}

/** Writes a recheck's outcome in `tx`: new state groups, rejections (out of search and relations), current state and memberships. */
export async function writeRecheck(s: Services, tx: SqlExecutor, roomId: string, plan: RecheckPlan): Promise<void> {
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
  const rejected = plan.changed.filter((c) => c.rejectedReason !== null).map((c) => c.event.eventId);
  if (rejected.length > 0) {
    await s.search.remove(tx, roomId, rejected);
    await s.relations.remove(tx, rejected);
  }
  if (plan.currentChanges.size > 0) {
    await s.rooms.store.changeCurrentState(tx, roomId, plan.currentChanges);
    await writeMemberships(s, tx, roomId, plan.currentChanges, new Map());
  }
}
