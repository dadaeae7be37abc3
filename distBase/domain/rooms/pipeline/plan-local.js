import { isStateEvent, prevEventIds } from "../../events/types.js";
import { stateKeyOf } from "../../store/state-groups.js";
import { buildEvent } from "../build-event.js";
import { authorizeEvent } from "./checks.js";
import { redactionTarget } from "./plan.js";
const ACCEPTED = { outlier: false, rejectedReason: null, softFailed: false };
/** A plan being built: the room as it evolves, and the events built so far (not yet stored). */
export class LocalPlanner {
    s;
    room;
    events = [];
    pending = new Map();
    changes = new Map();
    /** The group holding `cur.state`, if one does. */
    group;
    cur;
    lookup = async (id) => this.pending.get(id) ?? (await this.s.rooms.events.get(id))?.pdu;
    constructor(s, room) {
        this.s = s;
        this.room = room;
        this.cur = room;
        this.group = room.stateGroup !== undefined ? { group: room.stateGroup, state: room.state } : undefined;
    }
    /** Builds (unless built) and authorizes one event on top of the plan; throws without changing it. */
    async add(draft, txn) {
        const cur = this.cur;
        const built = "pdu" in draft
            ? draft
            : await buildEvent(this.s, { roomId: cur.roomId, version: cur.version, state: cur.state, extremities: cur.extremities, maxDepth: cur.maxDepth, lookup: this.lookup }, draft);
        await authorizeEvent(this.s, cur, built.pdu, this.lookup);
        const key = isStateEvent(built.pdu) ? stateKeyOf(built.pdu.type, built.pdu.state_key) : undefined;
        const stateAfter = key ? new Map(cur.state).set(key, built.eventId) : cur.state;
        const prevIds = prevEventIds(built.pdu);
        this.events.push({
            ...built,
            stateBefore: cur.state,
            stateAfter,
            basis: this.group,
            replacesState: key ? (cur.state.get(key) ?? null) : null,
            prevIds,
            ...ACCEPTED,
            redacts: redactionTarget(built.pdu, cur, ACCEPTED),
            txn,
        });
        this.pending.set(built.eventId, built.pdu);
        if (key) {
            this.changes.set(key, built.eventId);
            this.group = { event: built.eventId };
        }
        this.cur = {
            ...cur,
            state: stateAfter,
            extremities: [...cur.extremities.filter((id) => !prevIds.includes(id)), built.eventId],
            maxDepth: Math.max(cur.maxDepth, built.pdu.depth),
        };
    }
    /**
     * The plan of every event added so far. A local event is built on the extremities (up to 20 of them),
     * so the last one is usually the only extremity left, and its group holds current state.
     */
    plan(alsoWrite) {
        const last = this.events[this.events.length - 1];
        const { state, extremities, maxDepth } = this.cur;
        const group = extremities.length === 1 ? { event: last.eventId } : undefined;
        return { room: this.room, events: this.events, after: { state, group, changes: this.changes, extremities, maxDepth }, alsoWrite };
    }
}
