import { authEventIds, isStateEvent, prevEventIds } from "../../events/types.js";
import { eventIdOf, roomIdOf } from "../../events/hashes.js";
import { validatePduFormat } from "../../events/validate.js";
import { MatrixError } from "../../errors.js";
import { stateKeyOf } from "../../store/state-groups.js";
import { resolveState, trivialResolution } from "../../state/resolve.js";
import { authorizeWithAuthEvents, authorizeWithState, checkHashOrRedact, checkSignatures } from "./checks.js";
import { redactionTarget, stateChanges } from "./plan.js";
const reasonOf = (err) => (err instanceof Error ? err.message : String(err));
/** Orders parsed events so that each comes after the batch's events it references (stable otherwise). */
function topological(items) {
    const byId = new Map(items.map((p) => [p.eventId, p]));
    const out = [];
    const state = new Map();
    const visit = (p) => {
        if (state.get(p.eventId))
            return; // done, or a cycle (the auth checks refuse what it leads to)
        state.set(p.eventId, "visiting");
        for (const id of [...authEventIds(p.pdu), ...prevEventIds(p.pdu)]) {
            const dep = byId.get(id);
            if (dep)
                visit(dep);
        }
        state.set(p.eventId, "done");
        out.push(p);
    };
    for (const p of items)
        visit(p);
    return out;
}
export class RemotePlanner {
    s;
    room;
    opts;
    events = [];
    pending = new Map();
    rejected = new Set();
    /** Events some stored event already names as a prev_event: never forward extremities. */
    followed = new Set();
    /** Events of `fillState` stored before this batch. */
    stored = new Set();
    cur;
    constructor(s, room, opts = {}) {
        this.s = s;
        this.room = room;
        this.opts = opts;
        this.cur = {
            state: room.state,
            group: room.stateGroup !== undefined ? { group: room.stateGroup, state: room.state } : undefined,
            extremities: room.extremities,
            maxDepth: room.maxDepth,
        };
    }
    /** Current state as the inputs placed so far leave it. */
    get currentState() {
        return this.cur.state;
    }
    /** Checks and places every input; returns each one's outcome, in input order. */
    async addAll(inputs) {
        const outcomes = new Array(inputs.length);
        const parsed = [];
        const seen = new Set();
        for (const [index, input] of inputs.entries()) {
            const p = this.parse(input);
            if ("status" in p)
                outcomes[index] = p;
            else if (seen.has(p.eventId))
                outcomes[index] = { status: "duplicate", eventId: p.eventId };
            else {
                seen.add(p.eventId);
                parsed.push({ ...p, index, input });
            }
        }
        // Everything the batch references, in one read (the later lookups hit the event cache).
        const known = await this.s.rooms.events.getMany(parsed.flatMap((p) => [p.eventId, ...authEventIds(p.pdu), ...prevEventIds(p.pdu)]));
        for (const e of known.values())
            if (e.rejectedReason !== null)
                this.rejected.add(e.eventId);
        if (this.opts.fillState)
            for (const e of await this.s.rooms.events.getMany([...this.opts.fillState.values()]).then((m) => m.values()))
                this.stored.add(e.eventId);
        const fresh = [];
        for (const p of parsed) {
            const stored = known.get(p.eventId);
            // An outlier received again, not as an outlier: its state may be known now.
            if (stored && stored.outlier && stored.rejectedReason === null && p.input.outlier !== true)
                p.promote = true;
            if (!stored || p.promote)
                fresh.push(p);
            else
                outcomes[p.index] = { status: "duplicate", eventId: p.eventId };
        }
        const placed = fresh.filter((p) => p.input.outlier !== true);
        if (placed.length > 0)
            this.followed = await this.s.rooms.events.withChildren(placed.map((p) => p.eventId));
        for (const p of topological(fresh))
            outcomes[p.index] = await this.add(p);
        return outcomes;
    }
    /** Step 1: the room version's event format, the room, the event id. */
    parse(input) {
        const v = this.room.version;
        let pdu;
        let eventId;
        try {
            pdu = validatePduFormat(input.pdu, v);
            eventId = eventIdOf(pdu, v);
        }
        catch (err) {
            return { status: "dropped", reason: reasonOf(err) };
        }
        if (roomIdOf(pdu, v) !== this.room.roomId)
            return { status: "dropped", eventId, reason: "The event belongs to another room" };
        return { pdu, eventId };
    }
    async add(p) {
        const { room, s } = this;
        const v = room.version;
        const { eventId } = p;
        // Step 2: signatures (dropped), step 3: content hash (continues redacted).
        let signers;
        try {
            signers = await checkSignatures(s, p.pdu, v);
        }
        catch (err) {
            return { status: "dropped", eventId, reason: reasonOf(err) };
        }
        const { unsigned: _unsigned, ...received } = checkHashOrRedact(p.pdu, v).pdu;
        const pdu = received;
        const signedBy = (server) => signers.has(server);
        const prevIds = prevEventIds(pdu);
        // Step 4: its own auth events.
        let rejectedReason = await this.checkAuthEvents(pdu, signedBy);
        // The state before it: from its prev_events (an outlier when one of them has no known state).
        let outlier = p.input.outlier === true;
        let before;
        if (!outlier) {
            try {
                before = p.input.stateBefore ? { state: await this.usableState(p.input.stateBefore), basis: undefined } : await this.stateFromPrevs(prevIds, p.input.prevStates);
            }
            catch (err) {
                return { status: "dropped", eventId, reason: `The state before the event cannot be resolved: ${reasonOf(err)}` };
            }
            outlier = before === undefined;
        }
        // Still no state for an event stored as an outlier: it stays as it is.
        if (outlier && p.promote)
            return { status: "duplicate", eventId };
        // Step 5: the state before it (rejected); step 6: current state (soft-failed).
        let softFailed = false;
        if (before && rejectedReason === null) {
            try {
                await authorizeWithState(room, pdu, await this.forAuth(before.state, pdu), signedBy, (ids) => this.pdus(ids));
            }
            catch (err) {
                rejectedReason = reasonOf(err);
            }
            const atTips = prevIds.length === this.cur.extremities.length && prevIds.every((id) => this.cur.extremities.includes(id));
            // Nothing to soft-fail against in a room with no tips yet (one being joined) or in backfilled history.
            if (rejectedReason === null && !atTips && !this.opts.backfill && this.cur.extremities.length > 0 && p.input.noSoftFail !== true) {
                try {
                    await authorizeWithState(room, pdu, await this.forAuth(this.cur.state, pdu), signedBy, (ids) => this.pdus(ids));
                }
                catch {
                    softFailed = true;
                }
            }
        }
        const key = isStateEvent(pdu) ? stateKeyOf(pdu.type, pdu.state_key) : undefined;
        const stateBefore = before?.state;
        const stateAfter = stateBefore && key && rejectedReason === null ? new Map(stateBefore).set(key, eventId) : stateBefore;
        const marks = { outlier, rejectedReason, softFailed };
        const planned = {
            eventId,
            pdu,
            json: JSON.stringify(pdu),
            stateBefore,
            stateAfter,
            basis: before?.basis,
            replacesState: stateBefore && key && rejectedReason === null ? (stateBefore.get(key) ?? null) : null,
            prevIds,
            ...marks,
            redacts: redactionTarget(pdu, room, marks),
            ...(p.promote ? { promote: true } : {}),
        };
        if (outlier || rejectedReason !== null || softFailed) {
            this.keep(planned);
            if (rejectedReason !== null)
                return { status: "rejected", eventId, reason: rejectedReason };
            return { status: outlier ? "outlier" : "soft_failed", eventId };
        }
        // Accepted: a forward extremity in place of its prev_events (unless a stored event already follows it:
        // history arriving late); current state resolved at the tips.
        // Backfilled history is all before events the room has: it never moves the tips.
        const extremities = this.opts.backfill ? this.cur.extremities : this.cur.extremities.filter((id) => !prevIds.includes(id));
        if (!this.opts.backfill && !this.followed.has(eventId))
            extremities.push(eventId);
        this.keep(planned);
        if (extremities.length === this.cur.extremities.length && extremities.every((id, i) => id === this.cur.extremities[i])) {
            this.cur = { ...this.cur, maxDepth: Math.max(this.cur.maxDepth, pdu.depth) };
            return { status: "accepted", eventId };
        }
        let current;
        try {
            if (extremities.length === 0)
                throw new Error("the room would have no forward extremity");
            current = extremities.length === 1 && extremities[0] === eventId ? { state: stateAfter, group: { event: eventId } } : await this.stateAtTips(extremities);
        }
        catch (err) {
            this.events.pop();
            this.pending.delete(eventId);
            return { status: "dropped", eventId, reason: `Current state cannot be resolved: ${reasonOf(err)}` };
        }
        this.cur = { ...current, extremities, maxDepth: Math.max(this.cur.maxDepth, pdu.depth) };
        return { status: "accepted", eventId };
    }
    /** The state an event is authorized against: in a partial-state room, completed from its auth events. */
    async forAuth(state, pdu) {
        if (this.opts.partialState !== true)
            return state;
        const ids = authEventIds(pdu);
        const found = await this.pdus(ids);
        let out;
        for (const id of ids) {
            const e = found.get(id);
            if (!e || typeof e.state_key !== "string" || this.rejected.has(id))
                continue;
            const key = stateKeyOf(e.type, e.state_key);
            if (state.has(key))
                continue;
            out ??= new Map(state);
            out.set(key, id);
        }
        return out ?? state;
    }
    keep(planned) {
        this.events.push(planned);
        this.pending.set(planned.eventId, planned);
        if (planned.rejectedReason !== null)
            this.rejected.add(planned.eventId);
    }
    /** Step 4: the auth events must all be known and allow the event. Returns why it is rejected, or null. */
    async checkAuthEvents(pdu, signedBy) {
        const ids = authEventIds(pdu);
        const found = await this.pdus(ids);
        const missing = ids.find((id) => !found.has(id));
        if (missing)
            return `Unknown auth event ${missing}`;
        const byPdu = new Map(ids.map((id) => [found.get(id), id]));
        try {
            authorizeWithAuthEvents(this.room, pdu, ids.map((id) => found.get(id)), signedBy, (e) => this.rejected.has(byPdu.get(e) ?? ""));
            return null;
        }
        catch (err) {
            return reasonOf(err);
        }
    }
    /**
     * A state given from elsewhere (e.g. a send_join answer), without the entries this server does not
     * have or rejected: a rejected event is never part of any state.
     */
    async usableState(given) {
        const found = await this.pdus([...given.values()]);
        const out = new Map();
        for (const [k, id] of given)
            if (found.has(id) && !this.rejected.has(id))
                out.set(k, id);
        return out.size === given.size ? given : out;
    }
    /** Events by id from the batch or storage. */
    async pdus(ids) {
        const out = new Map();
        const rest = [];
        for (const id of ids) {
            const p = this.pending.get(id);
            if (p)
                out.set(id, p.pdu);
            else
                rest.push(id);
        }
        if (rest.length > 0)
            for (const [id, e] of await this.s.rooms.events.getMany(rest)) {
                out.set(id, e.pdu);
                if (e.rejectedReason !== null)
                    this.rejected.add(id);
            }
        return out;
    }
    /**
     * The state after each event (batch or storage, else `given`: fetched from another server); undefined
     * when one has none (unknown, or an outlier).
     */
    async statesAfter(ids, given) {
        const stored = await this.s.rooms.events.getMany(ids.filter((id) => !this.pending.has(id)));
        const groups = [];
        const from = new Map();
        for (const id of ids) {
            const p = this.pending.get(id);
            const g = p ? undefined : stored.get(id)?.stateGroup;
            if (p && !p.outlier)
                from.set(id, "batch");
            else if (g !== undefined && g !== null) {
                from.set(id, "group");
                groups.push(g);
            }
            else if (given?.has(id))
                from.set(id, "given");
            else
                return undefined;
        }
        const states = await this.s.rooms.stateGroups.getMany(groups);
        return ids.map((id) => {
            if (from.get(id) === "batch")
                return { state: this.pending.get(id).stateAfter, basis: { event: id } };
            if (from.get(id) === "given")
                return { state: given.get(id), basis: undefined };
            const g = stored.get(id).stateGroup;
            return { state: states.get(g), basis: { group: g, state: states.get(g) } };
        });
    }
    resolve(sets) {
        return resolveState({
            version: this.room.version,
            stateSets: sets,
            loadEvents: (ids) => this.pdus(ids),
            isRejected: (id) => this.rejected.has(id),
        });
    }
    /** The state before an event from its prev_events' states; undefined when one of them is unknown. */
    async stateFromPrevs(prevIds, given) {
        if (prevIds.length === 0)
            return { state: new Map(), basis: undefined };
        const sets = await this.statesAfter(prevIds, given);
        if (!sets)
            return undefined;
        const same = trivialResolution(sets.map((x) => x.state));
        if (same)
            return sets.find((x) => x.state === same);
        return { state: await this.resolve(sets.map((x) => x.state)), basis: sets[0].basis };
    }
    /** Current state at several forward extremities: their states, resolved. */
    async stateAtTips(extremities) {
        const sets = await this.statesAfter(extremities);
        if (!sets)
            throw new MatrixError("M_UNKNOWN", "A forward extremity has no state", 500);
        const same = trivialResolution(sets.map((x) => x.state));
        if (same)
            return { state: same, group: sets.find((x) => x.state === same).basis };
        return { state: await this.resolve(sets.map((x) => x.state)), group: undefined };
    }
    /** The plan of every stored outcome (undefined when nothing is to be stored). */
    plan(alsoWrite) {
        if (this.events.length === 0)
            return undefined;
        let { state, group } = this.cur;
        const { extremities, maxDepth } = this.cur;
        const fill = this.opts.fillState;
        if (fill && [...fill.keys()].some((k) => !state.has(k))) {
            const full = new Map(state);
            for (const [k, id] of fill)
                if (!full.has(k) && !this.rejected.has(id) && (this.pending.has(id) || this.stored.has(id)))
                    full.set(k, id);
            state = full;
            group = undefined;
        }
        const after = { state, group, changes: stateChanges(this.room.state, state), extremities, maxDepth };
        return { room: this.room, events: this.events, after, alsoWrite, ...(this.opts.backfill ? { backfilled: true } : {}) };
    }
}
