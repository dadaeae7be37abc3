import { stateKeyOf } from "../store/state-groups.js";
export function stateBeforeEvent(e, after) {
    if (e.pdu.state_key === undefined)
        return after;
    const key = stateKeyOf(e.pdu.type, e.pdu.state_key);
    if (after.get(key) !== e.eventId)
        return after;
    const before = new Map(after);
    if (e.replacesState)
        before.set(key, e.replacesState);
    else
        before.delete(key);
    return before;
}
