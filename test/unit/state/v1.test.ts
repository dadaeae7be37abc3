// State resolution v1 (room version 1): conflicts settled in passes (power levels, join rules, members,
// the rest) against the unconflicted state, with depth and sha1(event_id) ordering — including the
// known v1 weaknesses that v2 fixes, shown side by side with v2 on the same graphs.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ALICE, BOB, CHARLIE, EVELYN, EventSet, ZARA, baseAuth, baseRoom, changedSinceStart, expectedNamed, walkDag, type NodeSpec } from "./fixtures.ts";

const sha1 = (s: string) => createHash("sha1").update(s, "utf8").digest("hex");
const join = { membership: "join" };

describe("v1 on the classic graphs", () => {
  const offtopic = (set: EventSet): NodeSpec[] => [
    { name: "PA", sender: ALICE, type: "m.room.power_levels", stateKey: "", content: { users: { [ALICE]: 100, [BOB]: 50 } } },
    { name: "PB", sender: BOB, type: "m.room.power_levels", stateKey: "", content: { users: set.users({ [ALICE]: 100, [BOB]: 50, [CHARLIE]: 50 }) } },
    { name: "PC", sender: CHARLIE, type: "m.room.power_levels", stateKey: "", content: { users: set.users({ [ALICE]: 100, [BOB]: 50, [CHARLIE]: 0 }) } },
  ];
  const offtopicEdges = [
    ["END", "PC", "PB", "PA", "START"],
    ["END", "PA"],
  ];

  it("offtopic power levels: v1 walks up from the shallowest and stops at Charlie's (unauthorised against PA); v2 replays PB", async () => {
    const v1 = await walkDag("1", offtopic, offtopicEdges);
    expect(v1.unauthorised).toEqual([]);
    expect(changedSinceStart(v1, ["PA"])).toEqual(expectedNamed(v1.set, ["PA"]));
    const v2 = await walkDag("2", offtopic, offtopicEdges);
    expect(changedSinceStart(v2, ["PC"])).toEqual(expectedNamed(v2.set, ["PC"]));
  });

  it("join rule evasion: in v1 a join only one side has is not in conflict and survives the invite-only rule", async () => {
    const nodes = (): NodeSpec[] => [
      { name: "JR", sender: ALICE, type: "m.room.join_rules", stateKey: "", content: { join_rule: "invite" } },
      { name: "ME", sender: EVELYN, type: "m.room.member", stateKey: EVELYN, content: join },
    ];
    const edges = [
      ["END", "JR", "START"],
      ["END", "ME", "START"],
    ];
    const v1 = await walkDag("1", nodes, edges);
    expect(changedSinceStart(v1, ["JR", "ME"])).toEqual(expectedNamed(v1.set, ["JR", "ME"]));
    const v2 = await walkDag("2", nodes, edges);
    expect(changedSinceStart(v2, ["JR"])).toEqual(expectedNamed(v2.set, ["JR"]));
  });

  it("ban vs power levels: memberships are settled each on its own, so Alice's ban (checked without her own conflicted membership) is lost in v1 and kept in v2", async () => {
    const nodes = (): NodeSpec[] => [
      { name: "PA", sender: ALICE, type: "m.room.power_levels", stateKey: "", content: { users: { [ALICE]: 100, [BOB]: 50 } } },
      { name: "MA", sender: ALICE, type: "m.room.member", stateKey: ALICE, content: join },
      { name: "MB", sender: ALICE, type: "m.room.member", stateKey: BOB, content: { membership: "ban" } },
      { name: "PB", sender: BOB, type: "m.room.power_levels", stateKey: "", content: { users: { [ALICE]: 100, [BOB]: 50 } } },
    ];
    const edges = [
      ["END", "MB", "MA", "PA", "START"],
      ["END", "PB", "PA"],
    ];
    const v1 = await walkDag("1", nodes, edges);
    expect(v1.unauthorised).toEqual([]);
    expect(changedSinceStart(v1, ["PA", "MA", "IMB"])).toEqual(expectedNamed(v1.set, ["PA", "MA", "IMB"]));
    const v2 = await walkDag("2", nodes, edges);
    expect(changedSinceStart(v2, ["PA", "MA", "MB"])).toEqual(expectedNamed(v2.set, ["PA", "MA", "MB"]));
  });

  it("topic reset: a banned user's topic fails against the resolved membership", async () => {
    const topic = (name: string, sender: string): NodeSpec => ({ name, sender, type: "m.room.topic", stateKey: "", content: { topic: name } });
    const dag = await walkDag(
      "1",
      () => [
        topic("T1", ALICE),
        { name: "PA", sender: ALICE, type: "m.room.power_levels", stateKey: "", content: { users: { [ALICE]: 100, [BOB]: 50 } } },
        topic("T2", BOB),
        { name: "MB", sender: ALICE, type: "m.room.member", stateKey: BOB, content: { membership: "ban" } },
      ],
      [
        ["END", "MB", "T2", "PA", "T1", "START"],
        ["END", "T1"],
      ],
    );
    expect(changedSinceStart(dag, ["T1", "MB", "PA"])).toEqual(expectedNamed(dag.set, ["T1", "MB", "PA"]));
  });
});

