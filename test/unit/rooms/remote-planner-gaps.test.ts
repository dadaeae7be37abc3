// The remote planner's handling of gaps (src/domain/rooms/pipeline/plan-remote.ts), on hand-built DAGs
// of a made-up server, no network: the state after a missing prev event given from elsewhere and resolved
// with the states this server has; a room joined from a resident server's state (create event as an
// outlier); backfilled history placed below the stream in order, leaving tips, current state and readers
// alone; outliers promoted into the DAG when their state becomes known, and left as they are when not;
// history arriving after an event that follows it (never a tip), through the DAG edges recorded to events
// outside the DAG only.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../../helpers/server.ts";
import { registerUser, type Session } from "../../helpers/users.ts";
import { Dag, TestKeyRing, localServer, remoteServer, type TestServerIdentity } from "../../helpers/dag.ts";
import type { Services } from "../../../src/domain/services.ts";
import { receiveRemoteEvents } from "../../../src/domain/rooms/receive.ts";
import { appendEvent } from "../../../src/domain/rooms/append.ts";
import { loadRoom } from "../../../src/domain/rooms/room-cache.ts";
import { stateKeyOf } from "../../../src/domain/store/state-groups.ts";

describe.each(backends())("remote planner: gaps, joins, backfill on %s", (backend) => {
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
  const stateAfter = async (id: string) => s.rooms.stateGroups.get((await s.rooms.events.get(id))!.stateGroup!);

  /**
   * A room with history on remote.test (create, alice's join, power levels, join rules, then `before`
   * messages) that carol joins: this server gets the state before carol's join as outliers and the join
   * with that state, as a join through a resident server does.
   */
  async function joinedLate(version: string, before: number) {
    const dag = new Dag(s, version);
    const first = await dag.create(remote, alice());
    const history = [...first];
    for (let i = 1; i <= before; i++) history.push(await dag.message(remote, alice(), `old ${i}`, [history[history.length - 1]!.eventId]));
    const tip = history[history.length - 1]!.eventId;
    const join = await dag.member(local, carol.user_id, carol.user_id, "join", [tip]);
    const stateBefore = new Map(first.map((e) => [stateKeyOf(e.pdu.type, e.pdu.state_key!), e.eventId]));
    const out = await receiveRemoteEvents(s, dag.roomId, [...first.map((e) => ({ pdu: structuredClone(e.pdu), outlier: true })), { pdu: structuredClone(join.pdu), stateBefore }]);
    expect(out.map((o) => o.status)).toEqual(["outlier", "outlier", "outlier", "outlier", "accepted"]);
    return { dag, first, history, join };
  }

  for (const version of ["10", "12"]) {
    it(`v${version}: a room joined from a resident's state starts with its create event as an outlier`, async () => {
      const { dag, first, join } = await joinedLate(version, 2);
      const room = (await loadRoom(s, dag.roomId))!;
      expect(room.extremities).toEqual([join.eventId]);
      expect(room.createEventId).toBe(first[0]!.eventId);
      expect(room.state.get(stateKeyOf("m.room.member", carol.user_id))).toBe(join.eventId);
      expect((await s.rooms.events.get(first[0]!.eventId))!.outlier).toBe(true);
    });

    it(`v${version}: backfilled history goes below the stream in order; tips, state and readers are left alone`, async () => {
      const { dag, first, history, join } = await joinedLate(version, 3);
      const roomBefore = (await loadRoom(s, dag.roomId))!;
      const heardBefore = heard.length;
      const top = await s.rooms.events.maxStreamOrdering();
      const older = history.slice().reverse(); // as /backfill answers: newest first
      const out = await receiveRemoteEvents(s, dag.roomId, older.map((e) => ({ pdu: structuredClone(e.pdu) })), { backfill: true });
      expect(out.map((o) => o.status)).toEqual(older.map(() => "accepted"));
      const rows = await Promise.all(history.map((e) => s.rooms.events.get(e.eventId)));
      const positions = rows.map((r) => r!.streamOrdering);
      expect(positions.every((p) => p < 0)).toBe(true);
      expect(positions).toEqual([...positions].sort((x, y) => x - y)); // oldest lowest
      for (const r of rows) expect([r!.outlier, r!.stateGroup !== null, r!.softFailed]).toEqual([false, true, false]);
      // The create event and the other state carol's join came with were outliers: promoted.
      expect(rows[0]!.eventId).toBe(first[0]!.eventId);
      const after = (await loadRoom(s, dag.roomId))!;
      expect(after.extremities).toEqual([join.eventId]);
      expect(after.state).toEqual(roomBefore.state);
      expect(await s.rooms.events.maxStreamOrdering()).toBe(top);
      expect(heard.length).toBe(heardBefore);
      // Newer backfill goes below the older one.
      const lowest = Math.min(...positions);
      const second = await joinedLate(version, 1);
      await receiveRemoteEvents(s, second.dag.roomId, second.history.map((e) => ({ pdu: structuredClone(e.pdu) })), { backfill: true });
      expect((await s.rooms.events.get(second.history[0]!.eventId))!.streamOrdering).toBeLessThan(lowest);
    });

    it(`v${version}: the state after a prev event this server lacks, given from elsewhere, is resolved with the ones it has`, async () => {
      const { dag, join, first } = await joinedLate(version, 0);
      // On remote.test: alice sets a topic on a branch this server never sees, then a merge of both.
      const topic = await dag.event(remote, { type: "m.room.topic", stateKey: "", sender: alice(), content: { topic: "elsewhere" } }, [first[3]!.eventId]);
      const merge = await dag.message(remote, alice(), "merge", [join.eventId, topic.eventId]);
      const unknown = await receiveRemoteEvents(s, dag.roomId, [{ pdu: structuredClone(merge.pdu) }]);
      expect(unknown).toEqual([{ status: "outlier", eventId: merge.eventId }]);
      // Given the state after the topic event (as /state_ids would tell): placed, state resolved.
      const given = new Map([...first.map((e) => [stateKeyOf(e.pdu.type, e.pdu.state_key!), e.eventId] as [string, string]), [stateKeyOf("m.room.topic", ""), topic.eventId]]);
      await receiveRemoteEvents(s, dag.roomId, [{ pdu: structuredClone(topic.pdu), outlier: true }]);
      const placed = await receiveRemoteEvents(s, dag.roomId, [{ pdu: structuredClone(merge.pdu), prevStates: new Map([[topic.eventId, given]]) }]);
      expect(placed).toEqual([{ status: "accepted", eventId: merge.eventId }]);
      const state = await stateAfter(merge.eventId);
      expect(state.get(stateKeyOf("m.room.topic", ""))).toBe(topic.eventId);
      expect(state.get(stateKeyOf("m.room.member", carol.user_id))).toBe(join.eventId);
      expect((await loadRoom(s, dag.roomId))!.extremities).toEqual([merge.eventId]);
      expect((await s.rooms.events.get(topic.eventId))!.outlier).toBe(true);
      expect(heard).toContain(merge.eventId);
    });

    it(`v${version}: an event arriving after one that follows it is not a tip; edges are kept only to events outside the DAG`, async () => {
      // carol's join names the resident's last message, which this server never received.
      const { dag, history, join } = await joinedLate(version, 1);
      const late = history[history.length - 1]!;
      const edges = async () =>
        (await s.storage.sql.all<{ event_id: string; prev_event_id: string }>(`SELECT event_id, prev_event_id FROM event_edges WHERE room_id = ? ORDER BY event_id`, [dag.roomId])).map((r) => [r.event_id, r.prev_event_id]);
      expect(await edges()).toEqual([[join.eventId, late.eventId]]);
      // A message of carol's, built on the join (in the DAG): no edge recorded for it.
      const mine = await appendEvent(s, dag.roomId, { type: "m.room.message", sender: carol.user_id, content: { msgtype: "m.text", body: "hi" } });
      expect(mine.pdu.prev_events).toEqual([join.eventId]);
      expect(await edges()).toEqual([[join.eventId, late.eventId]]);
      // The missing message arrives (with the state before it, as /state_ids would give): accepted, but the
      // join already follows it, so the tips stay carol's message.
      const stateBefore = new Map(await stateAfter(join.eventId));
      stateBefore.delete(stateKeyOf("m.room.member", carol.user_id));
      const out = await receiveRemoteEvents(s, dag.roomId, [{ pdu: structuredClone(late.pdu), stateBefore }]);
      expect(out).toEqual([{ status: "accepted", eventId: late.eventId }]);
      expect((await loadRoom(s, dag.roomId))!.extremities).toEqual([mine.eventId]);
    });
  }
});
