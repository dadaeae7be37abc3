// Reverse topological power ordering (state resolution v2, step 1): Kahn's algorithm picking the smallest
// ready event, and each tie-breaker on its own — the sender's power level, then origin_server_ts, then
// event_id — shown both on the order itself and on the state it resolves to.
import { describe, expect, it } from "vitest";
import { compareCodePoints } from "../../../src/domain/canonical-json.ts";
import { EventGraph } from "../../../src/domain/state/event-graph.ts";
import { isPowerEvent, lexicographicalTopologicalSort, reverseTopologicalPowerOrder, senderPowerLevel } from "../../../src/domain/state/ordering.ts";
import { ALICE, BOB, CHARLIE, EventSet, baseAuth, baseRoom } from "./fixtures.ts";

describe("lexicographical topological sort", () => {
  it("puts events after their auth events and picks the smallest ready one", () => {
    // l, m, n, p all cite o; m also cites n.
    const edges = new Map<string, string[]>([
      ["l", ["o"]],
      ["m", ["n", "o"]],
      ["n", ["o"]],
      ["o", []],
      ["p", ["o"]],
    ]);
    expect(lexicographicalTopologicalSort(edges, (a, b) => a < b)).toEqual(["o", "l", "n", "m", "p"]);
    // With the opposite preference the topology still holds: m only after n.
    expect(lexicographicalTopologicalSort(edges, (a, b) => a > b)).toEqual(["o", "p", "n", "m", "l"]);
  });

  it("leaves out events on a cycle (possible only with forged v1–2 ids)", () => {
    const edges = new Map<string, string[]>([
      ["a", ["b"]],
      ["b", ["a"]],
      ["c", []],
    ]);
    expect(lexicographicalTopologicalSort(edges, (x, y) => x < y)).toEqual(["c"]);
  });
});

describe("power events", () => {
  it("are power levels, join rules, and kicks and bans of someone else", () => {
    const set = new EventSet("10");
    baseRoom(set);
    const ev = (name: string, sender: string, type: string, stateKey: string, content: Record<string, unknown>) =>
      set.add({ name, sender, type, stateKey, content });
    ev("kick", ALICE, "m.room.member", BOB, { membership: "leave" });
    ev("leave", BOB, "m.room.member", BOB, { membership: "leave" });
    ev("ban", ALICE, "m.room.member", BOB, { membership: "ban" });
    ev("invite", ALICE, "m.room.member", CHARLIE, { membership: "invite" });
    ev("topic", ALICE, "m.room.topic", "", { topic: "x" });
    const power = (name: string) => isPowerEvent(set.pdu(name));
    expect(["IPOWER", "IJR", "kick", "ban"].map(power)).toEqual([true, true, true, true]);
    expect(["leave", "invite", "topic", "IMA"].map(power)).toEqual([false, false, false, false]);
  });
});

describe("sender power level", () => {
  it.each(["2", "11"])("v%s: read from the event's own auth events, the creator at 100 without power levels", async (version) => {
    const set = new EventSet(version);
    baseRoom(set);
    set.add({ name: "bob-topic", sender: BOB, type: "m.room.topic", stateKey: "", content: {}, auth: baseAuth(BOB) });
    set.add({ name: "alice-early", sender: ALICE, type: "m.room.topic", stateKey: "", content: {}, auth: ["CREATE", "IMA"] });
    set.add({ name: "bob-early", sender: BOB, type: "m.room.topic", stateKey: "", content: {}, auth: ["CREATE"] });
    const graph = new EventGraph(set.v, { loadEvents: set.loader() });
    await graph.loadAuthClosure(["bob-topic", "alice-early", "bob-early"].map((n) => set.id(n)));
    expect(senderPowerLevel(graph, set.id("bob-topic"))).toBe(50);
    expect(senderPowerLevel(graph, set.id("alice-early"))).toBe(100);
    expect(senderPowerLevel(graph, set.id("bob-early"))).toBe(0);
  });

  it("v12: creators have infinite power, found through the create event the room id names", async () => {
    const set = new EventSet("12");
    baseRoom(set, { [ALICE]: 100, [BOB]: 100 });
    set.add({ name: "alice-topic", sender: ALICE, type: "m.room.topic", stateKey: "", content: {}, auth: baseAuth(ALICE) });
    set.add({ name: "bob-topic", sender: BOB, type: "m.room.topic", stateKey: "", content: {}, auth: baseAuth(BOB) });
    expect(set.pdu("alice-topic").auth_events).not.toContain(set.id("CREATE"));
    const graph = new EventGraph(set.v, { loadEvents: set.loader() });
    await graph.loadAuthClosure([set.id("alice-topic"), set.id("bob-topic")]);
    expect(senderPowerLevel(graph, set.id("alice-topic"))).toBe(Infinity);
    expect(senderPowerLevel(graph, set.id("bob-topic"))).toBe(100);
  });
});

