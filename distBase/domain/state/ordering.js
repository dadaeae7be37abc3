// The reverse topological power ordering of state resolution v2: power events and the parts of their auth
// chains inside the full conflicted set, sorted by Kahn's algorithm taking, at each step, the smallest
// ready event by (sender's power level descending, origin_server_ts, event_id).
// Spec: Room Versions v2 "Power events", "Reverse topological power ordering", Algorithm step 1.
import { compareCodePoints } from "../canonical-json.js";
import { AuthContext, stateMapKey, userPowerLevel } from "../auth/index.js";
import { MinHeap } from "./heap.js";
/**
 * A power event: power levels, join rules, or a member event making someone else leave (kick) or banned.
 * The create event counts too, as Synapse and ruma count it (it can only conflict in a broken room).
 */
export function isPowerEvent(e) {
    if (e.state_key === "" && (e.type === "m.room.power_levels" || e.type === "m.room.join_rules" || e.type === "m.room.create")) {
        return true;
    }
    if (e.type === "m.room.member" && typeof e.state_key === "string") {
        const m = e.content["membership"];
        return (m === "leave" || m === "ban") && e.sender !== e.state_key;
    }
    return false;
}
/** The power level of an event's sender by its own auth events (power levels and create events). */
export function senderPowerLevel(graph, id) {
    const e = graph.get(id);
    if (!e)
        return 0;
    const state = new Map();
    for (const a of graph.authIds(id)) {
        const ae = graph.get(a);
        if (ae && ae.state_key === "" && (ae.type === "m.room.power_levels" || ae.type === "m.room.create")) {
            state.set(stateMapKey(ae.type, ""), ae);
        }
    }
    return userPowerLevel(new AuthContext(e, state, graph.version, {}), e.sender);
}
/** origin_server_ts as a number for ordering (a malformed one sorts as 0). */
export function timestampOf(e) {
    return typeof e.origin_server_ts === "number" && Number.isFinite(e.origin_server_ts) ? e.origin_server_ts : 0;
}
/**
 * Kahn's algorithm on `edges` (node → the nodes it points at, its auth events), yielding nodes with no
 * remaining outgoing edge first and picking the `less`-smallest among the ready ones at each step. Nodes
 * on a cycle never become ready and are left out.
 */
export function lexicographicalTopologicalSort(edges, less) {
    const outDegree = new Map();
    const citedBy = new Map();
    const ready = new MinHeap(less);
    for (const [node, targets] of edges) {
        outDegree.set(node, targets.length);
        if (targets.length === 0)
            ready.push(node);
        for (const t of targets) {
            const list = citedBy.get(t);
            if (list)
                list.push(node);
            else
                citedBy.set(t, [node]);
        }
    }
    const out = [];
    for (let node = ready.pop(); node !== undefined; node = ready.pop()) {
        out.push(node);
        for (const parent of citedBy.get(node) ?? []) {
            const d = outDegree.get(parent) - 1;
            outDegree.set(parent, d);
            if (d === 0)
                ready.push(parent);
        }
    }
    return out;
}
/**
 * Step 1: the power events of the full conflicted set with their auth chains inside that set (walking
 * auth_events edges that stay inside it), in reverse topological power ordering.
 */
export function reverseTopologicalPowerOrder(graph, fullConflicted) {
    const edges = new Map();
    const stack = [];
    for (const id of fullConflicted) {
        const e = graph.get(id);
        if (e && isPowerEvent(e) && !edges.has(id)) {
            edges.set(id, []);
            stack.push(id);
        }
    }
    while (stack.length > 0) {
        const id = stack.pop();
        const targets = edges.get(id);
        for (const a of graph.authIds(id)) {
            if (!fullConflicted.has(a) || targets.includes(a))
                continue;
            targets.push(a);
            if (!edges.has(a)) {
                edges.set(a, []);
                stack.push(a);
            }
        }
    }
    const power = new Map();
    const ts = new Map();
    for (const id of edges.keys()) {
        power.set(id, senderPowerLevel(graph, id));
        ts.set(id, timestampOf(graph.get(id)));
    }
    return lexicographicalTopologicalSort(edges, (a, b) => {
        const pa = power.get(a);
        const pb = power.get(b);
        if (pa !== pb)
            return pa > pb;
        const ta = ts.get(a);
        const tb = ts.get(b);
        if (ta !== tb)
            return ta < tb;
        return compareCodePoints(a, b) < 0;
    });
}
