// Iterative auth checks of state resolution v2: apply sorted state events one by one to a state, each only
// if the authorization rules allow it against that state, falling back to the event's own (non-rejected)
// auth events for the keys the state lacks. Rejected events are never applied.
// Spec: Room Versions v2 "Iterative auth checks", "Rejected events"; Server-Server API "Authorisation rules".
import { authTypesForEvent, checkAuth, stateMapKey } from "../auth/index.js";
/** Runs the iterative auth checks of `ids` (in order) over `state`, which is updated in place. */
export function iterativeAuthChecks(graph, ids, state, options) {
    const v = graph.version;
    const createKey = stateMapKey("m.room.create", "");
    for (const id of ids) {
        const event = graph.get(id);
        const key = graph.stateKeyOf(id);
        if (!event || key === undefined || graph.isRejected(id))
            continue;
        // The event's own auth events first, then what the state being built holds for the keys the rules read.
        const authState = new Map();
        let createId;
        const candidates = [...graph.authIds(id)];
        for (const [type, stateKey] of authTypesForEvent(v, event.type, event.state_key, event.sender, event.content)) {
            const current = state.get(stateMapKey(type, stateKey));
            if (current !== undefined)
                candidates.push(current);
        }
        const currentCreate = state.get(createKey);
        if (currentCreate !== undefined)
            candidates.push(currentCreate);
        for (const candidate of candidates) {
            const ae = graph.usable(candidate);
            const aeKey = ae && graph.stateKeyOf(candidate);
            if (aeKey === undefined)
                continue;
            authState.set(aeKey, ae);
            if (aeKey === createKey)
                createId = candidate;
        }
        try {
            checkAuth(event, authState, v, { ...options, createEventId: createId });
        }
        catch {
            continue; // not allowed (or malformed beyond what the rules can read): ignored
        }
        state.set(key, id);
    }
    return state;
}
