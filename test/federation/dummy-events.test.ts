// dummy_events_threshold over federation-received forks, on SQLite and PostgreSQL: a remote server sends
// sibling events (each on the same parents), leaving the room with more forward extremities than the
// threshold; Weft's local member then sends an org.matrix.dummy_event whose prev_events are all of them,
// so the room is back to one extremity. At the threshold nothing is sent.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { startFakeOrigin, type FakeOrigin } from "../helpers/fake-origin.ts";
import { eventually, joinAsRemote } from "../helpers/federation-peer.ts";
import { registerUser } from "../helpers/users.ts";
import { buildEvent } from "../../src/domain/rooms/build-event.ts";
import { loadRoom } from "../../src/domain/rooms/room-cache.ts";
import { receiveRemoteEvents } from "../../src/domain/rooms/receive.ts";

describe.each(backends())("dummy events (%s)", (backend) => {
  let t: FederatedServer;
  let origin: FakeOrigin;

  beforeAll(async () => {
    [t, origin] = await Promise.all([startFederatedServer({ backend, config: { dummy_events_threshold: 2, send_federation: false } }), startFakeOrigin()]);
  });
  afterAll(async () => {
    await Promise.all([t?.close(), origin?.close()]);
  });

  /** `n` messages of the remote user, all on the room's current extremities (siblings). */
  async function siblings(roomId: string, sender: string, n: number): Promise<string[]> {
    const s = t.hs.services;
    const room = (await loadRoom(s, roomId))!;
    const ctx = { roomId, version: room.version, state: room.state, extremities: room.extremities, maxDepth: room.maxDepth };
    const built = await Promise.all(Array.from({ length: n }, (_, i) => buildEvent(s, ctx, { type: "m.room.message", sender, content: { msgtype: "m.text", body: `fork ${i}` } }, Date.now() + i, origin)));
    const out = await receiveRemoteEvents(s, roomId, built.map((b) => ({ pdu: b.pdu })));
    expect(out.map((o) => o.status)).toEqual(built.map(() => "accepted"));
    return built.map((b) => b.eventId);
  }

  it("merges more extremities than the threshold with one dummy event; leaves the threshold alone", async () => {
    const alice = await registerUser(t, "alice");
    const roomId = (await t.call("POST", "/_matrix/client/v3/createRoom", { token: alice.access_token, body: { preset: "public_chat" } })).json.room_id;
    const remote = `@bob:${origin.serverName}`;
    await joinAsRemote(t, origin, roomId, remote);
    const s = t.hs.services;

    // Two forks: at the threshold, no dummy event.
    const two = await siblings(roomId, remote, 2);
    expect([...(await s.rooms.events.extremities(roomId))].sort()).toEqual([...two].sort());

    // Three more on those two: three extremities, over the threshold.
    const three = await siblings(roomId, remote, 3);
    const merged = await eventually(async () => {
      const ext = await s.rooms.events.extremities(roomId);
      return ext.length === 1 && !three.includes(ext[0]!) ? ext[0] : undefined;
    }, "a dummy event merging the extremities");
    const dummy = (await s.rooms.events.get(merged))!;
    expect(dummy.pdu).toMatchObject({ type: "org.matrix.dummy_event", sender: alice.user_id, content: {} });
    expect([...dummy.pdu.prev_events].sort()).toEqual([...three].sort());
    // Exactly one dummy event was sent.
    const all = await s.storage.sql.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM events WHERE room_id = ? AND type = ?`, [roomId, "org.matrix.dummy_event"]);
    expect(Number(all[0]!.n)).toBe(1);
  });
});
