// Backfill fetched for a late joiner, between two Weft servers over TLS: bob's room on B has a history of
// thirty messages before alice of A joins (by hand until make_join lands); alice's /messages on A walks
// back past her join, A asks B for /backfill and answers from what it stored — every message once, in
// order, down to the room's create event. The state events A learnt as outliers with the join become
// timeline events (de-outliering); backfilled events sit below every stream position, so /sync never
// shows them as new; history B's server may not show A (`joined` visibility before A had a member) comes
// redacted and stays hidden from alice. SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import type { FederatedServer } from "../helpers/federation.ts";
import type { Session } from "../helpers/users.ts";
import { startServerPair, type ServerPair } from "../helpers/server-pair.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { joinByHand, pushEvents, sendMessages } from "../helpers/by-hand.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

interface ClientEvent {
  event_id: string;
  type: string;
  sender: string;
  content: Record<string, unknown>;
}

describe.each(backends())("backfill for a late joiner on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let alice: Session;
  let bob: Session;
  let pair: ServerPair;
  beforeAll(async () => {
    pair = await startServerPair(backend);
    ({ a, b, alice, bob } = pair);
  });
  afterAll(() => pair?.close());

  const bobSays = (roomId: string, n: number, prefix: string) => sendMessages(b, bob.access_token, roomId, prefix, n);

  /** alice's /messages back from `from` (or the end), page by page, until a page says there is no more. */
  async function paginateBack(roomId: string, from?: string, limit = 10): Promise<{ events: ClientEvent[]; pages: number }> {
    const events: ClientEvent[] = [];
    let token = from;
    for (let pages = 1; pages <= 50; pages++) {
      const res = await a.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=${limit}${token ? `&from=${enc(token)}` : ""}`, { token: alice.access_token });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expectMatchesSpec(res, "GET", `${V3}/rooms/x/messages`);
      events.push(...res.json.chunk);
      if (res.json.end === undefined) return { events, pages };
      token = res.json.end;
    }
    throw new Error("pagination did not end");
  }

  it("/messages past the join fetches B's history: every message once, in order, down to the create event", async () => {
    const roomId = await createRoom(b, bob, { preset: "public_chat", name: "Old room" });
    const history = await bobSays(roomId, 30, "old");
    await joinByHand(a, b, roomId, alice.user_id);
    const create = (await a.hs.services.rooms.events.get((await b.hs.services.rooms.events.getMany([history[0]!])).get(history[0]!)!.pdu.auth_events[0] as string))!;
    expect([create.pdu.type, create.outlier]).toEqual(["m.room.create", true]);

    const initial = await a.call("GET", `${V3}/sync?timeout=0`, { token: alice.access_token });
    const since = initial.json.next_batch;
    // One more message after the join reaches A, then alice scrolls back through all of it.
    const [after] = await bobSays(roomId, 1, "new");
    expect((await pushEvents(b, a, [after!])).json).toEqual({ pdus: { [after!]: {} } });

    const { events, pages } = await paginateBack(roomId);
    expect(pages).toBeGreaterThan(3);
    const ids = events.map((e) => e.event_id);
    expect(new Set(ids).size).toBe(ids.length);
    const bodies = events.filter((e) => e.type === "m.room.message").map((e) => e.content.body);
    expect(bodies).toEqual(["new1", ...Array.from({ length: 30 }, (_, i) => `old${30 - i}`)]);
    expect(events[events.length - 1]!.type).toBe("m.room.create");
    expect(ids).toContain(create.eventId);
    // The join B's state had (bob's) and the create event were outliers on A: now in its timeline.
    const promoted = (await a.hs.services.rooms.events.get(create.eventId))!;
    expect([promoted.outlier, promoted.stateGroup !== null, promoted.streamOrdering < 0]).toEqual([false, true, true]);
    const types = events.map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(["m.room.power_levels", "m.room.join_rules", "m.room.member", "m.room.name"]));

    // Stored: a second walk reads the same from A's storage.
    const again = await paginateBack(roomId, undefined, 50);
    expect(again.events.map((e) => e.event_id)).toEqual(ids);
    // Forward from the start: the same events, oldest first.
    const forward = await a.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=f&limit=100`, { token: alice.access_token });
    expect(forward.json.chunk.map((e: ClientEvent) => e.event_id)).toEqual([...ids].reverse());

    // Backfilled history is not news: an incremental /sync since before it shows none of it.
    const incr = await a.call("GET", `${V3}/sync?timeout=0&since=${enc(since)}`, { token: alice.access_token });
    const timeline: ClientEvent[] = incr.json.rooms?.join?.[roomId]?.timeline?.events ?? [];
    expect(timeline.map((e) => e.content.body)).toEqual(["new1"]);
    // A's forward extremity is still the newest event; current state has not moved.
    expect(await a.hs.services.rooms.events.extremities(roomId)).toEqual([after]);
  });

  it("history A's server could not see comes redacted and stays hidden from alice", async () => {
    const roomId = await createRoom(b, bob, {
      preset: "public_chat",
      initial_state: [{ type: "m.room.history_visibility", state_key: "", content: { history_visibility: "joined" } }],
    });
    const secret = await bobSays(roomId, 3, "secret");
    await joinByHand(a, b, roomId, alice.user_id);
    const { events } = await paginateBack(roomId);
    expect(events.map((e) => e.content.body)).not.toContain("secret1");
    expect(events.filter((e) => e.type === "m.room.message")).toEqual([]);
    // A stored what B served: the messages, redacted (B's content never reached A).
    const stored = (await a.hs.services.rooms.events.get(secret[0]!))!;
    expect([stored.outlier, stored.pdu.content]).toEqual([false, {}]);
  });

  it("a room whose history A has in full asks no one", async () => {
    const roomId = await createRoom(a, alice, { preset: "public_chat" });
    await a.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/x`, { token: alice.access_token, body: { msgtype: "m.text", body: "local" } });
    const { events } = await paginateBack(roomId);
    expect(events[events.length - 1]!.type).toBe("m.room.create");
    expect(events.map((e) => e.content.body)).toContain("local");
  });
});
