// The classic state resolution v2 graphs (as in Synapse's tests/state/test_v2.py and ruma-state-res'
// tests, re-derived here): each walks a prev_events DAG, resolving at every merge, and checks the state at
// END. Run in room versions with server-assigned ids (2), reference-hash ids (6, 10, 11) and v2.1 (12).
import { describe, expect, it } from "vitest";
import { ALICE, BOB, CHARLIE, EVELYN, ZARA, changedSinceStart, expectedNamed, walkDag, type EventSet, type NodeSpec } from "./fixtures.ts";

const V2_VERSIONS = ["2", "6", "10", "11", "12"];
const join = { membership: "join" };
const ban = { membership: "ban" };

interface Case {
  nodes: (set: EventSet) => NodeSpec[];
  edges: string[][];
  expected: string[];
}

const topic = (name: string, sender: string): NodeSpec => ({ name, sender, type: "m.room.topic", stateKey: "", content: { topic: name } });
const power = (name: string, sender: string, users: Record<string, number>, extra: Record<string, unknown> = {}) => (set: EventSet): NodeSpec => ({
  name,
  sender,
  type: "m.room.power_levels",
  stateKey: "",
  content: { users: set.users(users), ...extra },
});

/** Alice demotes Bob (PA2) while Bob, on another branch, re-sends the power levels (PB) and sets a topic (T3). */
const demotionRace = (set: EventSet): NodeSpec[] => [
      topic("T1", ALICE),
      power("PA1", ALICE, { [ALICE]: 100, [BOB]: 50 })(set),
      topic("T2", ALICE),
      power("PA2", ALICE, { [ALICE]: 100, [BOB]: 0 })(set),
      power("PB", BOB, { [ALICE]: 100, [BOB]: 50 })(set),
      topic("T3", BOB),
];

const CASES: Record<string, Case> = {
  // Alice bans Bob while, concurrently, Bob re-sends the power levels: the ban is ordered first (Alice has
  // more power), so Bob's power levels event then fails.
  "ban vs power levels": {
    nodes: (set) => [
      power("PA", ALICE, { [ALICE]: 100, [BOB]: 50 })(set),
      { name: "MA", sender: ALICE, type: "m.room.member", stateKey: ALICE, content: join },
      { name: "MB", sender: ALICE, type: "m.room.member", stateKey: BOB, content: ban },
      power("PB", BOB, { [ALICE]: 100, [BOB]: 50 })(set),
    ],
    edges: [
      ["END", "MB", "MA", "PA", "START"],
      ["END", "PB", "PA"],
    ],
    expected: ["PA", "MA", "MB"],
  },
  // A join racing a change to invite-only: the join rules (a power event) go first and the join fails.
  "join rule evasion": {
    nodes: () => [
      { name: "JR", sender: ALICE, type: "m.room.join_rules", stateKey: "", content: { join_rule: "invite" } },
      { name: "ME", sender: EVELYN, type: "m.room.member", stateKey: EVELYN, content: join },
    ],
    edges: [
      ["END", "JR", "START"],
      ["END", "ME", "START"],
    ],
    expected: ["JR"],
  },
  // Bob promotes Charlie, Charlie demotes himself; the other branch only has Alice's earlier event. The
  // chain PA → PB → PC is replayed in order and PC stands.
  "offtopic power levels": {
    nodes: (set) => [
      power("PA", ALICE, { [ALICE]: 100, [BOB]: 50 })(set),
      power("PB", BOB, { [ALICE]: 100, [BOB]: 50, [CHARLIE]: 50 })(set),
      power("PC", CHARLIE, { [ALICE]: 100, [BOB]: 50, [CHARLIE]: 0 })(set),
    ],
    edges: [
      ["END", "PC", "PB", "PA", "START"],
      ["END", "PA"],
    ],
    expected: ["PC"],
  },
  // Alice demotes Bob while Bob sets a topic: Bob's topic fails after the demotion; Alice's topic stays.
  "topic basic": {
    nodes: (set) => demotionRace(set),
    edges: [
      ["END", "PA2", "T2", "PA1", "T1", "START"],
      ["END", "T3", "PB", "PA1"],
    ],
    expected: ["PA2", "T2"],
  },
  // Bob's topic T2 is followed by his ban; merging with a branch that still has T1 must not let T2 back.
  "topic reset": {
    nodes: (set) => [
      topic("T1", ALICE),
      power("PA", ALICE, { [ALICE]: 100, [BOB]: 50 })(set),
      topic("T2", BOB),
      { name: "MB", sender: ALICE, type: "m.room.member", stateKey: BOB, content: ban },
    ],
    edges: [
      ["END", "MB", "T2", "PA", "T1", "START"],
      ["END", "T1"],
    ],
    expected: ["T1", "MB", "PA"],
  },
  // "topic basic" with a merge (MZ1) in between, then Alice's topic T4 after it.
  "topic setting": {
    nodes: (set) => [
      ...demotionRace(set),
      { name: "MZ1", sender: ZARA, type: "m.room.message", content: { body: "merge" } },
      topic("T4", ALICE),
    ],
    edges: [
      ["END", "T4", "MZ1", "PA2", "T2", "PA1", "T1", "START"],
      ["END", "MZ1", "T3", "PB", "PA1"],
    ],
    expected: ["T4", "PA2"],
  },
  // Mainline ordering: T3 cites the newest power levels (PA2) and T4 an older branch (PB over PA1); T3 is
  // ordered last and wins although T4 was sent after it.
  "mainline sort": {
    nodes: (set) => [
      topic("T1", ALICE),
      power("PA1", ALICE, { [ALICE]: 100, [BOB]: 50 })(set),
      topic("T2", ALICE),
      power("PA2", ALICE, { [ALICE]: 100, [BOB]: 50 }, { events: { "m.room.power_levels": 100 } })(set),
      power("PB", BOB, { [ALICE]: 100, [BOB]: 50 })(set),
      topic("T3", BOB),
      topic("T4", ALICE),
    ],
    edges: [
      ["END", "T3", "PA2", "T2", "PA1", "T1", "START"],
      ["END", "T4", "PB", "PA1"],
    ],
    expected: ["T3", "PA2"],
  },
};

describe("classic state resolution v2 graphs", () => {
  for (const [name, c] of Object.entries(CASES)) {
    it.each(V2_VERSIONS)(`${name} (room version %s)`, async (version) => {
      const dag = await walkDag(version, c.nodes, c.edges);
      // Every event was allowed where it was sent: the conflict comes from concurrency alone.
      expect(dag.unauthorised).toEqual([]);
      expect(changedSinceStart(dag, c.expected)).toEqual(expectedNamed(dag.set, c.expected));
    });
  }

  it.each(V2_VERSIONS)("a concurrent join and a join-rules-neutral event both stay (room version %s)", async (version) => {
    const dag = await walkDag(
      version,
      () => [
        { name: "ME", sender: EVELYN, type: "m.room.member", stateKey: EVELYN, content: join },
        topic("T1", ALICE),
      ],
      [
        ["END", "ME", "START"],
        ["END", "T1", "START"],
      ],
    );
    expect(changedSinceStart(dag, ["ME", "T1"])).toEqual(expectedNamed(dag.set, ["ME", "T1"]));
  });
});
