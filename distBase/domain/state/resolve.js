// State resolution: the one entry point the event pipeline calls when the states before an event (one
// per prev_event, or one per forward extremity) disagree. The room version's `stateResolution` flag picks
// the algorithm. Spec: Server-Server API "Room State Resolution"; Room Versions v1 / v2 state resolution.
import { verifyThirdPartyInviteSigned } from "../auth/index.js";
import { EventGraph } from "./event-graph.js";
import { resolveV1 } from "./resolution-v1.js";
import { resolveV2 } from "./resolution-v2.js";
/** The unconflicted case, shared by every algorithm: every set agrees (or there is one). */
export function trivialResolution(stateSets) {
    if (stateSets.length === 0)
        return new Map();
    const [first, ...rest] = stateSets;
    for (const other of rest) {
        if (other === first)
            continue;
        if (other.size !== first.size)
            return undefined;
        for (const [k, v] of other)
            if (first.get(k) !== v)
                return undefined;
    }
    return first;
}
/** Resolves `input.stateSets` by the room version's algorithm. */
export async function resolveState(input) {
    const same = trivialResolution(input.stateSets);
    if (same)
        return withoutRejected(same, input.isRejected);
    const graph = new EventGraph(input.version, input);
    const options = {
        verifyServerSignature: () => true,
        verifyThirdPartyInviteSignature: verifyThirdPartyInviteSigned,
        ...input.authOptions,
    };
    const resolved = input.version.stateResolution === "v1"
        ? await resolveV1(graph, input.stateSets, options)
        : await resolveV2(graph, input.stateSets, options);
    return withoutRejected(resolved, input.isRejected);
}
function withoutRejected(state, isRejected) {
    if (!isRejected)
        return state;
    let out;
    for (const [key, id] of state) {
        if (!isRejected(id))
            continue;
        out ??= new Map(state);
        out.delete(key);
    }
    return out ?? state;
}
