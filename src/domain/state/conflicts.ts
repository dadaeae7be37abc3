// Splitting the state sets to resolve into the unconflicted state map and the conflicted state set.
// v2: a key is unconflicted only when every set has it with the same event (a key some set lacks is
// conflicted). v1: a key conflicts only when two sets give it different events.
// Spec: Room Versions v2 "Unconflicted state map and conflicted state set"; v1 "State resolution".
import type { StateMap } from "../store/state-groups.ts";

export interface SplitState {
  unconflicted: Map<string, string>;
  /** State key → the distinct event ids the sets give it. */
  conflicted: Map<string, Set<string>>;
}

export function splitConflicts(stateSets: readonly StateMap[], missingKeyConflicts: boolean): SplitState {
  const unconflicted = new Map<string, string>();
  const conflicted = new Map<string, Set<string>>();
  const seen = new Set<string>();
  for (const set of stateSets) {
    for (const key of set.keys()) {
      if (seen.has(key)) continue;
      seen.add(key);
      const values = new Set<string>();
      let absent = false;
      for (const other of stateSets) {
        const v = other.get(key);
        if (v === undefined) absent = true;
        else values.add(v);
      }
      if (values.size === 1 && !(absent && missingKeyConflicts)) unconflicted.set(key, values.values().next().value!);
      else conflicted.set(key, values);
    }
  }
  return { unconflicted, conflicted };
}
