// Mainline ordering (state resolution v2, step 3): events sorted by where their power levels chain meets
// the mainline of the resolved power levels (earlier first, none at all first of all), then by
// origin_server_ts, then by event_id.
import { describe, expect, it } from "vitest";
import { compareCodePoints } from "../../../src/domain/canonical-json.ts";
import { EventGraph } from "../../../src/domain/state/event-graph.ts";
import { mainlineOrder } from "../../../src/domain/state/mainline.ts";
import { ALICE, BOB, EventSet, baseAuth, baseRoom } from "./fixtures.ts";

async function setup(version: string) {
  const set = new EventSet(version);
  baseRoom(set);
  const levels = set.users({ [ALICE]: 100, [BOB]: 50 });
  const pl = (name: string, parent: string) =>
    set.add({ name, sender: ALICE, type: "m.room.power_levels", stateKey: "", content: { users: levels, name }, auth: ["CREATE", parent, "IMA"] });
  pl("P1", "IPOWER");
  pl("P2", "P1");
  pl("PX", "P1"); // a side branch: not on P2's mainline, but its parent is
  const topic = (name: string, auth: string[], ts: number) =>
    set.add({ name, sender: BOB, type: "m.room.topic", stateKey: "", content: { topic: name }, auth, ts });
  return { set, pl, topic };
}

async function order(set: EventSet, names: string[], powerLevels: string | undefined): Promise<string[]> {
  const graph = new EventGraph(set.v, { loadEvents: set.loader() });
  const ids = names.map((n) => set.id(n));
  await graph.loadAuthClosure([...ids, ...(powerLevels ? [set.id(powerLevels)] : [])]);
  return mainlineOrder(graph, ids, powerLevels && set.id(powerLevels)).map((id) => set.nameOf(id));
}

describe("mainline ordering", () => {
  it.each(["2", "11", "12"])("v%s: the earlier an event's power levels sit on the mainline, the earlier it comes", async (version) => {
    const { set, topic } = await setup(version);
    topic("t-new", ["CREATE", "P2", "IM-bob"], 1);
    topic("t-mid", ["CREATE", "P1", "IM-bob"], 3);
    topic("t-side", ["CREATE", "PX", "IM-bob"], 4);
    topic("t-old", baseAuth(BOB), 5);
    topic("t-none", ["CREATE", "IM-bob"], 6);
    // Positions from P2: t-new 0, t-mid 1, t-side 1 (through PX's parent P1), t-old 2, t-none ∞.
    expect(await order(set, ["t-new", "t-mid", "t-side", "t-old", "t-none"], "P2")).toEqual(["t-none", "t-old", "t-mid", "t-side", "t-new"]);
    // Based on PX instead, P2 is off the mainline but meets it at P1.
    expect(await order(set, ["t-new", "t-mid", "t-side", "t-old", "t-none"], "PX")).toEqual(["t-none", "t-old", "t-new", "t-mid", "t-side"]);
  });

  it.each(["2", "11"])("v%s: without a resolved power levels event every position is infinite: timestamps decide", async (version) => {
    const { set, topic } = await setup(version);
    topic("a", ["CREATE", "P2", "IM-bob"], 30);
    topic("b", baseAuth(BOB), 10);
    topic("c", ["CREATE", "IM-bob"], 20);
    expect(await order(set, ["a", "b", "c"], undefined)).toEqual(["b", "c", "a"]);
  });

  it("v2: at the same position, origin_server_ts then event_id decide", async () => {
    const { set, topic } = await setup("2");
    topic("z-early", ["CREATE", "P1", "IM-bob"], 5);
    topic("b-late", ["CREATE", "P1", "IM-bob"], 9);
    topic("a-late", ["CREATE", "P1", "IM-bob"], 9);
    expect(await order(set, ["b-late", "z-early", "a-late"], "P2")).toEqual(["z-early", "a-late", "b-late"]);
  });

  it("v11: at the same position and timestamp, the smaller reference-hash id comes first", async () => {
    const { set, topic } = await setup("11");
    topic("x", ["CREATE", "P1", "IM-bob"], 9);
    topic("y", ["CREATE", "P1", "IM-bob"], 9);
    const expected = compareCodePoints(set.id("x"), set.id("y")) < 0 ? ["x", "y"] : ["y", "x"];
    expect(await order(set, ["y", "x"], "P2")).toEqual(expected);
    expect(await order(set, ["x", "y"], "P2")).toEqual(expected);
  });
});
