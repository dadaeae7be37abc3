// State resolution v2 (room versions 2–11) and v2.1 (room version 12): full conflicted set, power events
// by reverse topological power ordering, iterative auth checks, mainline ordering of the rest, iterative
// auth checks again, then the unconflicted state on top. v2.1 starts the checks from an empty state and
// adds the conflicted state subgraph to the full conflicted set.
// Spec: Room Versions v2 "State resolution" (Algorithm); v12 "State resolution".
import { stateMapKey } from "../auth/index.js";
import { AuthChainIndex } from "./auth-chain.js";
import { splitConflicts } from "./conflicts.js";
import { iterativeAuthChecks } from "./iterative-auth.js";
import { mainlineOrder } from "./mainline.js";
import { reverseTopologicalPowerOrder } from "./ordering.js";
const POWER_LEVELS_KEY = stateMapKey("m.room.power_levels", "");
export async function resolveV2(graph, stateSets, options) {
    const v21 = graph.version.stateResolution === "v2.1";
    const { unconflicted, conflicted } = splitConflicts(stateSets, true);
    const conflictedIds = new Set();
    for (const ids of conflicted.values())
        for (const id of ids)
            conflictedIds.add(id);
    // Every event of every set with its whole auth chain, loaded once; then the chains answered together.
    const all = new Set();
    for (const set of stateSets)
        for (const id of set.values())
            all.add(id);
    await graph.loadAuthClosure(all);
    const chains = new AuthChainIndex(graph, all);
    const full = new Set();
    for (const id of conflictedIds)
        if (graph.get(id))
            full.add(id);
    for (const id of chains.authDifference(stateSets.map((s) => s.values())))
        full.add(id);
    if (v21)
        for (const id of chains.conflictedSubgraph(conflictedIds))
            full.add(id);
    // Steps 1–2: power events first.
    const powerOrder = reverseTopologicalPowerOrder(graph, full);
    const state = iterativeAuthChecks(graph, powerOrder, v21 ? new Map() : new Map(unconflicted), options);
    // Steps 3–4: everything else, by mainline ordering based on the power levels just resolved.
    const done = new Set(powerOrder);
    const rest = [...full].filter((id) => !done.has(id));
    iterativeAuthChecks(graph, mainlineOrder(graph, rest, state.get(POWER_LEVELS_KEY)), state, options);
    // Step 5: the unconflicted state map wins.
    for (const [key, id] of unconflicted)
        state.set(key, id);
    return state;
}
