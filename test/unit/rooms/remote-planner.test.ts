// The remote planner (src/domain/rooms/pipeline/plan-remote.ts) on hand-built DAGs, no network: events
// from a made-up server "remote.test" (and this server's own, for a local member), signed with test keys
// the key ring knows, are received through receiveRemoteEvents and committed by the one commit(). A fork
// and its merge (identical states: the stub resolution suffices), a rejected event, a soft-failed one,
// outliers, a bad content hash (stored redacted), a bad signature (dropped); what clients see of each.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../../helpers/server.ts";
import { registerUser, type Session } from "../../helpers/users.ts";
import { Dag, TestKeyRing, localServer, remoteServer, type TestServerIdentity } from "../../helpers/dag.ts";
import type { Services } from "../../../src/domain/services.ts";
import { receiveRemoteEvents } from "../../../src/domain/rooms/receive.ts";
import { sendMessage } from "../../../src/domain/rooms/send.ts";
import { loadRoom } from "../../../src/domain/rooms/room-cache.ts";
import { prevEventIds } from "../../../src/domain/events/types.ts";
import { generateSigningKey } from "../../../src/domain/signing-key.ts";
import type { BuiltEvent } from "../../../src/domain/rooms/build-event.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("remote planner on %s", (backend) => {
  let t: TestServer;
  let s: Services;
  let carol: Session;
  let remote: TestServerIdentity;
  let local: TestServerIdentity;
  const heard: string[] = [];

  beforeAll(async () => {
    t = await startTestServer({ backend });
    s = t.hs.services;
    carol = await registerUser(t, "carol");
    remote = remoteServer("remote.test");
    local = localServer(s);
    s.keyRing = new TestKeyRing().add(remote.serverName, remote.key).add(local.serverName, local.key);
    s.rooms.notifier.onEvent((n) => heard.push(n.eventId));
  });
  afterAll(async () => {
    await t?.close();
  });

  const alice = () => remote.user("alice");
  const bob = () => remote.user("bob");

  /** A room on remote.test with alice (creator), bob and our carol joined, received in one batch. */
  async function newRoom(version: string): Promise<{ dag: Dag; tip: string }> {
    const dag = new Dag(s, version);
    const first = await dag.create(remote, alice());
    const bobJoin = await dag.member(remote, bob(), bob(), "join", [first[3]!.eventId]);
    const carolJoin = await dag.member(local, carol.user_id, carol.user_id, "join", [bobJoin.eventId]);
    const all = [...first, bobJoin, carolJoin];
    const out = await receiveRemoteEvents(s, dag.roomId, all.map((e) => ({ pdu: e.pdu })));
    expect(out).toEqual(all.map((e) => ({ status: "accepted", eventId: e.eventId })));
    return { dag, tip: carolJoin.eventId };
  }

  const receive = (roomId: string, ...events: BuiltEvent[]) => receiveRemoteEvents(s, roomId, events.map((e) => ({ pdu: structuredClone(e.pdu) })));
  const timeline = async (roomId: string) =>
    (await s.rooms.events.page(roomId, { after: 0, upTo: await s.rooms.events.maxStreamOrdering(), dir: "f", limit: 100 })).map((e) => e.eventId);
  const extremities = async (roomId: string) => (await s.rooms.events.extremities(roomId)).sort();
  const getEvent = (roomId: string, id: string) => t.call("GET", `${V3}/rooms/${enc(roomId)}/event/${enc(id)}`, { token: carol.access_token });
  const syncTimeline = async (roomId: string) => {
    const res = await t.call("GET", `${V3}/sync?timeout=0`, { token: carol.access_token });
    expect(res.status).toBe(200);
    return res.json.rooms.join[roomId] as { timeline: { events: { event_id: string; content: Record<string, unknown> }[] }; state: { events: { event_id: string }[] } };
  };

  for (const version of ["1", "10", "12"]) {
    it(`v${version}: a fork of two branches and their merge; a local event is built on both tips`, async () => {
      const { dag, tip } = await newRoom(version);
      const roomId = dag.roomId;
      const a = await dag.message(remote, alice(), "branch a", [tip]);
      const b = await dag.message(remote, bob(), "branch b", [tip]);
      expect(await receive(roomId, a)).toEqual([{ status: "accepted", eventId: a.eventId }]);
      expect(await receive(roomId, b)).toEqual([{ status: "accepted", eventId: b.eventId }]);
      expect(await extremities(roomId)).toEqual([a.eventId, b.eventId].sort());
      // The same state on both branches: current state is it, and the snapshot knows the room has forked.
      const room = (await loadRoom(s, roomId))!;
      expect(room.extremities.sort()).toEqual([a.eventId, b.eventId].sort());
      expect(await receive(roomId, a)).toEqual([{ status: "duplicate", eventId: a.eventId }]);

      // A local send builds on current state and every forward extremity.
      const { event_id: mine } = await sendMessage(s, { userId: carol.user_id, deviceId: carol.device_id, isGuest: false, isAdmin: false, accessTokenId: null }, roomId, "m.room.message", "t1", { msgtype: "m.text", body: "local" });
      const stored = (await s.rooms.events.get(mine))!;
      expect(prevEventIds(stored.pdu).sort()).toEqual([a.eventId, b.eventId].sort());
      expect(await extremities(roomId)).toEqual([mine]);

      // A remote merge of the two branches (it has not seen ours yet), then one on top of everything.
      const merge = await dag.message(remote, alice(), "merge", [a.eventId, b.eventId]);
      expect(await receive(roomId, merge)).toEqual([{ status: "accepted", eventId: merge.eventId }]);
      expect(await extremities(roomId)).toEqual([mine, merge.eventId].sort());
      const mergedState = await s.rooms.stateGroups.get((await s.rooms.events.get(merge.eventId))!.stateGroup!);
      expect(mergedState).toEqual(await s.rooms.stateGroups.get((await s.rooms.events.get(a.eventId))!.stateGroup!));
      dag.adopt(stored.eventId, stored.pdu);
      const top = await dag.message(remote, bob(), "top", [mine, merge.eventId]);
      expect(await receive(roomId, top)).toEqual([{ status: "accepted", eventId: top.eventId }]);
      expect(await extremities(roomId)).toEqual([top.eventId]);

      expect((await timeline(roomId)).slice(-5)).toEqual([a.eventId, b.eventId, mine, merge.eventId, top.eventId]);
      for (const id of [a.eventId, b.eventId, mine, merge.eventId, top.eventId]) expect(heard).toContain(id);
      const synced = await syncTimeline(roomId);
      expect(synced.timeline.events.map((e) => e.event_id).slice(-5)).toEqual([a.eventId, b.eventId, mine, merge.eventId, top.eventId]);
    });

    it(`v${version}: an event its auth events do not allow is rejected: stored, never state, never served or notified`, async () => {
      const { dag, tip } = await newRoom(version);
      const roomId = dag.roomId;
      // bob (power 0) names the room (needs 50); mallory, never joined, speaks.
      const name = await dag.event(remote, { type: "m.room.name", stateKey: "", sender: bob(), content: { name: "bob's" } }, [tip]);
      const mallory = await dag.message(remote, remote.user("mallory"), "hi", [tip]);
      const out = await receive(roomId, name, mallory);
      expect(out.map((o) => o.status)).toEqual(["rejected", "rejected"]);
      expect((out[0] as { reason: string }).reason).toMatch(/power/);
      for (const e of [name, mallory]) {
        const row = (await s.rooms.events.get(e.eventId))!;
        expect(row.rejectedReason).toMatch(/Auth rule/);
        expect(heard).not.toContain(e.eventId);
        expect((await getEvent(roomId, e.eventId)).status).toBe(404);
      }
      expect(await timeline(roomId)).not.toContain(name.eventId);
      expect(await extremities(roomId)).toEqual([tip]);
      expect((await loadRoom(s, roomId))!.state.has("m.room.name\u0000")).toBe(false);
      expect((await s.rooms.store.currentState(roomId)).has("m.room.name\u0000")).toBe(false);
      // A later event on top of the rejected one: the rejected event is not in the state before it.
      const next = await dag.message(remote, alice(), "after", [name.eventId]);
      expect(await receive(roomId, next)).toEqual([{ status: "accepted", eventId: next.eventId }]);
      expect((await s.rooms.stateGroups.get((await s.rooms.events.get(next.eventId))!.stateGroup!)).has("m.room.name\u0000")).toBe(false);
      // It is a tip beside the last accepted event it does not descend from.
      expect(await extremities(roomId)).toEqual([tip, next.eventId].sort());
    });

    it(`v${version}: an event its auth events allow but the state before it does not is rejected`, async () => {
      const { dag, tip } = await newRoom(version);
      const roomId = dag.roomId;
      const ban = await dag.member(remote, alice(), bob(), "ban", [tip]);
      expect(await receive(roomId, ban)).toEqual([{ status: "accepted", eventId: ban.eventId }]);
      // bob, banned, speaks after the ban citing his old join as auth event.
      const after = await dag.event(remote, { type: "m.room.message", sender: bob(), content: { msgtype: "m.text", body: "still here" } }, [ban.eventId], tip);
      const out = await receive(roomId, after);
      expect(out).toEqual([{ status: "rejected", eventId: after.eventId, reason: expect.stringMatching(/sender_not_joined|not joined/), rule: "state_before" }]);
      expect((await s.rooms.events.get(after.eventId))!.rejectedReason).toMatch(/not joined/);
      expect(await extremities(roomId)).toEqual([ban.eventId]);
      expect(heard).not.toContain(after.eventId);
    });

    it(`v${version}: an event allowed before a ban but not by current state is soft-failed`, async () => {
      const { dag, tip } = await newRoom(version);
      const roomId = dag.roomId;
      const ban = await dag.member(remote, alice(), bob(), "ban", [tip]);
      expect(await receive(roomId, ban)).toEqual([{ status: "accepted", eventId: ban.eventId }]);
      // bob speaks on the branch before his ban.
      const late = await dag.message(remote, bob(), "from before the ban", [tip]);
      expect(await receive(roomId, late)).toEqual([{ status: "soft_failed", eventId: late.eventId, rule: "current_state" }]);
      const row = (await s.rooms.events.get(late.eventId))!;
      expect([row.softFailed, row.rejectedReason, row.outlier, row.stateGroup !== null]).toEqual([true, null, false, true]);
      expect(await extremities(roomId)).toEqual([ban.eventId]);
      expect(heard).not.toContain(late.eventId);
      expect(await timeline(roomId)).not.toContain(late.eventId);
      expect((await getEvent(roomId, late.eventId)).status).toBe(404);
      expect((await syncTimeline(roomId)).timeline.events.map((e) => e.event_id)).not.toContain(late.eventId);
    });

    it(`v${version}: events whose prev_events have no known state, or given as outliers, are outliers`, async () => {
      const { dag, tip } = await newRoom(version);
      const roomId = dag.roomId;
      const unseen = await dag.message(remote, alice(), "never sent to us", [tip]);
      const orphan = await dag.message(remote, alice(), "after the unseen one", [unseen.eventId]);
      const state = await dag.event(remote, { type: "m.room.topic", stateKey: "", sender: alice(), content: { topic: "t" } }, [tip]);
      const out = await receiveRemoteEvents(s, roomId, [{ pdu: structuredClone(orphan.pdu) }, { pdu: structuredClone(state.pdu), outlier: true }]);
      expect(out).toEqual([{ status: "outlier", eventId: orphan.eventId }, { status: "outlier", eventId: state.eventId }]);
      for (const e of [orphan, state]) {
        const row = (await s.rooms.events.get(e.eventId))!;
        expect([row.outlier, row.stateGroup]).toEqual([true, null]);
        expect(heard).not.toContain(e.eventId);
        expect((await getEvent(roomId, e.eventId)).status).toBe(404);
      }
      expect(await timeline(roomId)).not.toContain(orphan.eventId);
      expect(await extremities(roomId)).toEqual([tip]);
      expect((await loadRoom(s, roomId))!.state.has("m.room.topic\u0000")).toBe(false);
    });

    it(`v${version}: a content hash mismatch stores the event redacted; a bad signature drops it`, async () => {
      const { dag, tip } = await newRoom(version);
      const roomId = dag.roomId;
      const tampered = await dag.message(remote, alice(), "original", [tip]);
      tampered.pdu.content = { msgtype: "m.text", body: "tampered after signing" };
      expect(await receive(roomId, tampered)).toEqual([{ status: "accepted", eventId: tampered.eventId, redacted: true }]);
      expect((await s.rooms.events.get(tampered.eventId))!.pdu.content).toEqual({});
      const served = await getEvent(roomId, tampered.eventId);
      expect([served.status, served.json.content]).toEqual([200, {}]);

      const forged = await dag.message(remote, alice(), "forged", [tampered.eventId]);
      const keyId = Object.keys(forged.pdu.signatures[remote.serverName]!)[0]!;
      const other = await dag.message(remote, alice(), "another", [tampered.eventId]);
      forged.pdu.signatures[remote.serverName]![keyId] = other.pdu.signatures[remote.serverName]![keyId]!;
      const stranger = remoteServer("remote.test", generateSigningKey());
      const unknownKey = await dag.message(stranger, alice(), "unknown key", [tampered.eventId]);
      const out = await receive(roomId, forged, unknownKey);
      expect(out.map((o) => o.status)).toEqual(["dropped", "dropped"]);
      expect((out[0] as { reason: string }).reason).toMatch(/Bad signature/);
      expect((out[1] as { reason: string }).reason).toMatch(/No valid signature/);
      expect(await s.rooms.events.get(forged.eventId)).toBeUndefined();
      expect(await s.rooms.events.get(unknownKey.eventId)).toBeUndefined();
      expect(await extremities(roomId)).toEqual([tampered.eventId]);
    });
  }

  it("an event of another room, or in a bad format, is dropped; an unknown room needs its create event", async () => {
    const { dag, tip } = await newRoom("10");
    const other = new Dag(s, "10");
    await other.create(remote, alice());
    const stray = await other.message(remote, alice(), "elsewhere", []);
    const bad = await dag.message(remote, alice(), "no depth", [tip]);
    delete (bad.pdu as Partial<typeof bad.pdu>).depth;
    const out = await receive(dag.roomId, stray, bad);
    expect(out.map((o) => o.status)).toEqual(["dropped", "dropped"]);
    await expect(receiveRemoteEvents(s, other.roomId, [{ pdu: stray.pdu }])).rejects.toMatchObject({ errcode: "M_NOT_FOUND" });
  });
});
