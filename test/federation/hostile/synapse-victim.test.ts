// Hostile servers against a live Synapse (issue 40): the same hostile server (hostile-server.ts, its
// `target` a Synapse) joins a room of Synapse's sam through Synapse's make_join/send_join and runs a
// sample of the catalogue's attacks — a bad signature, a bad content hash, a power-level escalation, a
// banned user's message on the state before the ban (soft failure), typing for a user of the victim —
// asserting of what sam sees exactly what the catalogue asserts of what Weft's alice sees, so the
// catalogue's expectations are grounded in a trusted implementation. The Weft server only lends its
// event builder. Synapse on SQLite.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFederatedServer, type FederatedServer } from "../../helpers/federation.ts";
import { startSynapse, type SynapseServer } from "../../helpers/synapse.ts";
import { startHostileServer, withBadContentHash, withBadSignature, type HostileServer } from "../../helpers/hostile-server.ts";
import { eventually } from "../../helpers/federation-peer.ts";
import { stateKeyOf } from "../../../src/domain/store/state-groups.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe("hostile server attacks on a live Synapse", () => {
  let builder: FederatedServer;
  let syn: SynapseServer;
  let h: HostileServer;
  let sam: { user_id: string; access_token: string };
  let mallory: string;

  beforeAll(async () => {
    [builder, syn] = await Promise.all([startFederatedServer(), startSynapse()]);
    h = await startHostileServer(builder, { target: { baseUrl: syn.federationUrl, serverName: syn.serverName } });
    sam = await syn.register("sam", "password");
    mallory = h.user("mallory");
  }, 120_000);
  afterAll(async () => {
    await Promise.all([builder?.close(), syn?.close(), h?.close()]);
  });

  async function room(version = "10"): Promise<string> {
    const created = await syn.call("POST", `${V3}/createRoom`, { token: sam.access_token, body: { preset: "public_chat", room_version: version } });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    await h.join(created.json.room_id, "mallory");
    return created.json.room_id;
  }
  const timeline = async (roomId: string): Promise<any[]> => {
    const res = await syn.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=100`, { token: sam.access_token });
    expect(res.status).toBe(200);
    return res.json.chunk;
  };
  const state = async (roomId: string): Promise<Map<string, any>> => {
    const res = await syn.call("GET", `${V3}/rooms/${enc(roomId)}/state`, { token: sam.access_token });
    return new Map((res.json as any[]).map((e) => [stateKeyOf(e.type, e.state_key), e]));
  };
  const say = (roomId: string, body: string, prev?: string[]) => h.craft(roomId, { type: "m.room.message", sender: mallory, content: { msgtype: "m.text", body } }, prev ? { prev } : {});
  /** Waits for sam to see an honest sentinel of mallory's, sent after the attack. */
  const sentinel = async (roomId: string, prev: string, sender = mallory) => {
    const s = await h.craft(roomId, { type: "m.room.message", sender, content: { msgtype: "m.text", body: "sentinel" } }, { prev: [prev] });
    await h.send([s.pdu]);
    await eventually(async () => (await timeline(roomId)).some((e) => e.event_id === s.eventId), "the sentinel in Synapse's timeline", 20_000);
  };

  it("a bad signature: dropped — sam never sees it", async () => {
    const roomId = await room();
    const m = await say(roomId, "forged");
    const res = await h.send([withBadSignature(m, h.serverName)]);
    expect(res.status).toBe(200);
    await sentinel(roomId, h.joined.get(roomId)!.tip);
    expect((await timeline(roomId)).map((e) => e.event_id)).not.toContain(m.eventId);
  }, 60_000);

  it("a bad content hash: stored redacted — sam sees it with its content stripped", async () => {
    const roomId = await room();
    const m = await say(roomId, "the signed body");
    await h.send([withBadContentHash(m, { msgtype: "m.text", body: "changed after signing" })]);
    const shown = await eventually(async () => (await timeline(roomId)).find((e) => e.event_id === m.eventId), "the event in Synapse's timeline", 20_000);
    expect(shown.content).toEqual({});
  }, 60_000);

  it("power-level escalation by a user without power: rejected — sam's room keeps its power levels", async () => {
    const roomId = await room();
    const before = (await state(roomId)).get(stateKeyOf("m.room.power_levels", ""))!;
    const pl = await h.craft(roomId, { type: "m.room.power_levels", stateKey: "", sender: mallory, content: { ...before.content, users: { ...before.content.users, [mallory]: 100 } } });
    await h.send([pl.pdu]);
    await sentinel(roomId, pl.eventId);
    const after = (await state(roomId)).get(stateKeyOf("m.room.power_levels", ""))!;
    expect(after.event_id).toBe(before.event_id);
    expect((await timeline(roomId)).map((e) => e.event_id)).not.toContain(pl.eventId);
  }, 60_000);

  it("a banned user's message on the state before the ban: soft-failed — sam never sees it, mallory stays banned", async () => {
    const roomId = await room();
    // eve of the hostile server stays in the room (Synapse keeps sending it the room's events).
    await h.join(roomId, "eve");
    const beforeBan = h.joined.get(roomId)!.tip;
    const ban = await syn.call("POST", `${V3}/rooms/${enc(roomId)}/ban`, { token: sam.access_token, body: { user_id: mallory } });
    expect(ban.status, JSON.stringify(ban.json)).toBe(200);
    const m = await say(roomId, "you missed me", [beforeBan]);
    expect((await h.send([m.pdu])).status).toBe(200);
    // sam's own message after: it must not build on the soft-failed one (and sam never sees it).
    const next = await syn.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/n${Math.random()}`, { token: sam.access_token, body: { msgtype: "m.text", body: "next" } });
    expect(next.status).toBe(200);
    await eventually(() => h.events.has(next.json.event_id), "sam's message reaching the hostile server", 20_000);
    expect(h.events.get(next.json.event_id)!.prev_events).not.toContain(m.eventId);
    expect((await timeline(roomId)).map((e) => e.event_id)).not.toContain(m.eventId);
    expect((await state(roomId)).get(stateKeyOf("m.room.member", mallory))!.content.membership).toBe("ban");
  }, 60_000);

  it("a fork from before a ban (eve's message on the old state) does not undo the ban", async () => {
    const roomId = await room();
    await h.join(roomId, "eve");
    const beforeBan = h.joined.get(roomId)!.tip;
    const ban = await syn.call("POST", `${V3}/rooms/${enc(roomId)}/ban`, { token: sam.access_token, body: { user_id: mallory } });
    expect(ban.status, JSON.stringify(ban.json)).toBe(200);
    const fork = await h.craft(roomId, { type: "m.room.message", sender: h.user("eve"), content: { msgtype: "m.text", body: "fork" } }, { prev: [beforeBan] });
    await h.send([fork.pdu]);
    // The fork is accepted (eve is in good standing): sam sees it, and the ban holds.
    await eventually(async () => (await timeline(roomId)).some((e) => e.event_id === fork.eventId), "eve's fork in Synapse's timeline", 20_000);
    expect((await state(roomId)).get(stateKeyOf("m.room.member", mallory))!.content.membership).toBe("ban");
    const onFork = await h.craft(roomId, { type: "m.room.topic", stateKey: "", sender: mallory, content: { topic: "mallory rules" } }, { prev: [fork.eventId] });
    await h.send([onFork.pdu]);
    await sentinel(roomId, fork.eventId, h.user("eve"));
    expect((await state(roomId)).get(stateKeyOf("m.room.topic", ""))?.content.topic).not.toBe("mallory rules");
    expect((await timeline(roomId)).map((e) => e.event_id)).not.toContain(onFork.eventId);
  }, 60_000);

  it("prev_events naming another room's events (where mallory is an admin): sam's room keeps its own state (v10, v12)", async () => {
    for (const version of ["10", "12"]) {
    const roomId = await room(version);
    const other = await room(version);
    const pl = await syn.call("PUT", `${V3}/rooms/${enc(other)}/state/m.room.power_levels/`, { token: sam.access_token, body: { users: version === "12" ? { [mallory]: 100 } : { [sam.user_id]: 100, [mallory]: 100 } } });
    expect(pl.status, JSON.stringify(pl.json)).toBe(200);
    await eventually(() => h.events.has(pl.json.event_id), "the other room's power levels reaching the hostile server", 20_000);
    const before = await state(roomId);
    const m = await h.craft(roomId, { type: "m.room.message", sender: mallory, content: { msgtype: "m.text", body: "bridging rooms" } }, { prev: [h.joined.get(roomId)!.tip, pl.json.event_id] });
    await h.send([m.pdu]);
    await sentinel(roomId, h.joined.get(roomId)!.tip);
    const after = await state(roomId);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    for (const [k, e] of before) expect(after.get(k)!.event_id, `${version} ${k}`).toBe(e.event_id);
    expect((await timeline(roomId)).map((e) => e.event_id), version).not.toContain(m.eventId);
    }
  }, 90_000);

  it("typing for a user of the victim (sam made to type): never shown", async () => {
    const roomId = await room();
    const first = await syn.call("GET", `${V3}/sync?timeout=0`, { token: sam.access_token });
    let since = first.json.next_batch;
    await h.send([], [
      { edu_type: "m.typing", content: { room_id: roomId, user_id: sam.user_id, typing: true } },
      { edu_type: "m.typing", content: { room_id: roomId, user_id: mallory, typing: true } },
    ]);
    const typers: string[] = [];
    await eventually(async () => {
      const res = await syn.call("GET", `${V3}/sync?since=${enc(since)}&timeout=2000`, { token: sam.access_token });
      since = res.json.next_batch;
      for (const e of res.json.rooms?.join?.[roomId]?.ephemeral?.events ?? []) if (e.type === "m.typing") typers.push(...e.content.user_ids);
      return typers.includes(mallory);
    }, "mallory typing in sam's /sync", 20_000);
    expect(typers).not.toContain(sam.user_id);
  }, 60_000);
});
