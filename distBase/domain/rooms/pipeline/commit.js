import { inTimeline } from "../../store/events.js";
import { redactionsToRecord } from "../redactions.js";
function groupOf(basis, made) {
    if (!basis)
        return undefined;
    if ("event" in basis)
        return made.get(basis.event);
    return { id: basis.group, state: basis.state };
}
/** The state group of the state after `p`: its basis when the state is the same map, else a new one. */
async function stateGroupFor(s, tx, roomId, p, made) {
    if (p.outlier)
        return null;
    const state = p.stateAfter;
    const basis = groupOf(p.basis, made);
    const id = basis && basis.state === state ? basis.id : await s.rooms.stateGroups.create(tx, roomId, p.eventId, state, basis);
    made.set(p.eventId, { id, state });
    return id;
}
/** Membership rows follow current state: each member key that changed gets its new event. */
export async function writeMemberships(s, tx, roomId, changes, batch) {
    const ids = [...changes].filter(([k, id]) => id !== null && k.startsWith("m.room.member\u0000")).map(([, id]) => id);
    if (ids.length === 0)
        return;
    const older = ids.some((id) => !batch.has(id)) ? await s.rooms.events.getMany(ids.filter((id) => !batch.has(id))) : new Map();
    for (const id of ids) {
        const e = batch.get(id) ?? older.get(id);
        if (!e)
            continue;
        const c = e.pdu.content;
        await s.rooms.store.upsertMembership(tx, {
            roomId,
            userId: e.pdu.state_key,
            membership: String(c.membership),
            eventId: e.eventId,
            sender: e.pdu.sender,
            displayname: typeof c.displayname === "string" ? c.displayname : null,
            avatarUrl: typeof c.avatar_url === "string" ? c.avatar_url : null,
            streamOrdering: e.streamOrdering,
        });
    }
}
/**
 * Commits a plan (the caller holds the room's lane), in a transaction of its own or in `open`. Returns
 * the stored events, in order.
 */
export async function commit(s, plan, open) {
    // Who may redact (the one rule, auth/redaction.ts) is decided before the writes: a redaction that
    // fails it is stored as a plain event and never applied.
    const redactsOf = await redactionsToRecord(s, plan.room, plan.events);
    if (open)
        return writePlan(s, plan, redactsOf, open.tx, open.positions);
    return s.storage.sql.transaction((tx) => writePlan(s, plan, redactsOf, tx));
}
async function writePlan(s, plan, redactsOf, tx, allocated) {
    const { room, after } = plan;
    const roomId = room.roomId;
    const now = s.clock.now();
    const backfilled = plan.backfilled === true;
    await plan.alsoWrite?.(tx);
    const made = new Map();
    const out = [];
    const redactions = new Map();
    // Backfilled history goes below everything stored, in the plan's (topological) order.
    // Every position of the commit at once (one query on PostgreSQL, whatever the number of events).
    if (allocated && (backfilled || allocated.length < plan.events.length))
        throw new Error("commit: positions allocated for a plan they do not fit");
    const positions = allocated ?? (backfilled ? await s.rooms.events.backfillPositions(tx, plan.events.length) : await s.rooms.events.streamIds.nextMany(tx, plan.events.length));
    for (const [i, p] of plan.events.entries()) {
        const { pdu, eventId } = p;
        const stateGroup = await stateGroupFor(s, tx, roomId, p, made);
        const txnHere = p.txn ? { deviceKey: p.txn.deviceKey, txnId: p.txn.txnId } : undefined;
        const marks = { outlier: p.outlier, rejectedReason: p.rejectedReason, softFailed: p.softFailed };
        const redacts = redactsOf.get(eventId);
        const row = { eventId, roomId, pdu, json: p.json, stateGroup, replacesState: p.replacesState, prevEvents: p.prevIds, ...marks, redacts, txn: txnHere };
        const streamOrdering = p.promote ? await s.rooms.events.promote(tx, row, positions?.[i]) : await s.rooms.events.insert(tx, row, positions?.[i]);
        if (redacts)
            redactions.set(eventId, redacts);
        if (p.txn)
            await s.rooms.events.insertTxn(tx, { ...p.txn, eventId, roomId, now });
        out.push({ eventId, ...(txnHere ? { txn: txnHere } : {}), roomId, streamOrdering, stateGroup, replacesState: p.replacesState, ...marks, pdu, json: p.json });
    }
    const before = new Set(room.extremities);
    const kept = new Set(after.extremities);
    await s.rooms.events.moveExtremities(tx, roomId, room.extremities.filter((id) => !kept.has(id)), after.extremities.filter((id) => !before.has(id)));
    if (after.changes.size > 0) {
        await s.rooms.store.changeCurrentState(tx, roomId, after.changes);
        await writeMemberships(s, tx, roomId, after.changes, new Map(out.map((e) => [e.eventId, e])));
    }
    const batch = { room, events: out.filter(inTimeline), stored: out, redactions, stateChanges: after.changes, backfilled };
    for (const index of s.extensions.indexers)
        await index(tx, s, batch);
    // The room's snapshot moves in the same step as the stream position (at COMMIT, before any other code
    // runs): a reader at that position finds the matching current state in the cache.
    const group = groupOf(after.group, made);
    const snapshot = {
        ...room,
        state: after.state,
        stateGroup: group && group.state === after.state ? group.id : undefined,
        extremities: after.extremities,
        maxDepth: after.maxDepth,
        // Backfilled events are older than the state the room is at: its position stays.
        position: backfilled ? room.position : out[out.length - 1].streamOrdering,
    };
    const position = Math.max(...out.map((e) => e.streamOrdering));
    if (!tx.onSettled)
        throw new Error("events must be committed through sql.transaction (settle signal needed)");
    tx.onSettled((committed) => {
        if (committed)
            s.commits.publish({ notice: { stream: "events", writer: s.instanceName, position, roomId, eventIds: out.map((e) => e.eventId) }, events: out, snapshot });
    });
    return out;
}
