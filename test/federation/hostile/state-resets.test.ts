// Hostile servers, state resets (issue 40; the "Project Hydra" class, CVE-2025-49090 / CVE-2025-54315):
// a joined hostile server with two users (mallory, the target of alice's sanctions, and eve, an
// accomplice who stays in good standing) forks the room from old state — eve's events built on
// prev_events from before a ban, a kick, a demotion — events that pass at current state and so become
// forward extremities, making Weft resolve the old state against the new one. The fork must never win
// where the spec says it must not: the ban, the kick and the demotion hold, and mallory's events built on
// the fork are soft-failed. Room versions 2, 10, 11 (state resolution v2) and 12 (v2.1, creators
// privileged). Judged by what alice, a local member, sees. SQLite and PostgreSQL.
import { beforeAll, describe, expect, it } from "vitest";
import { backends } from "../../helpers/server.ts";
import { createRoom } from "../../helpers/rooms.ts";
import { hostileFixture, liveUntilSentinel, memberView, membershipOf, powerOf } from "../../helpers/hostile-server.ts";
import { stateKeyOf } from "../../../src/domain/store/state-groups.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const VERSIONS = ["2", "10", "11", "12"];

describe.each(backends())("state resets by a hostile server on %s", (backend) => {
  let eve: string;
  const f = hostileFixture(backend);

  beforeAll(async () => {
    eve = f.h.user("eve");
  });

  async function room(version: string): Promise<string> {
    const roomId = await createRoom(f.a, f.alice, { preset: "public_chat", room_version: version });
    await f.h.join(roomId, "mallory");
    await f.h.join(roomId, "eve");
    return roomId;
  }
  const view = (roomId: string) => memberView(f.a, f.alice.access_token, roomId);
  const tip = async (roomId: string) => (await f.a.hs.services.rooms.events.extremities(roomId))[0]!;
  const put = async (roomId: string, type: string, content: unknown, stateKey = "") => {
    const res = await f.a.call("PUT", `${V3}/rooms/${enc(roomId)}/state/${type}/${enc(stateKey)}`, { token: f.alice.access_token, body: content });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  };
  /** Power levels with `users` (alice at 100 unless v12, where she is a privileged creator). */
  const setPower = async (roomId: string, version: string, users: Record<string, number>) => {
    const pl = (await view(roomId)).state.get(stateKeyOf("m.room.power_levels", ""))!.content;
    return put(roomId, "m.room.power_levels", { ...pl, users: version === "12" ? users : { [f.alice.user_id]: 100, ...users } });
  };
  /** eve's message on `prev` (old state): it passes at current state too, so it becomes a forward extremity. */
  const eveForks = async (roomId: string, prev: string[], ts?: number) => {
    const m = await f.h.craft(roomId, { type: "m.room.message", sender: eve, content: { msgtype: "m.text", body: "fork" } }, { prev, ...(ts !== undefined ? { edit: (p) => void (p.origin_server_ts = ts) } : {}) });
    expect((await f.h.send([m.pdu])).json).toEqual({ pdus: { [m.eventId]: {} } });
    const stored = (await f.a.hs.services.rooms.events.get(m.eventId))!;
    expect([stored.rejectedReason, stored.softFailed], "eve's fork is accepted").toEqual([null, false]);
    return m.eventId;
  };
  /** mallory builds on the fork: the state before it is the old one, current state refuses it. */
  const malloryOnFork = async (roomId: string, fork: string) => {
    const m = await f.h.craft(roomId, { type: "m.room.topic", stateKey: "", sender: f.mallory, content: { topic: "mallory rules" } }, { prev: [fork] });
    await f.h.send([m.pdu]);
    const stored = await f.a.hs.services.rooms.events.get(m.eventId);
    expect(stored === undefined || stored.softFailed || stored.rejectedReason !== null).toBe(true);
    return m.eventId;
  };

  it("a fork from before a ban does not undo the ban", async () => {
    for (const version of VERSIONS) {
      const roomId = await room(version);
      const beforeBan = await tip(roomId);
      await put(roomId, "m.room.member", { membership: "ban" }, f.mallory);
      const fork = await eveForks(roomId, [beforeBan], 1);
      expect(await f.a.hs.services.rooms.events.extremities(roomId), version).toContain(fork);
      const attack = await malloryOnFork(roomId, fork);
      const v = await view(roomId);
      expect(membershipOf(v, f.mallory), version).toBe("ban");
      expect(v.state.get(stateKeyOf("m.room.topic", ""))?.content.topic, version).not.toBe("mallory rules");
      expect(await liveUntilSentinel(f.a, f.alice.access_token, roomId), version).not.toContain(attack);
    }
  }, 120_000);

  it("a fork from before a demotion does not restore the demoted user's power", async () => {
    for (const version of VERSIONS) {
      const roomId = await room(version);
      await setPower(roomId, version, { [f.mallory]: 50 });
      const whilePowerful = await tip(roomId);
      await setPower(roomId, version, {});
      const fork = await eveForks(roomId, [whilePowerful], 1);
      await malloryOnFork(roomId, fork);
      const v = await view(roomId);
      expect(powerOf(v, f.mallory), version).toBe(0);
      expect(v.state.get(stateKeyOf("m.room.topic", ""))?.content.topic, version).not.toBe("mallory rules");
    }
  }, 120_000);

  it("a fork from before a kick and demotion restores neither the membership nor the power", async () => {
    for (const version of VERSIONS) {
      const roomId = await room(version);
      await setPower(roomId, version, { [f.mallory]: 50 });
      const before = await tip(roomId);
      await put(roomId, "m.room.member", { membership: "leave" }, f.mallory);
      await setPower(roomId, version, {});
      await eveForks(roomId, [before], 1);
      const v = await view(roomId);
      expect(membershipOf(v, f.mallory), version).toBe("leave");
      expect(powerOf(v, f.mallory), version).toBe(0);
    }
  }, 120_000);

  it("a fork resetting the power levels to the room's first ones (eve on the creation state) changes nothing", async () => {
    for (const version of VERSIONS) {
      const roomId = await room(version);
      const first = (await view(roomId)).state;
      const created = first.get(stateKeyOf("m.room.power_levels", ""))!.event_id;
      const eveJoined = first.get(stateKeyOf("m.room.member", eve))!.event_id;
      await setPower(roomId, version, { [eve]: 0, "@bob:example.org": 75 });
      const after = (await view(roomId)).state.get(stateKeyOf("m.room.power_levels", ""))!.event_id;
      // eve's fork builds on her join, citing the first power levels among its auth events.
      const fork = await eveForks(roomId, [eveJoined], 1);
      expect(await f.a.hs.services.rooms.events.extremities(roomId), version).toContain(fork);
      const v = await view(roomId);
      expect(v.state.get(stateKeyOf("m.room.power_levels", ""))!.event_id, version).toBe(after);
      expect(v.state.get(stateKeyOf("m.room.power_levels", ""))!.event_id, version).not.toBe(created);
      expect(powerOf(v, "@bob:example.org"), version).toBe(75);
    }
  }, 120_000);

  it("Hydra-style: mallory's soft-failed topic made a tip by eve building on it does not take effect", async () => {
    for (const version of VERSIONS) {
      const roomId = await room(version);
      await setPower(roomId, version, { [f.mallory]: 50 });
      const whilePowerful = await tip(roomId);
      await put(roomId, "m.room.topic", { topic: "alice's topic" });
      await setPower(roomId, version, {});
      // mallory's topic on the old state (soft-failed), with an old timestamp to win any tie-break...
      const t = await f.h.craft(roomId, { type: "m.room.topic", stateKey: "", sender: f.mallory, content: { topic: "mallory rules" } }, { prev: [whilePowerful], edit: (p) => void (p.origin_server_ts = 2) });
      await f.h.send([t.pdu]);
      expect((await f.a.hs.services.rooms.events.get(t.eventId))!.softFailed, version).toBe(true);
      // ...then eve, in good standing, builds on it: her message is accepted and the fork is a tip.
      const fork = await eveForks(roomId, [t.eventId], 3);
      const v = await view(roomId);
      expect(v.state.get(stateKeyOf("m.room.topic", ""))!.content.topic, version).toBe("alice's topic");
      expect(powerOf(v, f.mallory), version).toBe(0);
      expect(await f.a.hs.services.rooms.events.extremities(roomId), version).toContain(fork);
    }
  }, 120_000);
});

