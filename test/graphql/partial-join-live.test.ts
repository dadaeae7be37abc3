// The syncUpdates subscription and a room joined over federation with partial state, on each backend: as
// /sync (without lazy-loaded members), the room is left out while its state is partial, and shown — as
// newly joined, with the message that arrived meanwhile — as soon as the state is complete, with no other
// activity to wake the subscription.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startServerPair, type ServerPair } from "../helpers/server-pair.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { createRoom } from "../helpers/rooms.ts";
import { holdStateFetches } from "../helpers/partial-state.ts";
import { isPartialState } from "../../src/domain/federation/partial-state/flag.ts";
import { subscribe, wsClient } from "./client.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const SYNC = `subscription { syncUpdates { nextBatch joinedRooms { roomId timeline { eventId } } } }`;

describe.each(backends())("syncUpdates and a partial-state join (%s)", (backend) => {
  let pair: ServerPair;

  beforeAll(async () => { pair = await startServerPair(backend); });
  afterAll(async () => { await pair?.close(); });

  it("leaves the room out while partial, then shows it with what arrived meanwhile once complete", async () => {
    const { a, b, alice, bob } = pair;
    const roomId = await createRoom(a, alice, { preset: "public_chat" });
    const c = wsClient(b, { authorization: `Bearer ${bob.access_token}` });
    try {
      const live = subscribe(c, SYNC, {});
      await live.until(1);
      const hold = holdStateFetches(b.hs.services);
      const join = await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: bob.access_token, body: {} });
      expect(join.status, JSON.stringify(join.json)).toBe(200);
      expect(await isPartialState(b.hs.services, roomId)).toBe(true);
      await eventually(() => hold.held() > 0, "the resync asking A for the state");

      const sent = await a.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/p1`, { token: alice.access_token, body: { msgtype: "m.text", body: "while partial" } });
      expect(sent.status).toBe(200);
      await eventually(async () => {
        const e = await b.hs.services.rooms.events.get(sent.json.event_id);
        return e && !e.outlier ? e : undefined;
      }, "B storing alice's message");
      const shownWhilePartial = () => live.results.some((r) => r.data.syncUpdates.joinedRooms.some((room: any) => room.roomId === roomId));
      expect(shownWhilePartial()).toBe(false);
      const before = live.results.length;

      hold.release();
      await eventually(async () => !(await isPartialState(b.hs.services, roomId)), "the state complete");
      // The completion alone wakes the subscription: the room comes, with the message in its timeline.
      for (let n = before + 1; ; n++) {
        await live.until(n, 20000);
        const room = live.results[n - 1].data.syncUpdates.joinedRooms.find((r: any) => r.roomId === roomId);
        if (!room) continue;
        expect(room.timeline.map((e: any) => e.eventId)).toContain(sent.json.event_id);
        break;
      }
      live.stop();
    } finally {
      await c.dispose();
    }
  }, 120_000);
});