/**
 * Two concurrent join rules events on top of the base room. Both pass auth whatever the order, so the one
 * applied last — the larger in the ordering — is the resolved one.
 */
async function race(version: string, a: { name: string; sender: string; ts: number }, b: { name: string; sender: string; ts: number }) {
  const set = new EventSet(version);
  const base = baseRoom(set);
  for (const [e, rule] of [
    [a, "invite"],
    [b, "public"],
  ] as const) {
    set.add({ name: e.name, sender: e.sender, type: "m.room.join_rules", stateKey: "", content: { join_rule: rule }, auth: baseAuth(e.sender), prev: ["IM-charlie"], ts: e.ts });
  }
  const resolved = await set.resolve([set.state(...base, a.name), set.state(...base, b.name)]);
  const graph = new EventGraph(set.v, { loadEvents: set.loader() });
  await graph.loadAuthClosure([set.id(a.name), set.id(b.name)]);
  const order = reverseTopologicalPowerOrder(graph, new Set([set.id(a.name), set.id(b.name)])).map((id) => set.nameOf(id));
  return { set, winner: set.nameOf(resolved.get("m.room.join_rules\u0000")!), order };
}

describe("reverse topological power ordering tie-breakers", () => {
  it.each(["2", "11", "12"])("v%s: the higher sender power level comes first, whatever the timestamps and ids", async (version) => {
    // Bob (50) sent earlier and has the smaller id; Alice (100) still goes first and Bob's event is applied last.
    const { winner, order } = await race(version, { name: "z-alice", sender: ALICE, ts: 200 }, { name: "a-bob", sender: BOB, ts: 100 });
    expect(order).toEqual(["z-alice", "a-bob"]);
    expect(winner).toBe("a-bob");
  });

  it.each(["2", "11", "12"])("v%s: at equal power the earlier origin_server_ts comes first, whatever the ids", async (version) => {
    const { winner, order } = await race(version, { name: "a-bob", sender: BOB, ts: 200 }, { name: "z-charlie", sender: CHARLIE, ts: 100 });
    expect(order).toEqual(["z-charlie", "a-bob"]);
    expect(winner).toBe("a-bob");
  });

  it("v2: at equal power and timestamp the smaller event_id comes first", async () => {
    const { winner, order } = await race("2", { name: "z-bob", sender: BOB, ts: 100 }, { name: "a-charlie", sender: CHARLIE, ts: 100 });
    expect(order).toEqual(["a-charlie", "z-bob"]);
    expect(winner).toBe("z-bob");
  });

  it.each(["10", "11", "12"])("v%s: at equal power and timestamp the smaller reference-hash id comes first", async (version) => {
    const { set, winner, order } = await race(version, { name: "bob", sender: BOB, ts: 100 }, { name: "charlie", sender: CHARLIE, ts: 100 });
    const [first, second] = compareCodePoints(set.id("bob"), set.id("charlie")) < 0 ? ["bob", "charlie"] : ["charlie", "bob"];
    expect(order).toEqual([first, second]);
    expect(winner).toBe(second);
  });

  it("v11: auth chain order beats every tie-breaker: an event comes after the power events it cites", async () => {
    const set = new EventSet("11");
    const base = baseRoom(set);
    // Alice raises Charlie to 75 (PA, late timestamp); Charlie kicks Bob citing PA (early timestamp);
    // concurrently Bob (50) changes the join rules (earliest timestamp).
    set.add({ name: "PA", sender: ALICE, type: "m.room.power_levels", stateKey: "", content: { users: set.users({ [ALICE]: 100, [BOB]: 50, [CHARLIE]: 75 }) }, auth: baseAuth(ALICE), ts: 500 });
    set.add({ name: "KICK", sender: CHARLIE, type: "m.room.member", stateKey: BOB, content: { membership: "leave" }, auth: ["CREATE", "PA", "IM-charlie", "IM-bob"], ts: 10 });
    set.add({ name: "JB", sender: BOB, type: "m.room.join_rules", stateKey: "", content: { join_rule: "invite" }, auth: baseAuth(BOB), ts: 1 });
    const graph = new EventGraph(set.v, { loadEvents: set.loader() });
    const ids = ["PA", "KICK", "JB"].map((n) => set.id(n));
    await graph.loadAuthClosure(ids);
    // KICK has the earliest timestamp but needs PA first; JB (power 50) comes after Alice's PA (100) and after
    // KICK (Charlie at 75 by KICK's own auth events).
    expect(reverseTopologicalPowerOrder(graph, new Set(ids)).map((id) => set.nameOf(id))).toEqual(["PA", "KICK", "JB"]);
    const resolved = await set.resolve([set.state(...base, "PA", "KICK"), set.state(...base, "JB")]);
    // Bob was kicked before his join rules event is checked, so it fails.
    expect(set.named(resolved)).toMatchObject({ "m.room.join_rules|": "IJR", "m.room.power_levels|": "PA", [`m.room.member|${BOB}`]: "KICK" });
  });
});
