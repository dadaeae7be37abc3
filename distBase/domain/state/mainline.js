// Mainline ordering of state resolution v2: the events left after the power events, sorted by how far
// down the resolved power levels' mainline (the chain of power levels events through auth_events) their
// own power levels chain meets it — earlier first — then origin_server_ts, then event_id.
// Spec: Room Versions v2 "Mainline ordering", Algorithm step 3.
import { compareCodePoints } from "../canonical-json.js";
import { timestampOf } from "./ordering.js";
/** Sorts `ids` by the mainline ordering based on the power levels event `powerLevelsId`. */
export function mainlineOrder(graph, ids, powerLevelsId) {
    if (ids.length === 0)
        return [];
    // Mainline position of each power levels event on it: P0 (the resolved one) is 0, its parent 1, ...
    const mainline = new Map();
    for (let p = powerLevelsId, i = 0; p !== undefined && graph.get(p) && !mainline.has(p); p = graph.parentPowerLevels(p), i++) {
        mainline.set(p, i);
    }
    // The position of a power levels event met by an event's chain: memoized, shared by every event citing it.
    const positionOfPowerLevels = new Map();
    const positionFrom = (start) => {
        const path = [];
        let found = Infinity;
        const visited = new Set();
        for (let p = start; p !== undefined && !visited.has(p); p = graph.parentPowerLevels(p)) {
            const onMainline = mainline.get(p);
            if (onMainline !== undefined) {
                found = onMainline;
                break;
            }
            const known = positionOfPowerLevels.get(p);
            if (known !== undefined) {
                found = known;
                break;
            }
            visited.add(p);
            path.push(p);
        }
        for (const p of path)
            positionOfPowerLevels.set(p, found);
        return found;
    };
    const position = new Map();
    const ts = new Map();
    for (const id of ids) {
        position.set(id, positionFrom(graph.parentPowerLevels(id)));
        ts.set(id, timestampOf(graph.get(id)));
    }
    return [...ids].sort((a, b) => {
        const pa = position.get(a);
        const pb = position.get(b);
        if (pa !== pb)
            return pa > pb ? -1 : 1;
        const ta = ts.get(a);
        const tb = ts.get(b);
        if (ta !== tb)
            return ta - tb;
        return compareCodePoints(a, b);
    });
}
