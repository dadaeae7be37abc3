export function splitConflicts(stateSets, missingKeyConflicts) {
    const unconflicted = new Map();
    const conflicted = new Map();
    const seen = new Set();
    for (const set of stateSets) {
        for (const key of set.keys()) {
            if (seen.has(key))
                continue;
            seen.add(key);
            const values = new Set();
            let absent = false;
            for (const other of stateSets) {
                const v = other.get(key);
                if (v === undefined)
                    absent = true;
                else
                    values.add(v);
            }
            if (values.size === 1 && !(absent && missingKeyConflicts))
                unconflicted.set(key, values.values().next().value);
            else
                conflicted.set(key, values);
        }
    }
    return { unconflicted, conflicted };
}
