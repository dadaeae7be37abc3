// Gaps in /sync timelines between two Weft servers over TLS (SQLite and PostgreSQL): when B's events reach
// A with more missing history than get_missing_events brings, A's incremental sync over them is limited
// and starts at the first event after the hole (as Synapse's timeline_gaps: the client paginates instead
// of reading the events before it as adjacent); a gap closed whole is no gap; later syncs are not limited.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import type { FederatedServer } from "../helpers/federation.ts";
import { eventually } from "../helpers/federation-peer.ts";
import type { Session } from "../helpers/users.ts";
import { startServerPair, type ServerPair } from "../helpers/server-pair.ts";
import { createRoom } from "../helpers/rooms.ts";
import { joinByHand, pushEvents, sendMessages } from "../helpers/by-hand.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const FILTER = enc(JSON.stringify({ room: { timeline: { limit: 20 } } }));

describe.each(backends())("gaps in sync timelines on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let alice: Session;
  let bob: Session;
  let roomId: string;
  let pair: ServerPair;
  beforeAll(async () => {
    // B's events reach A only as the tests push them: B's own sender is off.
    pair = await startServerPair(backend, { b: { send_federation: false } });
    ({ a, b, alice, bob } = pair);
    roomId = await createRoom(b, bob, { preset: "public_chat" });
    await joinByHand(a, b, roomId, alice.user_id);
  });
  afterAll(() => pair?.close());

  async function sync(since?: string): Promise<any> {
    const res = await a.call("GET", `${V3}/sync?timeout=0&filter=${FILTER}${since ? `&since=${enc(since)}` : ""}`, { token: alice.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json;
  }
  const bodies = (tl: any) => tl.events.filter((e: any) => e.type === "m.room.message").map((e: any) => e.content.body);

  /** Alice says something B stores before bob's next events (so they follow it), and A's token before it. */
  async function aliceFirst(body: string): Promise<string> {
    const before = (await sync()).next_batch;
    const sent = await a.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/${enc(body)}`, { token: alice.access_token, body: { msgtype: "m.text", body } });
    expect(sent.status, JSON.stringify(sent.json)).toBe(200);
    await eventually(async () => (await b.hs.services.rooms.events.get(sent.json.event_id)) !== undefined, "alice's message reaching B");
    return before;
  }

  it("a gap wider than get_missing_events: the timeline over it is limited and starts after the hole", async () => {
    const before = await aliceFirst("alice before the gap");
    const ids = await sendMessages(b, bob.access_token, roomId, "w", 14);
    await pushEvents(b, a, [ids[13]!]);
    await eventually(async () => (await a.hs.services.rooms.events.get(ids[13]!))?.outlier === false, "w14 stored on A");
    // get_missing_events brought w4..w13; w3, before w4, is known only as an outlier: the hole is before w4.
    const res = await sync(before);
    const tl = res.rooms.join[roomId].timeline;
    expect(bodies(tl)).toEqual(["w4", "w5", "w6", "w7", "w8", "w9", "w10", "w11", "w12", "w13", "w14"]);
    expect(tl.limited).toBe(true);
    // Paginating back from the timeline's start reaches what came before the hole here.
    const back = await a.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=50&from=${enc(tl.prev_batch)}`, { token: alice.access_token });
    expect(back.json.chunk.map((e: any) => e.content?.body)).toContain("alice before the gap");
    // Nothing new since: the next sync has no timeline for the room; a new event is not limited.
    const next = await aliceFirst("alice after");
    const after = await sync(next);
    expect([bodies(after.rooms.join[roomId].timeline), after.rooms.join[roomId].timeline.limited]).toEqual([["alice after"], false]);
  });

  it("a gap get_missing_events closes whole is no gap: the timeline shows everything, not limited", async () => {
    const before = await aliceFirst("alice before three");
    const ids = await sendMessages(b, bob.access_token, roomId, "c", 3);
    await pushEvents(b, a, [ids[2]!]);
    await eventually(async () => (await a.hs.services.rooms.events.get(ids[2]!))?.outlier === false, "c3 stored on A");
    const tl = (await sync(before)).rooms.join[roomId].timeline;
    expect([bodies(tl), tl.limited]).toEqual([["alice before three", "c1", "c2", "c3"], false]);
  });
});
