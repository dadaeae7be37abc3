// Property tests: on random rooms that fork into concurrent branches (built by a seeded PRNG; each event
// authorised against its branch's state), the resolved state does not depend on the order the state sets
// are given, on the order `loadEvents` answers in, or on a set being given twice; rejected events never
// appear in it. A failure prints its seed.
import { describe, expect, it } from "vitest";
import { authTypesForEvent, checkAuth, stateMapKey } from "../../../src/domain/auth/index.ts";
import type { Pdu } from "../../../src/domain/events/types.ts";
import type { StateMap } from "../../../src/domain/store/state-groups.ts";
import { ALICE, BOB, CHARLIE, EVELYN, EventSet, ZARA, baseRoom, prng, shuffled } from "./fixtures.ts";

const DAVE = "@dave:example.com";
const USERS = [ALICE, BOB, CHARLIE, DAVE, ZARA, EVELYN];

interface Branch {
  state: Map<string, string>;
  last: string;
}

/** A random room: a base, then 2–4 branches (each forking from the base or from another branch). */
function randomRoom(version: string, seed: number) {
  const random = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const set = new EventSet(version);
  const base = baseRoom(set, { [ALICE]: 100, [BOB]: 50, [CHARLIE]: 50, [DAVE]: 25, [ZARA]: 0 });
  const branches: Branch[] = [{ state: set.state(...base), last: base[base.length - 1]! }];
  const branchCount = 2 + Math.floor(random() * 3);
  let n = 0;
  for (let b = 0; b < branchCount; b++) {
    const from = pick(branches);
    const branch: Branch = { state: new Map(from.state), last: from.last };
    const steps = 2 + Math.floor(random() * 9);
    for (let i = 0; i < steps; i++) {
      const sender = pick(USERS);
      const target = pick(USERS);
      const level = pick([0, 25, 50, 75, 100]);
      const plId = branch.state.get(stateMapKey("m.room.power_levels", ""));
      const users = { ...((plId && (set.events.get(plId)!.content["users"] as Record<string, number>)) || {}) };
      const actions: Array<[string, string, Record<string, unknown>]> = [
        ["m.room.topic", "", { topic: `t${n}` }],
        ["m.room.name", "", { name: `n${n}` }],
        ["m.room.power_levels", "", { users: set.users({ ...users, [target]: level }) }],
        ["m.room.join_rules", "", { join_rule: pick(["public", "invite"]) }],
        ["m.room.member", target, { membership: pick(["ban", "leave", "invite"]) }],
        ["m.room.member", sender, { membership: pick(["join", "leave"]) }],
      ];
      const [type, stateKey, content] = pick(actions);
      const auth = authTypesForEvent(set.v, type, stateKey, sender, content)
        .map(([t, k]) => branch.state.get(stateMapKey(t, k)))
        .filter((id): id is string => id !== undefined)
        .map((id) => set.nameOf(id));
      const name = `b${b}-${n++}`;
      set.add({ name, sender, type, stateKey, content, auth, prev: [branch.last], ts: Math.floor(random() * 8) });
      const authState = new Map<string, Pdu>();
      for (const [key, id] of branch.state) authState.set(key, set.events.get(id)!);
      try {
        checkAuth(set.pdu(name), authState, set.v, { createEventId: set.id("CREATE") });
      } catch {
        continue; // not allowed on this branch: the event exists but never enters its state
      }
      branch.state.set(stateMapKey(type, stateKey), set.id(name));
      branch.last = name;
    }
    branches.push(branch);
  }
  return { set, sets: branches.slice(1).map((b) => b.state as StateMap), random };
}

const SEEDS = Array.from({ length: 30 }, (_, i) => 1000 + i * 7919);

describe.each(["1", "2", "11", "12"])("room version %s", (version) => {
  it("the resolved state does not depend on the order of the state sets or of loadEvents' answers", async () => {
    for (const seed of SEEDS) {
      const { set, sets, random } = randomRoom(version, seed);
      const expected = [...(await set.resolve(sets))].sort();
      for (let p = 0; p < 4; p++) {
        const order = shuffled(sets, random);
        const loadEvents = set.loader({ seed: seed + p });
        const got = [...(await set.resolve(order, { loadEvents }))].sort();
        expect(got, `seed ${seed}, permutation ${p}`).toEqual(expected);
      }
      const twice = [...(await set.resolve([...sets, sets[0]!]))].sort();
      expect(twice, `seed ${seed}, a set given twice`).toEqual(expected);
    }
  });

  it("rejected events never appear, whatever the order", async () => {
    for (const seed of SEEDS) {
      const { set, sets, random } = randomRoom(version, seed);
      const candidates = [...new Set(sets.flatMap((s) => [...s.values()]))].filter((id) => set.nameOf(id).startsWith("b"));
      const rejected = new Set(candidates.filter(() => random() < 0.3));
      const isRejected = (id: string) => rejected.has(id);
      const expected = [...(await set.resolve(sets, { isRejected }))].sort();
      for (const [, id] of expected) expect(rejected.has(id), `seed ${seed}: ${set.nameOf(id)} is rejected`).toBe(false);
      const got = [...(await set.resolve(shuffled(sets, random), { isRejected, loadEvents: set.loader({ seed }) }))].sort();
      expect(got, `seed ${seed}, shuffled`).toEqual(expected);
    }
  });
});
