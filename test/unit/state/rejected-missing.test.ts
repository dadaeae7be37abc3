// Rejected and missing events in state resolution v2/v2.1: a rejected event never enters the resolved
// state and never authorises another during the iterative auth checks; an event that cannot be loaded is
// ignored (and authorises nothing).
import { describe, expect, it } from "vitest";
import { ALICE, BOB, EventSet, baseAuth, baseRoom } from "./fixtures.ts";

const VERSIONS = ["2", "11", "12"];

function topics(version: string) {
  const set = new EventSet(version);
  const base = baseRoom(set);
  set.add({ name: "TA", sender: ALICE, type: "m.room.topic", stateKey: "", content: { topic: "alice" }, auth: baseAuth(ALICE), ts: 100 });
  set.add({ name: "TB", sender: BOB, type: "m.room.topic", stateKey: "", content: { topic: "bob" }, auth: baseAuth(BOB), ts: 200 });
  const sets = [set.state(...base, "TA"), set.state(...base, "TB")];
  return { set, base, sets };
}

describe("rejected events", () => {
  it.each(VERSIONS)("v%s: without rejections the later topic wins (the baseline)", async (version) => {
    const { set, sets } = topics(version);
    expect(set.named(await set.resolve(sets))["m.room.topic|"]).toBe("TB");
  });

  it.each(VERSIONS)("v%s: a rejected conflicted event never enters the state, even when it would pass auth", async (version) => {
    const { set, sets } = topics(version);
    const resolved = await set.resolve(sets, { isRejected: (id) => id === set.id("TB") });
    expect(set.named(resolved)["m.room.topic|"]).toBe("TA");
  });

  it.each(VERSIONS)("v%s: a rejected auth event authorises nothing, and a rejected unconflicted event leaves the state", async (version) => {
    const { set, sets } = topics(version);
    const bobJoin = set.id("IM-bob");
    const resolved = await set.resolve(sets, { isRejected: (id) => id === bobJoin });
    // Bob's topic needs his membership: the state's copy and his own auth event are the same rejected join.
    expect(set.named(resolved)["m.room.topic|"]).toBe("TA");
    expect(resolved.has(`m.room.member\u0000${BOB}`)).toBe(false);
    expect(resolved.get(`m.room.member\u0000${ALICE}`)).toBe(set.id("IMA"));
  });

  it.each(VERSIONS)("v%s: a rejected power event cannot reorder or block the others", async (version) => {
    const { set, base } = topics(version);
    // A rejected ban of Bob on one side would make Bob's topic fail if it were applied.
    set.add({ name: "BAN", sender: ALICE, type: "m.room.member", stateKey: BOB, content: { membership: "ban" }, auth: [...baseAuth(ALICE), "IM-bob"], ts: 50 });
    const sets = [set.state(...base, "TA", "BAN"), set.state(...base, "TB")];
    const banned = await set.resolve(sets);
    expect(set.named(banned)["m.room.topic|"]).toBe("TA");
    const rejected = await set.resolve(sets, { isRejected: (id) => id === set.id("BAN") });
    expect(set.named(rejected)["m.room.topic|"]).toBe("TB");
    expect(set.named(rejected)[`m.room.member|${BOB}`]).toBe("IM-bob");
  });
});

describe("events that cannot be loaded", () => {
  it.each(VERSIONS)("v%s: a conflicted event the loader does not have is ignored", async (version) => {
    const { set, sets } = topics(version);
    const resolved = await set.resolve(sets, { loadEvents: set.loader({ hide: ["TB"] }) });
    expect(set.named(resolved)["m.room.topic|"]).toBe("TA");
  });

  it.each(VERSIONS)("v%s: a missing auth event authorises nothing; unconflicted entries stay as given", async (version) => {
    const { set, sets } = topics(version);
    const resolved = await set.resolve(sets, { loadEvents: set.loader({ hide: ["IM-bob"] }) });
    expect(set.named(resolved)["m.room.topic|"]).toBe("TA");
    expect(resolved.get(`m.room.member\u0000${BOB}`)).toBe(set.id("IM-bob"));
  });

  it.each(VERSIONS)("v%s: every event missing: the conflicted key is dropped, the rest kept", async (version) => {
    const { set, sets } = topics(version);
    const resolved = await set.resolve(sets, { loadEvents: async () => new Map() });
    expect(resolved.has("m.room.topic\u0000")).toBe(false);
    expect(resolved.get("m.room.create\u0000")).toBe(set.id("CREATE"));
  });
});
