// Auth chains in state resolution: the auth difference of several state sets, the v2.1 conflicted state
// subgraph, and how the auth graph is loaded (one batch per frontier or one bulk call, each event once,
// events that cannot be found left out).
import { describe, expect, it } from "vitest";
import type { Pdu } from "../../../src/domain/events/types.ts";
import { AuthChainIndex } from "../../../src/domain/state/auth-chain.ts";
import { EventGraph } from "../../../src/domain/state/event-graph.ts";
import { resolveState } from "../../../src/domain/state/resolve.ts";
import { ALICE, BOB, EventSet, baseAuth, baseRoom } from "./fixtures.ts";

/** v2 events with arbitrary auth_events (the index does not care about the auth rules). */
function graphOf(edges: Record<string, string[]>, forged: Record<string, string[]> = {}): EventSet {
  const set = new EventSet("2");
  const added = new Set<string>();
  const add = (name: string): void => {
    if (added.has(name)) return;
    added.add(name);
    for (const a of edges[name] ?? []) add(a);
    set.add({ name, sender: ALICE, type: "m.test", stateKey: name, auth: edges[name] ?? [] });
  };
  for (const name of Object.keys(edges)) add(name);
  // Forged events may cite ids that do not exist yet (a cycle): written with raw ids.
  for (const [name, auth] of Object.entries(forged)) {
    const ref = (n: string): [string, { sha256: string }] => [`$${n}:example.com`, { sha256: "x" }];
    const pdu: Pdu = {
      event_id: `$${name}:example.com`,
      room_id: set.roomId,
      sender: ALICE,
      type: "m.test",
      state_key: name,
      content: {},
      origin_server_ts: 0,
      prev_events: [],
      auth_events: auth.map(ref),
      depth: 1,
      hashes: { sha256: "x" },
      signatures: {},
    };
    set.events.set(pdu.event_id!, pdu);
  }
  return set;
}

async function index(set: EventSet, seeds: string[]): Promise<{ idx: AuthChainIndex; ids: (names: string[]) => string[]; names: (ids: Set<string>) => string[] }> {
  const graph = new EventGraph(set.v, { loadEvents: set.loader() });
  const id = (n: string) => (set.has(n) ? set.id(n) : `$${n}:example.com`);
  await graph.loadAuthClosure(seeds.map(id));
  return {
    idx: new AuthChainIndex(graph, seeds.map(id)),
    ids: (names) => names.map(id),
    names: (ids) => [...ids].map((i) => set.nameOf(i).replace(/^\$(.*):example\.com$/, "$1")).sort(),
  };
}

describe("auth difference", () => {
  it("is what some but not all state sets' auth chains (their own events included) contain", async () => {
    // Synapse's example: A → C → D → E and B → C, B → E. A walk stopping at C (reached by both) would miss
    // that E is reached by both too.
    const set = graphOf({ A: ["C"], B: ["C", "E"], C: ["D"], D: ["E"], E: [] });
    const { idx, ids, names } = await index(set, ["A", "B"]);
    expect(names(idx.authDifference([ids(["A"]), ids(["B"])]))).toEqual(["A", "B"]);
  });

  it("counts a set's own events, and works for three sets", async () => {
    const set = graphOf({ X: ["R"], Y: ["S"], S: ["R"], Z: ["R"], R: [] });
    const { idx, ids, names } = await index(set, ["X", "Y", "Z", "S"]);
    // Chains: {X, R}, {Y, S, R}, {Z, S, R}: only R is in all three.
    expect(names(idx.authDifference([ids(["X"]), ids(["Y"]), ids(["Z", "S"])]))).toEqual(["S", "X", "Y", "Z"]);
    // An event present in every set is in every chain.
    expect(names(idx.authDifference([ids(["X", "S"]), ids(["Y", "S"])]))).toEqual(["X", "Y"]);
  });

  it("handles more than 32 state sets", async () => {
    const edges: Record<string, string[]> = { R: [] };
    for (let i = 0; i < 40; i++) edges[`E${i}`] = ["R"];
    const set = graphOf(edges);
    const seeds = Object.keys(edges);
    const { idx, ids, names } = await index(set, seeds);
    const sets = Array.from({ length: 40 }, (_, i) => ids([`E${i}`]));
    expect(names(idx.authDifference(sets))).toEqual(Array.from({ length: 40 }, (_, i) => `E${i}`).sort());
    expect(names(idx.authDifference([...sets, ids(["E0", "E1"])]))).toEqual(Array.from({ length: 40 }, (_, i) => `E${i}`).sort());
  });

  it("reaches the right answer through an auth cycle (forged v1–2 ids)", async () => {
    const set = graphOf({ X: [] }, { P: ["Q"], Q: ["P"], T: ["P"] });
    const { idx, ids, names } = await index(set, ["T", "Q"]);
    // Chains: {T, P, Q} and {Q, P}.
    expect(names(idx.authDifference([ids(["T"]), ids(["Q"])]))).toEqual(["T"]);
  });
});