describe("v1 ordering and auth", () => {
  function room() {
    const set = new EventSet("1");
    const base = [...baseRoom(set, { [ALICE]: 100, [BOB]: 50, [ZARA]: 0 })];
    const topic = (name: string, sender: string, depth: number, ts = 0) =>
      set.add({ name, sender, type: "m.room.topic", stateKey: "", content: { topic: name }, auth: baseAuth(sender), depth, ts });
    const resolve = (...names: string[]) => set.resolve(names.map((n) => set.state(...base, n)));
    return { set, base, topic, resolve };
  }

  it("other keys: the deepest candidate wins, whatever the timestamps (v2 would take the later one)", async () => {
    const { set, topic, resolve } = room();
    topic("deep", ALICE, 10, 100);
    topic("shallow", ALICE, 5, 200);
    expect(set.named(await resolve("deep", "shallow"))["m.room.topic|"]).toBe("deep");
  });

  it("other keys: at equal depth the lower sha1(event_id) wins", async () => {
    const { set, topic, resolve } = room();
    topic("x1", ALICE, 7);
    topic("x2", ALICE, 7);
    const expected = sha1(set.id("x1")) < sha1(set.id("x2")) ? "x1" : "x2";
    expect(set.named(await resolve("x1", "x2"))["m.room.topic|"]).toBe(expected);
    expect(set.named(await resolve("x2", "x1"))["m.room.topic|"]).toBe(expected);
  });

  it("other keys: an unauthorised deeper candidate gives way; when all fail, the shallowest stands", async () => {
    const { set, topic, resolve } = room();
    topic("zara-deep", ZARA, 10);
    topic("alice-shallow", ALICE, 5);
    expect(set.named(await resolve("zara-deep", "alice-shallow"))["m.room.topic|"]).toBe("alice-shallow");
    topic("zara-shallow", ZARA, 3);
    expect(set.named(await resolve("zara-deep", "zara-shallow"))["m.room.topic|"]).toBe("zara-shallow");
  });

  it("power levels: from the shallowest up, stopping at the first candidate the auth rules refuse", async () => {
    const { set, base } = room();
    const pl = (name: string, sender: string, users: Record<string, number>, depth: number) =>
      set.add({ name, sender, type: "m.room.power_levels", stateKey: "", content: { users, name }, auth: baseAuth(sender), depth });
    pl("P1", ALICE, { [ALICE]: 100, [BOB]: 50, [ZARA]: 0 }, 5);
    pl("P2", BOB, { [ALICE]: 100, [BOB]: 50, [ZARA]: 0, [CHARLIE]: 75 }, 6); // above Bob's own level: refused
    pl("P3", ALICE, { [ALICE]: 100, [BOB]: 60, [ZARA]: 0 }, 7);
    const resolved = await set.resolve(["P1", "P2", "P3"].map((n) => set.state(...base, n)));
    expect(set.named(resolved)["m.room.power_levels|"]).toBe("P1");
    // Without Bob's, the walk reaches P3.
    const resolved2 = await set.resolve(["P1", "P3"].map((n) => set.state(...base, n)));
    expect(set.named(resolved2)["m.room.power_levels|"]).toBe("P3");
  });

  it("a key only some sets have is not in conflict, and a candidate that cannot be loaded drops out", async () => {
    const { set, base, topic } = room();
    topic("zara-topic", ZARA, 9); // would fail auth
    topic("lost", ALICE, 10);
    const sets = [set.state(...base, "zara-topic"), set.state(...base, "lost")];
    const resolved = await set.resolve(sets, { loadEvents: set.loader({ hide: ["lost"] }) });
    // With only one loadable candidate left the key is not in conflict: no auth check (as Synapse).
    expect(set.named(resolved)["m.room.topic|"]).toBe("zara-topic");
    const onlyOne = await set.resolve([set.state(...base), set.state(...base, "zara-topic")]);
    expect(set.named(onlyOne)["m.room.topic|"]).toBe("zara-topic");
  });

  it("a rejected candidate never wins, and a rejected unconflicted event leaves the state", async () => {
    const { set, base, topic } = room();
    topic("good", ALICE, 5);
    topic("rejected", ALICE, 10);
    set.add({ name: "rejected-name", sender: ALICE, type: "m.room.name", stateKey: "", content: { name: "x" }, auth: baseAuth(ALICE) });
    const isRejected = (id: string) => id === set.id("rejected") || id === set.id("rejected-name");
    const resolved = await set.resolve([set.state(...base, "good", "rejected-name"), set.state(...base, "rejected", "rejected-name")], { isRejected });
    expect(set.named(resolved)["m.room.topic|"]).toBe("good");
    expect(set.named(resolved)["m.room.name|"]).toBeUndefined();
  });
});
