import { stateKeyOf } from "../../store/state-groups.js";
import { stateBeforeEvent } from "../../rooms/state-before.js";
import { authorizeWithState, requiredSigners } from "../../rooms/pipeline/checks.js";
import { stateChanges } from "../../rooms/pipeline/plan.js";
import { writeMemberships } from "../../rooms/pipeline/commit.js";
const BATCH = 500;
/** The events of the room placed from our join on (not outliers, not rejected), in stream order. */
async function placedSinceJoin(s, roomId, joinEventId) {
    const join = await s.rooms.events.get(joinEventId);
    if (!join)
        return [];
    const rows = await s.storage.sql.all(`SELECT event_id FROM events WHERE room_id = ? AND stream_ordering >= ? AND outlier = FALSE AND rejected_reason IS NULL ORDER BY stream_ordering`, [roomId, join.streamOrdering]);
    return rows.map((r) => r.event_id);
}
/** The servers whose signatures were verified when the event was received (those the room version requires). */
function signedByOf(pdu, room) {
    let required;
    try {
        required = requiredSigners(pdu, room.version);
    }
    catch {
        required = new Set();
    }
    return (server) => required.has(server) && pdu.signatures?.[server] !== undefined;
}
/**
 * Checks every event placed since `joinEventId` against the full state (`fullAtJoin`: the full state at
 * the join, already merged into the room's state groups). Runs in the room's lane; reads only.
 */
export async function recheckSinceJoin(s, room, joinEventId, fullAtJoin) {
    const ids = await placedSinceJoin(s, room.roomId, joinEventId);
    /** Rejected state events still in some state → their key and what the key holds instead (null: nothing). */
    const taken = new Map();
    const fix = (state) => {
        let out;
        for (const [id, { key, instead }] of taken) {
            if (state.get(key) !== id)
                continue;
            out ??= new Map(state);
            if (instead === null)
                out.delete(key);
            else
                out.set(key, instead);
        }
        return out ?? state;
    };
    // A group's fixed state, shared by the events of that group while no new rejection changes it.
    let version = 0;
    const fixedGroups = new Map();
    const fixGroup = (group, state) => {
        const hit = fixedGroups.get(group);
        if (hit?.version === version)
            return hit.state;
        const fixed = fix(state);
        fixedGroups.set(group, { version, state: fixed });
        return fixed;
    };
    const lookup = async (want) => new Map([...(await s.rooms.events.getMany(want))].map(([id, e]) => [id, e.pdu]));
    const changed = [];
    for (let i = 0; i < ids.length; i += BATCH) {
        const events = await s.rooms.events.getMany(ids.slice(i, i + BATCH));
        const placed = ids.slice(i, i + BATCH).map((id) => events.get(id)).filter((e) => e !== undefined && e.stateGroup !== null);
        const groups = await s.rooms.stateGroups.getMany(placed.map((e) => e.stateGroup));
        for (const e of placed) {
            const after = groups.get(e.stateGroup);
            const key = e.pdu.state_key !== undefined ? stateKeyOf(e.pdu.type, e.pdu.state_key) : undefined;
            let before = fix(stateBeforeEvent(e, after));
            // A state event whose key the partial state lacked: the full state at the join held it before.
            let replacesState = e.replacesState;
            if (key && !before.has(key) && after.get(key) === e.eventId && fullAtJoin.has(key)) {
                replacesState = fullAtJoin.get(key);
                before = new Map(before).set(key, replacesState);
            }
            let rejectedReason = null;
            try {
                await authorizeWithState(room, e.pdu, before, signedByOf(e.pdu, room), lookup);
            }
            catch (err) {
                rejectedReason = `Not authorised by the room's full state: ${err.message}`;
            }
            if (rejectedReason !== null) {
                if (key && after.get(key) === e.eventId) {
                    taken.set(e.eventId, { key, instead: before.get(key) ?? null });
                    version++;
                }
                changed.push({ event: e, storedAfter: after, stateAfter: before, rejectedReason, replacesState });
                continue;
            }
            const fixed = fixGroup(e.stateGroup, after);
            if (fixed !== after || replacesState !== e.replacesState)
                changed.push({ event: e, storedAfter: after, ...(fixed !== after ? { stateAfter: fixed } : {}), rejectedReason: null, replacesState });
        }
    }
    const currentState = fix(room.state);
    return { changed, currentChanges: stateChanges(room.state, currentState), currentState };
}
/** Writes a recheck's outcome in `tx`: new state groups, rejections (out of search and relations), current state and memberships. */
export async function writeRecheck(s, tx, roomId, plan) {
    // Events whose new state is the same map share its new group.
    const regrouped = new Map();
    for (const c of plan.changed) {
        const e = c.event;
        let stateGroup = e.stateGroup;
        if (c.stateAfter && c.stateAfter !== c.storedAfter) {
            const old = e.stateGroup;
            stateGroup = regrouped.get(c.stateAfter) ?? (await s.rooms.stateGroups.create(tx, roomId, e.eventId, c.stateAfter, { id: old, state: c.storedAfter }));
            regrouped.set(c.stateAfter, stateGroup);
        }
        await s.rooms.events.restate(tx, { ...e, stateGroup, rejectedReason: c.rejectedReason, replacesState: c.replacesState });
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
