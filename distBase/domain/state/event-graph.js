// The events one state resolution works over, loaded once per call: by id in batches (one `loadEvents`
// call per frontier of the auth graph, never one per event), with each event's auth event ids memoized.
// Spec: Server-Server API "Room State Resolution"; Room Versions v2 "Auth chain"; v12 (create event implied).
import { stateMapKey } from "../auth/index.js";
import { authEventIds } from "../events/types.js";
export class EventGraph {
    version;
    source;
    events = new Map();
    missing = new Set();
    authCache = new Map();
    parentPowerLevelsCache = new Map();
    stateKeyCache = new Map();
    constructor(version, source) {
        this.version = version;
        this.source = source;
    }
    get(id) {
        return this.events.get(id);
    }
    isRejected(id) {
        return this.source.isRejected?.(id) ?? false;
    }
    /** A loaded event that is not rejected (what may authorise another event or enter a state). */
    usable(id) {
        const e = this.events.get(id);
        return e && !this.isRejected(id) ? e : undefined;
    }
    /** The state map key ("type\u0000state_key") of a loaded state event, memoized; undefined otherwise. */
    stateKeyOf(id) {
        let key = this.stateKeyCache.get(id);
        if (key === undefined) {
            const e = this.events.get(id);
            if (!e)
                return undefined;
            key = typeof e.state_key === "string" ? stateMapKey(e.type, e.state_key) : null;
            this.stateKeyCache.set(id, key);
        }
        return key ?? undefined;
    }
    /**
     * The ids of an event's auth events. In v12 the create event is never listed but always implied (the
     * room id names it), as the spec's auth rules and other servers treat it; it is added here.
     */
    authIds(id) {
        let ids = this.authCache.get(id);
        if (ids)
            return ids;
        const e = this.events.get(id);
        if (!e)
            return [];
        ids = authEventIds(e);
        if (this.version.roomIdIsCreateEventHash && !(e.type === "m.room.create" && e.state_key === "")) {
            const roomId = e.room_id;
            if (typeof roomId === "string" && roomId.startsWith("!")) {
                const createId = "$" + roomId.slice(1);
                if (!ids.includes(createId))
                    ids = [createId, ...ids];
            }
        }
        this.authCache.set(id, ids);
        return ids;
    }
    /** The `m.room.power_levels` event among an event's auth events (the first one listed), if loaded. */
    parentPowerLevels(id) {
        const cached = this.parentPowerLevelsCache.get(id);
        if (cached !== undefined)
            return cached ?? undefined;
        let found = null;
        let settled = this.events.has(id);
        for (const a of this.authIds(id)) {
            const e = this.events.get(a);
            if (e && e.type === "m.room.power_levels" && e.state_key === "") {
                found = a;
                break;
            }
            if (!e && !this.missing.has(a))
                settled = false; // not loaded yet: do not remember the answer
        }
        if (settled)
            this.parentPowerLevelsCache.set(id, found);
        return found ?? undefined;
    }
    /** Loads the ids not seen yet in one batch. Ids the loader does not know are remembered as missing. */
    async load(ids) {
        const wanted = this.unknown(ids);
        if (wanted.length === 0)
            return [];
        return this.record(wanted, await this.source.loadEvents(wanted));
    }
    /**
     * Loads `seeds` and their whole auth chains: one bulk call when the source offers one, then one
     * `loadEvents` call per frontier for whatever is still unknown.
     */
    async loadAuthClosure(seeds) {
        let frontier = this.unknown(seeds);
        if (this.source.loadAuthChains && frontier.length > 0) {
            // What the bulk answer lacks may still be known to loadEvents (e.g. events being planned).
            const added = this.record([], await this.source.loadAuthChains(frontier));
            frontier = this.unknown([...frontier, ...this.unknownAuthOf(added)]);
        }
        while (frontier.length > 0) {
            const added = this.record(frontier, await this.source.loadEvents(frontier));
            frontier = this.unknownAuthOf(added);
        }
    }
    unknown(ids) {
        const out = [];
        const seen = new Set();
        for (const id of ids) {
            if (this.events.has(id) || this.missing.has(id) || seen.has(id))
                continue;
            seen.add(id);
            out.push(id);
        }
        return out;
    }
    unknownAuthOf(ids) {
        const out = [];
        const seen = new Set();
        for (const id of ids) {
            for (const a of this.authIds(id)) {
                if (this.events.has(a) || this.missing.has(a) || seen.has(a))
                    continue;
                seen.add(a);
                out.push(a);
            }
        }
        return out;
    }
    /** Stores a loader's answer; returns the ids newly added. */
    record(requested, found) {
        const added = [];
        for (const [id, pdu] of found) {
            if (this.events.has(id) || !pdu)
                continue;
            this.events.set(id, pdu);
            this.missing.delete(id);
            added.push(id);
        }
        for (const id of requested)
            if (!this.events.has(id))
                this.missing.add(id);
        return added;
    }
}
