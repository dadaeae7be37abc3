export class AuthChainIndex {
    /** Node number → event id. Only loaded events are nodes. */
    ids = [];
    index = new Map();
    /** Node → the nodes of its (loaded) auth events. */
    auth = [];
    /** Every node after all of its auth events (a DFS post-order). */
    order = [];
    /** True when some auth_events edges form a cycle (possible only with v1–2 server-assigned ids). */
    cyclic = false;
    /** Indexes the events reachable from `seeds` through auth_events (the graph must be loaded). */
    constructor(graph, seeds) {
        const color = []; // 0 new, 1 on the DFS stack, 2 finished
        const nodeOf = (id) => {
            let n = this.index.get(id);
            if (n === undefined) {
                n = this.ids.length;
                this.ids.push(id);
                this.index.set(id, n);
                this.auth.push([]);
                color.push(0);
            }
            return n;
        };
        const expand = (n) => {
            const out = [];
            for (const a of graph.authIds(this.ids[n]))
                if (graph.get(a))
                    out.push(nodeOf(a));
            this.auth[n] = out;
            color[n] = 1;
        };
        const nodes = [];
        const next = [];
        for (const seed of seeds) {
            if (!graph.get(seed))
                continue;
            const s = nodeOf(seed);
            if (color[s] !== 0)
                continue;
            expand(s);
            nodes.push(s);
            next.push(0);
            while (nodes.length > 0) {
                const top = nodes.length - 1;
                const u = nodes[top];
                const edges = this.auth[u];
                const i = next[top];
                if (i < edges.length) {
                    next[top] = i + 1;
                    const w = edges[i];
                    if (color[w] === 0) {
                        expand(w);
                        nodes.push(w);
                        next.push(0);
                    }
                    else if (color[w] === 1) {
                        this.cyclic = true;
                    }
                }
                else {
                    color[u] = 2;
                    this.order.push(u);
                    nodes.pop();
                    next.pop();
                }
            }
        }
    }
    get size() {
        return this.ids.length;
    }
    /**
     * The auth difference of the state sets: every event in the auth chain of some set but not of all,
     * where a set's auth chain holds its own events and everything reachable from them.
     */
    authDifference(stateSets) {
        const k = stateSets.length;
        const words = Math.max(1, Math.ceil(k / 32));
        const n = this.ids.length;
        const mask = new Uint32Array(n * words);
        stateSets.forEach((set, i) => {
            for (const id of set) {
                const node = this.index.get(id);
                if (node !== undefined)
                    mask[node * words + (i >>> 5)] |= 1 << (i & 31);
            }
        });
        // Citing events come before their auth events in the reversed post-order: one pass reaches everything.
        const pass = () => {
            let changed = false;
            for (let p = this.order.length - 1; p >= 0; p--) {
                const u = this.order[p];
                for (const w of this.auth[u]) {
                    for (let j = 0; j < words; j++) {
                        const bits = mask[u * words + j];
                        const before = mask[w * words + j];
                        if ((bits & ~before) !== 0) {
                            mask[w * words + j] = before | bits;
                            changed = true;
                        }
                    }
                }
            }
            return changed;
        };
        while (pass() && this.cyclic)
            ;
        const full = [];
        for (let j = 0; j < words; j++) {
            const bitsInWord = Math.min(32, k - j * 32);
            full.push(bitsInWord === 32 ? 0xffffffff : 2 ** bitsInWord - 1);
        }
        const out = new Set();
        for (let u = 0; u < n; u++) {
            let isFull = true;
            let any = false;
            for (let j = 0; j < words; j++) {
                const m = mask[u * words + j];
                if (m !== 0)
                    any = true;
                if (m !== full[j])
                    isFull = false;
            }
            if (any && !isFull)
                out.add(this.ids[u]);
        }
        return out;
    }
    /**
     * v2.1: the conflicted state subgraph, every event on some auth_events path from one conflicted event to
     * another (endpoints included): reachable from a conflicted event, and reaching one.
     */
    conflictedSubgraph(conflicted) {
        const n = this.ids.length;
        const below = new Uint8Array(n); // in the auth chain of a conflicted event (or conflicted itself)
        const above = new Uint8Array(n); // a conflicted event is in its auth chain (or it is conflicted)
        for (const id of conflicted) {
            const node = this.index.get(id);
            if (node !== undefined)
                below[node] = above[node] = 1;
        }
        const pass = () => {
            let changed = false;
            for (let p = this.order.length - 1; p >= 0; p--) {
                const u = this.order[p];
                if (below[u] === 0)
                    continue;
                for (const w of this.auth[u]) {
                    if (below[w] === 0) {
                        below[w] = 1;
                        changed = true;
                    }
                }
            }
            for (const u of this.order) {
                if (above[u] === 1)
                    continue;
                for (const w of this.auth[u]) {
                    if (above[w] === 1) {
                        above[u] = 1;
                        changed = true;
                        break;
                    }
                }
            }
            return changed;
        };
        while (pass() && this.cyclic)
            ;
        const out = new Set();
        for (let u = 0; u < n; u++)
            if (below[u] === 1 && above[u] === 1)
                out.add(this.ids[u]);
        return out;
    }
}