describe("conflicted state subgraph (v2.1)", () => {
  it("holds every event on an auth path between two conflicted events, endpoints included", async () => {
    // P2 → P1 → P0 → C; M → P1; Q → P0.
    const set = graphOf({ C: [], P0: ["C"], P1: ["P0"], P2: ["P1"], M: ["P1"], Q: ["P0"] });
    const { idx, ids, names } = await index(set, ["P2", "M", "Q"]);
    expect(names(idx.conflictedSubgraph(new Set(ids(["P2", "P0"]))))).toEqual(["P0", "P1", "P2"]);
    expect(names(idx.conflictedSubgraph(new Set(ids(["M", "Q"]))))).toEqual(["M", "Q"]);
    expect(names(idx.conflictedSubgraph(new Set(ids(["M", "P2", "C"]))))).toEqual(["C", "M", "P0", "P1", "P2"]);
  });
});

describe("loading the auth graph", () => {
  /** A room whose power levels changed `depth` times in a row, then two concurrent topics. */
  function deepRoom(depth: number) {
    const set = new EventSet("11");
    const base = baseRoom(set);
    let pl = "IPOWER";
    for (let i = 1; i <= depth; i++) {
      const name = `P${i}`;
      set.add({ name, sender: ALICE, type: "m.room.power_levels", stateKey: "", content: { users: set.users({ [ALICE]: 100, [BOB]: 50 }), i }, auth: ["CREATE", pl, "IMA"] });
      pl = name;
    }
    const state = set.state(...base, pl);
    set.add({ name: "TA", sender: ALICE, type: "m.room.topic", stateKey: "", content: { topic: "a" }, auth: ["CREATE", pl, "IMA"] });
    set.add({ name: "TB", sender: BOB, type: "m.room.topic", stateKey: "", content: { topic: "b" }, auth: ["CREATE", pl, "IM-bob"] });
    return { set, sets: [new Map([...state, ...set.state("TA")]), new Map([...state, ...set.state("TB")])] };
  }

  it("asks loadEvents once per frontier of the auth graph and never for the same event twice", async () => {
    const { set, sets } = deepRoom(30);
    const resolved = await set.resolve(sets);
    expect(set.nameOf(resolved.get("m.room.topic\u0000")!)).toBe(set.pdu("TA").origin_server_ts < set.pdu("TB").origin_server_ts ? "TB" : "TA");
    const all = set.calls.flat();
    expect(new Set(all).size).toBe(all.length);
    // One call for the state events (P30 among them), then one per level of P29 … P1, each of which is
    // found only through the one above it.
    expect(set.calls.length).toBe(30);
    expect(set.calls[0]!.length).toBe(sets[0]!.size + 1);
  });

  it("uses a bulk auth chain loader when given one, and loadEvents only for what it left out", async () => {
    const { set, sets } = deepRoom(30);
    const loadEvents = set.loader();
    let bulkCalls = 0;
    const loadAuthChains = async (ids: readonly string[]) => {
      bulkCalls++;
      const out = new Map<string, Pdu>();
      const stack = [...ids];
      while (stack.length > 0) {
        const id = stack.pop()!;
        const e = set.events.get(id);
        if (!e || out.has(id) || set.nameOf(id) === "IJR") continue; // the bulk answer misses IJR
        out.set(id, e);
        for (const a of e.auth_events as string[]) stack.push(a);
      }
      return out;
    };
    const viaBulk = await resolveState({ version: set.v, stateSets: sets, loadEvents, loadAuthChains });
    expect(bulkCalls).toBe(1);
    expect(set.calls).toEqual([[set.id("IJR")]]);
    expect(viaBulk).toEqual(await set.resolve(sets));
  });

  it("treats events it cannot load as unknown, asking for each once", async () => {
    const { set, sets } = deepRoom(5);
    const graph = new EventGraph(set.v, { loadEvents: set.loader({ hide: ["P3"] }) });
    await graph.loadAuthClosure([set.id("TA")]);
    expect(graph.get(set.id("P4"))).toBeDefined();
    expect(graph.get(set.id("P3"))).toBeUndefined();
    expect(graph.get(set.id("P2"))).toBeUndefined(); // only reachable through P3
    await graph.load([set.id("P3")]);
    expect(set.calls.flat().filter((id) => id === set.id("P3"))).toHaveLength(1);
    expect(sets).toHaveLength(2);
  });

  it("v12: follows the create event the room id names, which auth_events never list", async () => {
    const set = new EventSet("12");
    baseRoom(set);
    set.add({ name: "T", sender: BOB, type: "m.room.topic", stateKey: "", content: {}, auth: baseAuth(BOB) });
    const graph = new EventGraph(set.v, { loadEvents: set.loader() });
    await graph.loadAuthClosure([set.id("T")]);
    expect(set.pdu("T").auth_events).not.toContain(set.id("CREATE"));
    expect(graph.authIds(set.id("T"))).toContain(set.id("CREATE"));
    expect(graph.get(set.id("CREATE"))).toBeDefined();
  });
});
