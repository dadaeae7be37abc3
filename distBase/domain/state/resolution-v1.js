// State resolution v1 (room version 1): keep the unconflicted state, then settle conflicts in passes —
// power levels, join rules, memberships (each walking the candidates from the lowest depth up while they
// pass auth), then every other key (the deepest candidate that passes auth) — authorising against the
// unconflicted state plus what earlier passes resolved.
// Spec: Room Versions v1 "State resolution"; where the text is loose, Synapse's reading of it.
import { createHash } from "node:crypto";
import { authTypesForEvent, checkAuth, stateMapKey } from "../auth/index.js";
import { splitConflicts } from "./conflicts.js";
export async function resolveV1(graph, stateSets, options) {
    const { unconflicted, conflicted } = splitConflicts(stateSets, false);
    const wanted = new Set();
    for (const ids of conflicted.values())
        for (const id of ids)
            wanted.add(id);
    await graph.load(wanted);
    // Candidates that cannot be loaded (or were rejected) drop out; a key left with one is not in conflict.
    const candidates = new Map();
    for (const [key, ids] of conflicted) {
        const list = [];
        for (const id of ids) {
            const event = graph.usable(id);
            if (!event)
                continue;
            const depth = typeof event.depth === "number" ? event.depth : 0;
            list.push({ id, event, depth, sha1: createHash("sha1").update(id, "utf8").digest("hex") });
        }
        if (list.length === 1)
            unconflicted.set(key, list[0].id);
        else if (list.length > 1)
            candidates.set(key, list);
    }
    // The events conflicted events are authorised against: the unconflicted state of their auth types.
    const authIds = new Map();
    for (const list of candidates.values()) {
        for (const { event } of list) {
            for (const [type, stateKey] of authTypesForEvent(graph.version, event.type, event.state_key, event.sender, event.content)) {
                const key = stateMapKey(type, stateKey);
                const id = unconflicted.get(key);
                if (id !== undefined)
                    authIds.set(key, id);
            }
        }
    }
    await graph.load(authIds.values());
    const auth = new Map();
    for (const [key, id] of authIds) {
        const event = graph.usable(id);
        if (event)
            auth.set(key, { id, event });
    }
    const resolved = new Map();
    const pass = (select, pick) => {
        const picked = [];
        for (const [key, list] of candidates)
            if (!resolved.has(key) && select(key))
                picked.push([key, pick(list)]);
        for (const [key, c] of picked) {
            resolved.set(key, c);
            auth.set(key, { id: c.id, event: c.event });
        }
    };
    const ofType = (type) => (key) => key.startsWith(type + "\u0000");
    const pickAuth = (list) => resolveAuthEvents(graph, list, auth, options);
    pass((key) => key === stateMapKey("m.room.power_levels", ""), pickAuth);
    pass(ofType("m.room.join_rules"), pickAuth);
    pass(ofType("m.room.member"), pickAuth);
    pass(() => true, (list) => resolveNormalEvents(graph, list, auth, options));
    const out = new Map(unconflicted);
    for (const [key, c] of resolved)
        out.set(key, c.id);
    return out;
}
/** Deepest first, then by sha1(event_id) ascending. */
function ordered(list) {
    return [...list].sort((a, b) => b.depth - a.depth || (a.sha1 < b.sha1 ? -1 : a.sha1 > b.sha1 ? 1 : 0));
}
function allowed(graph, c, auth, options) {
    const state = new Map();
    for (const [key, a] of auth)
        state.set(key, a.event);
    try {
        checkAuth(c.event, state, graph.version, { ...options, createEventId: auth.get(stateMapKey("m.room.create", ""))?.id });
        return true;
    }
    catch {
        return false;
    }
}
/**
 * Power levels, join rules, memberships: from the shallowest candidate up, each one replaces the previous
 * while the auth rules allow it against the state holding the previous one; stop at the first refused.
 */
function resolveAuthEvents(graph, list, auth, options) {
    const ascending = ordered(list).reverse();
    const keys = new Set();
    for (const { event } of list) {
        for (const [type, stateKey] of authTypesForEvent(graph.version, event.type, event.state_key, event.sender, event.content)) {
            keys.add(stateMapKey(type, stateKey));
        }
    }
    const local = new Map();
    for (const key of keys) {
        const a = auth.get(key);
        if (a)
            local.set(key, a);
    }
    let prev = ascending[0];
    for (const c of ascending.slice(1)) {
        local.set(stateMapKey(prev.event.type, prev.event.state_key), { id: prev.id, event: prev.event });
        if (!allowed(graph, c, local, options))
            return prev;
        prev = c;
    }
    return prev;
}
/** Any other key: the first candidate (deepest, then lowest sha1) that passes auth, else the shallowest. */
function resolveNormalEvents(graph, list, auth, options) {
    const sorted = ordered(list);
    for (const c of sorted)
        if (allowed(graph, c, auth, options))
            return c;
    return sorted[sorted.length - 1];
}
