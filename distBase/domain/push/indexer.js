import { relationOf } from "../relations/parse.js";
import { PushEvent } from "./evaluator.js";
import { roomStateBefore } from "./room-state.js";
import { addOutcome } from "./counts.js";
/** The thread each event belongs to: the root of its m.thread relation, else its parent's thread, else "main". */
async function threadsOf(s, tx, events) {
    const out = new Map();
    const parents = new Map();
    for (const e of events) {
        const rel = relationOf(e.pdu);
        if (rel?.relType === "m.thread")
            out.set(e.eventId, rel.eventId);
        else if (rel)
            parents.set(e.eventId, rel.eventId);
        else
            out.set(e.eventId, "main");
    }
    if (parents.size === 0)
        return out;
    const outside = [...parents.values()].filter((id) => !out.has(id) && !parents.has(id));
    const rows = outside.length > 0 ? await s.relations.ofEvents(tx, outside) : new Map();
    for (const e of events) {
        const parent = parents.get(e.eventId);
        if (parent === undefined)
            continue;
        const inBatch = out.get(parent);
        const row = rows.get(parent);
        out.set(e.eventId, inBatch ?? (row ? (row.relType === "m.thread" ? row.relatesToId : (row.threadId ?? "main")) : "main"));
    }
    return out;
}
const NONE = { notify: false, highlight: false, actions: "[]" };
const outcomes = new WeakMap();
/** The outcome of a deciding rule (one object per compiled rule: members sharing it share the object). */
function outcomeOfRule(r) {
    if (!r)
        return NONE;
    let o = outcomes.get(r);
    if (!o)
        outcomes.set(r, (o = { notify: r.notify, highlight: r.highlight, actions: r.key }));
    return o;
}
/** The push indexer of the event pipeline (declared in src/main.ts): the batch's timeline events. */
// Backfilled history is never notified (as in Synapse).
export const indexPushActions = async (tx, s, batch) => (batch.backfilled ? undefined : evaluateEvents(tx, s, batch.room, [...batch.events]));
async function evaluateEvents(tx, s, room, events) {
    const suffix = `:${s.config.server_name}`;
    const isLocal = (u) => u.endsWith(suffix);
    const before = await roomStateBefore(s, tx, room, events);
    let state = before;
    const touchesMembers = events.some((e) => e.pdu.state_key !== undefined && (e.pdu.type === "m.room.member" || e.pdu.type === "m.room.power_levels"));
    if (touchesMembers)
        state = before.clone();
    const candidates = new Set(before.local.keys());
    for (const e of events)
        if (e.pdu.type === "m.room.member" && e.pdu.state_key && isLocal(e.pdu.state_key))
            candidates.add(e.pdu.state_key);
    const rules = await s.push.rules.ofMany([...candidates]);
    const threads = await threadsOf(s, tx, events);
    const rows = [];
    const exceptionRows = [];
    const evaluated = [];
    const spans = [];
    const now = s.clock.now();
    for (const e of events) {
        if (e.outlier || e.rejectedReason !== null)
            continue;
        const pdu = e.pdu;
        const power = state.power();
        const pe = new PushEvent(pdu, state.joinedCount, power.user(pdu.sender), power.notification);
        // Group the members by outcome: the largest group is the event's common outcome.
        const groups = new Map();
        for (const [userId, displayName] of state.local) {
            if (userId === pdu.sender)
                continue;
            const outcome = outcomeOfRule(rules.get(userId).compiled.evaluate(pe, { userId, displayName }));
            const g = groups.get(outcome.actions);
            if (g)
                g.users.push(userId);
            else
                groups.set(outcome.actions, { outcome, users: [userId] });
        }
        let base = NONE;
        let baseSize = -1;
        for (const g of groups.values())
            if (g.users.length > baseSize)
                [base, baseSize] = [g.outcome, g.users.length];
        const exceptions = new Map();
        for (const g of groups.values())
            if (g.outcome !== base)
                for (const u of g.users)
                    exceptions.set(u, g.outcome);
        // A local user invited here is not a member yet: evaluated on their own (.m.rule.invite_for_me).
        const target = pdu.type === "m.room.member" ? pdu.state_key : undefined;
        if (target && isLocal(target) && target !== pdu.sender && !state.local.has(target) && pdu.content.membership === "invite") {
            const outcome = outcomeOfRule(rules.get(target)?.compiled.evaluate(pe, { userId: target, displayName: undefined }));
            if (outcome.notify || outcome.highlight)
                exceptions.set(target, outcome);
        }
        const anyone = base.notify || base.highlight || [...exceptions.values()].some((o) => o.notify || o.highlight);
        if (anyone) {
            const threadId = threads.get(e.eventId) ?? "main";
            rows.push({ streamOrdering: e.streamOrdering, eventId: e.eventId, roomId: room.roomId, threadId, sender: pdu.sender, notif: base.notify, highlight: base.highlight, actions: base.actions, ts: now });
            for (const [userId, o] of exceptions)
                exceptionRows.push({ userId, streamOrdering: e.streamOrdering, roomId: room.roomId, notif: o.notify, highlight: o.highlight, actions: o.actions });
            evaluated.push({ sender: pdu.sender, threadId, base, exceptions });
        }
        if (touchesMembers) {
            const change = state.apply(pdu, isLocal);
            if (change.joined)
                spans.push(() => s.push.notifications.openSpan(tx, change.joined, room.roomId, e.streamOrdering));
            if (change.left)
                spans.push(() => s.push.notifications.closeSpan(tx, change.left, room.roomId, e.streamOrdering));
        }
    }
    await s.push.notifications.insert(tx, rows, exceptionRows);
    for (const write of spans)
        await write();
    s.push.counts.begin(room.roomId);
    const settle = (committed) => {
        if (!committed) {
            s.push.rooms.delete(room.roomId);
            s.push.counts.end(room.roomId, false, () => { });
            return;
        }
        if (touchesMembers || !s.push.rooms.get(room.roomId))
            s.push.rooms.set(room.roomId, state);
        if (touchesMembers) {
            // Memberships moved inside the batch: recount the room from storage rather than track who was in.
            s.push.counts.end(room.roomId, true, () => { });
            s.push.counts.dropRoom(room.roomId);
        }
        else
            s.push.counts.end(room.roomId, true, (entries) => {
                for (const ev of evaluated)
                    for (const [userId, counts] of entries) {
                        if (userId === ev.sender)
                            continue;
                        const o = ev.exceptions.get(userId) ?? (state.local.has(userId) ? ev.base : NONE);
                        addOutcome(counts, ev.threadId, o.notify, o.highlight);
                    }
            });
        if (evaluated.length > 0)
            s.push.pushers.wake((userId) => evaluated.some((ev) => ev.sender !== userId && ((ev.exceptions.get(userId) ?? (state.local.has(userId) || before.local.has(userId) ? ev.base : NONE)).notify)));
    };
    if (tx.onSettled)
        tx.onSettled(settle);
}
