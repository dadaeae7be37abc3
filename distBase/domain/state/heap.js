// A binary min-heap ordered by a caller's comparison: the priority queue behind the lexicographically
// smallest topological sort (Kahn's algorithm) of state resolution v2.
// Spec: Room Versions v2 "Reverse topological power ordering".
export class MinHeap {
    less;
    items = [];
    constructor(less) {
        this.less = less;
    }
    get size() {
        return this.items.length;
    }
    push(item) {
        const a = this.items;
        a.push(item);
        let i = a.length - 1;
        while (i > 0) {
            const parent = (i - 1) >> 1;
            if (!this.less(a[i], a[parent]))
                break;
            [a[i], a[parent]] = [a[parent], a[i]];
            i = parent;
        }
    }
    /** Removes and returns the smallest item (undefined when empty). */
    pop() {
        const a = this.items;
        if (a.length === 0)
            return undefined;
        const top = a[0];
        const last = a.pop();
        if (a.length > 0) {
            a[0] = last;
            let i = 0;
            for (;;) {
                const l = 2 * i + 1;
                const r = l + 1;
                let m = i;
                if (l < a.length && this.less(a[l], a[m]))
                    m = l;
                if (r < a.length && this.less(a[r], a[m]))
                    m = r;
                if (m === i)
                    break;
                [a[i], a[m]] = [a[m], a[i]];
                i = m;
            }
        }
        return top;
    }
}
