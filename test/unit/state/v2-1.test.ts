// State resolution v2.1 (room version 12) against v2 (room versions 2–11) on the two problems of MSC4297,
// re-derived by hand: state sets that disagree with the auth chains (as a faulty /state answer gives).
// A: v2.1 starts the iterative auth checks from an empty state, so the join rules survive Alice's leave.
// B: v2.1 replays the conflicted state subgraph, so Bob's promotion of Charlie is applied after his own.
import { describe, expect, it } from "vitest";
import { ALICE, BOB, CHARLIE, EventSet, ZARA } from "./fixtures.ts";

const EVE = "@eve:example.com";
const join = (displayname: string) => ({ membership: "join", displayname });

function start(version: string): EventSet {
  const set = new EventSet(version);
  set.add({ name: "CREATE", sender: ALICE, type: "m.room.create", stateKey: "" });
  set.add({ name: "MA", sender: ALICE, type: "m.room.member", stateKey: ALICE, content: join("alice"), auth: ["CREATE"], prev: ["CREATE"] });
  set.add({ name: "P0", sender: ALICE, type: "m.room.power_levels", stateKey: "", content: { users: set.users({ [ALICE]: 100 }) }, auth: ["CREATE", "MA"], prev: ["MA"] });
  set.add({ name: "J0", sender: ALICE, type: "m.room.join_rules", stateKey: "", content: { join_rule: "public" }, auth: ["CREATE", "MA", "P0"], prev: ["P0"] });
  set.add({ name: "MB", sender: BOB, type: "m.room.member", stateKey: BOB, content: join("bob"), auth: ["CREATE", "P0", "J0"], prev: ["J0"] });
  set.add({ name: "MC", sender: CHARLIE, type: "m.room.member", stateKey: CHARLIE, content: join("charlie"), auth: ["CREATE", "P0", "J0"], prev: ["MB"] });
  return set;
}

function problemA(version: string) {
  const set = start(version);
  set.add({ name: "J1", sender: ALICE, type: "m.room.join_rules", stateKey: "", content: { join_rule: "invite" }, auth: ["CREATE", "P0", "MA"], prev: ["MC"] });
  set.add({ name: "LA", sender: ALICE, type: "m.room.member", stateKey: ALICE, content: { membership: "leave" }, auth: ["CREATE", "P0", "MA"], prev: ["J1"] });
  set.add({ name: "MB2", sender: BOB, type: "m.room.member", stateKey: BOB, content: join("bob++"), auth: ["CREATE", "P0", "MB", "J1"], prev: ["LA"] });
  set.add({ name: "MC2", sender: CHARLIE, type: "m.room.member", stateKey: CHARLIE, content: join("charlie++"), auth: ["CREATE", "P0", "MC", "J1"], prev: ["LA"] });
  // Bob's state is right; Charlie's came from a faulty /state answer holding the old join rules.
  return { set, sets: [set.state("CREATE", "P0", "J1", "LA", "MB2", "MC"), set.state("CREATE", "P0", "J0", "MB", "LA", "MC2")] };
}

function problemB(version: string) {
  const set = start(version);
  set.add({ name: "P1", sender: ALICE, type: "m.room.power_levels", stateKey: "", content: { users: set.users({ [ALICE]: 100, [BOB]: 50 }) }, auth: ["CREATE", "P0", "MA"], prev: ["MC"] });
  set.add({
    name: "P2",
    sender: BOB,
    type: "m.room.power_levels",
    stateKey: "",
    content: { users: set.users({ [ALICE]: 100, [BOB]: 50, [CHARLIE]: 50 }) },
    auth: ["CREATE", "P1", "MB"],
    prev: ["P1"],
  });
  set.add({ name: "MZ", sender: ZARA, type: "m.room.member", stateKey: ZARA, content: join("zara"), auth: ["CREATE", "P2", "J0"], prev: ["P2"] });
  set.add({ name: "ME", sender: EVE, type: "m.room.member", stateKey: EVE, content: join("eve"), auth: ["CREATE", "P2", "J0"], prev: ["P2"] });
  set.add({ name: "ME2", sender: EVE, type: "m.room.member", stateKey: EVE, content: join("eve++"), auth: ["CREATE", "P2", "ME", "J0"], prev: ["ME"] });
  // Eve's state came from a faulty /state answer holding the first power levels.
  return { set, sets: [set.state("CREATE", "MA", "P0", "J0", "MB", "MC", "ME2"), set.state("CREATE", "MA", "P2", "J0", "MB", "MC", "MZ")] };
}

describe("MSC4297 problem A: conflicted events unauthorised by the unconflicted state", () => {
  it.each(["2", "11"])("v%s (state res v2): both join rules fail against Alice's leave; the room loses its join rules", async (version) => {
    const { set, sets } = problemA(version);
    expect(set.named(await set.resolve(sets))).toEqual(set.named(set.state("CREATE", "P0", "LA", "MB2", "MC2")));
  });

  it("v12 (state res v2.1): replayed from an empty state, the join rules see Alice joined and J1 stands", async () => {
    const { set, sets } = problemA("12");
    expect(set.named(await set.resolve(sets))).toEqual(set.named(set.state("CREATE", "P0", "J1", "LA", "MB2", "MC2")));
  });
});

describe("MSC4297 problem B: conflicted events needing events between them", () => {
  it.each(["2", "11"])("v%s (state res v2): P1 is in both auth chains, so it is not replayed and Bob's P2 fails", async (version) => {
    const { set, sets } = problemB(version);
    expect(set.named(await set.resolve(sets))).toEqual(set.named(set.state("CREATE", "MA", "P0", "J0", "MB", "MC", "ME2", "MZ")));
  });

  it("v12 (state res v2.1): P1 lies between the conflicted P2 and P0, is replayed, and P2 stands", async () => {
    const { set, sets } = problemB("12");
    expect(set.named(await set.resolve(sets))).toEqual(set.named(set.state("CREATE", "MA", "P2", "J0", "MB", "MC", "ME2", "MZ")));
  });
});