// MSC4297 problem B ("Project Hydra") driven by a hostile server: a /state_ids answer that lies. alice
// gives mallory 50 (P0), then takes it back and makes eve a moderator (P1); eve adds bob (P2); alice sets
// the topic on top. dave, a new user of the hostile server, joins after eve's message on P2 (a message Weft is
// never sent) and changes his name; asked for the state at that message, the hostile server answers with
// P0 in the power levels' place. Weft resolves that state against its own. P1 lies in both auth chains: state
// resolution v2 (room 11) never replays it, so eve's P2 fails against P0 and the room falls back to P0 —
// mallory's 50 back (the published weakness, what the spec's v2 says); v2.1 (room 12) replays the
// conflicted state subgraph (P0 → P1 → P2) from an empty state and P2 stands.
describe.each(backends())("state resolution v2 against v2.1 under a lying /state_ids on %s", (backend) => {
  const f = hostileFixture(backend);
  const view = (roomId: string) => memberView(f.a, f.alice.access_token, roomId);
  const put = async (roomId: string, type: string, content: unknown, stateKey = "") => {
    const res = await f.a.call("PUT", `${V3}/rooms/${enc(roomId)}/state/${type}/${enc(stateKey)}`, { token: f.alice.access_token, body: content });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  };
  const PL = stateKeyOf("m.room.power_levels", "");

  async function hydraB(version: string) {
    const eve = f.h.user("eve");
    const dave = f.h.user("dave");
    const bob = "@bob:example.org";
    const roomId = await createRoom(f.a, f.alice, { preset: "public_chat", room_version: version });
    await f.h.join(roomId, "mallory");
    await f.h.join(roomId, "eve");
    const first = (await view(roomId)).state.get(PL)!.content;
    // Moderators (50) may change the power levels here.
    const base = { ...first, events: { ...first.events, "m.room.power_levels": 50 } };
    const users = (u: Record<string, number>) => (version === "12" ? u : { [f.alice.user_id]: 100, ...u });
    const p0 = await put(roomId, "m.room.power_levels", { ...base, users: users({ [f.mallory]: 50 }) });
    const p1 = await put(roomId, "m.room.power_levels", { ...base, users: users({ [eve]: 50 }) });
    const p2 = await f.h.craft(roomId, { type: "m.room.power_levels", stateKey: "", sender: eve, content: { ...base, users: users({ [eve]: 50, [bob]: 50 }) } });
    expect((await f.h.send([p2.pdu])).json).toEqual({ pdus: { [p2.eventId]: {} } });
    const storedP2 = (await f.a.hs.services.rooms.events.get(p2.eventId))!;
    expect([storedP2.rejectedReason, storedP2.softFailed], "eve's P2 is accepted").toEqual([null, false]);
    expect((await view(roomId)).state.get(PL)!.event_id).toBe(p2.eventId);
    const afterP2 = await f.a.hs.services.rooms.stateGroups.get((await f.a.hs.services.rooms.events.get(p2.eventId))!.stateGroup!);
    await put(roomId, "m.room.topic", { topic: "after P2" });
    const daveKey = stateKeyOf("m.room.member", dave);
    // eve's message on P2 (never sent, its state asked for), dave's join on it (given by get_missing_events).
    const me0 = await f.h.craft(roomId, { type: "m.room.message", sender: eve, content: { msgtype: "m.text", body: "unseen" } }, { prev: [p2.eventId], authState: afterP2 });
    const me = await f.h.craft(roomId, { type: "m.room.member", stateKey: dave, sender: dave, content: { membership: "join" } }, { prev: [me0.eventId], authState: afterP2 });
    const me2 = await f.h.craft(roomId, { type: "m.room.member", stateKey: dave, sender: dave, content: { membership: "join", displayname: "dave++" } }, { prev: [me.eventId], authState: new Map([...afterP2, [daveKey, me.eventId]]) });
    const lie = new Map(afterP2);
    lie.set(PL, p0);
    let lied = 0;
    f.h.plan = (req) => {
      if (req.path.includes("/get_missing_events/")) return { status: 200, json: { events: [me.pdu] } };
      if (req.path.includes("/state_ids/") && req.query.get("event_id") === me0.eventId) {
        lied++;
        return { status: 200, json: { pdu_ids: [...lie.values()], auth_chain_ids: [...new Set([...afterP2.values(), p0, p1])] } };
      }
      return "default";
    };
    const res = await f.h.send([me2.pdu]);
    f.h.plan = () => "default";
    expect(res.json, version).toEqual({ pdus: { [me2.eventId]: {} } });
    expect(lied, version).toBeGreaterThan(0);
    const extremities = await f.a.hs.services.rooms.events.extremities(roomId);
    expect(extremities, version).toContain(me2.eventId);
    expect(extremities.length, version).toBe(2);
    const v = await view(roomId);
    return { roomId, p0, p2: p2.eventId, eve, bob, dave, v };
  }

  it("room 11 (v2): the lie resets the power levels to P0 — mallory regains 50, eve and bob lose theirs", async () => {
    const { p0, eve, bob, dave, v } = await hydraB("11");
    expect(v.state.get(PL)!.event_id).toBe(p0);
    expect(powerOf(v, f.mallory)).toBe(50);
    expect([powerOf(v, eve), powerOf(v, bob)]).toEqual([0, 0]);
    expect(membershipOf(v, dave)).toBe("join");
    expect(v.state.get(stateKeyOf("m.room.topic", ""))?.content.topic).toBe("after P2");
  }, 120_000);

  it("room 12 (v2.1): the conflicted state subgraph is replayed and eve's P2 stands — mallory stays at 0", async () => {
    const { p2, eve, bob, dave, v } = await hydraB("12");
    expect(v.state.get(PL)!.event_id).toBe(p2);
    expect(powerOf(v, f.mallory)).toBe(0);
    expect([powerOf(v, eve), powerOf(v, bob)]).toEqual([50, 50]);
    expect(membershipOf(v, dave)).toBe("join");
    expect(v.state.get(stateKeyOf("m.room.topic", ""))?.content.topic).toBe("after P2");
  }, 120_000);
});
