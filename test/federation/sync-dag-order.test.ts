// Initial-sync timelines in the room DAG's order, and the full state of what a timeline does not show
// (SQLite and PostgreSQL, two Weft servers over TLS). A fork: B's state event S2 built on E1 arrives after
// E3 and E4, which A's user sent on E1 meanwhile; E5 merges. An initial sync that filters E5 out with a
// limit of 1 shows E4 (the DAG's newest it matches, not S2, the newest to arrive) and S2 in `state` (as
// Synapse; Complement TestSyncOmitsStateChangeOnFilteredEvents). And a state event a timeline filter
// leaves out after the timeline's start still reaches the client in `state`.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import type { FederatedServer } from "../helpers/federation.ts";
import { eventually } from "../helpers/federation-peer.ts";
import type { Session } from "../helpers/users.ts";
import { startServerPair, type ServerPair } from "../helpers/server-pair.ts";
import { createRoom } from "../helpers/rooms.ts";
import { eventOnRoom, joinByHand, sendTransaction, signerOf } from "../helpers/by-hand.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("initial sync in DAG order on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let alice: Session;
  let bob: Session;
  let pair: ServerPair;
  beforeAll(async () => {
    // B's events reach A only as the test sends them: B's own sender is off.
    pair = await startServerPair(backend, { b: { send_federation: false } });
    ({ a, b, alice, bob } = pair);
  });
  afterAll(() => pair?.close());

  async function send(roomId: string, type: string, body: string): Promise<string> {
    const res = await a.call("PUT", `${V3}/rooms/${enc(roomId)}/send/${enc(type)}/${enc(`${body}-${Date.now()}`)}`, { token: alice.access_token, body: { msgtype: "m.text", body } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id;
  }
  async function initialSync(filter: unknown): Promise<any> {
    const res = await a.call("GET", `${V3}/sync?timeout=0&filter=${enc(JSON.stringify(filter))}`, { token: alice.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json;
  }

  it("a fork's late state event is in `state` and the timeline is the DAG's newest matching event", async () => {
    const roomId = await createRoom(b, bob, { preset: "public_chat" });
    await joinByHand(a, b, roomId, alice.user_id);
    const e1 = await send(roomId, "m.room.message", "E1");
    await eventually(async () => (await b.hs.services.rooms.events.get(e1)) !== undefined, "E1 reaching B");
    // S2 on E1 (B's tip now), held back while alice sends E3 and E4 on E1.
    const s2 = await eventOnRoom(b.hs.services, roomId, signerOf(b), { type: "m.room.name", stateKey: "", sender: bob.user_id, content: { name: "I am the room name, S2" } });
    expect(s2.pdu.prev_events).toEqual([e1]);
    await send(roomId, "m.room.message", "E3");
    const e4 = await send(roomId, "m.room.message", "E4");
    const sent = await sendTransaction(signerOf(b), a, [s2.pdu]);
    expect([sent.status, sent.json]).toEqual([200, { pdus: { [s2.eventId]: {} } }]);
    await eventually(async () => (await a.hs.services.rooms.events.get(s2.eventId))?.outlier === false, "S2 stored on A");
    await send(roomId, "please_filter_me", "E5");

    const res = await initialSync({ room: { timeline: { not_types: ["please_filter_me"], limit: 1 } } });
    const room = res.rooms.join[roomId];
    expect(room.timeline.events.map((e: any) => e.event_id)).toEqual([e4]);
    expect(room.timeline.limited).toBe(true);
    const name = room.state.events.filter((e: any) => e.type === "m.room.name");
    expect(name.map((e: any) => [e.event_id, e.content.name])).toEqual([[s2.eventId, "I am the room name, S2"]]);
    // The summary reads the same name: no heroes for a named room.
    expect(room.summary?.["m.heroes"]).toBeUndefined();
    // Paginating back from the timeline reaches what came before it.
    const back = await a.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=10&from=${enc(room.timeline.prev_batch)}`, { token: alice.access_token });
    expect(back.status).toBe(200);
    expect(back.json.chunk.map((e: any) => e.content?.body)).toEqual(expect.arrayContaining(["E3", "E1"]));
  });

  it("a state event the timeline filter leaves out after the timeline's start is in `state`", async () => {
    const roomId = await createRoom(a, alice, { preset: "private_chat", name: "before" });
    await send(roomId, "m.room.message", "shown");
    const topic = await a.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.topic/`, { token: alice.access_token, body: { topic: "after the timeline" } });
    expect(topic.status).toBe(200);
    const res = await initialSync({ room: { timeline: { not_types: ["m.room.topic"], limit: 1 } } });
    const room = res.rooms.join[roomId];
    expect(room.timeline.events.map((e: any) => e.content.body)).toEqual(["shown"]);
    expect(room.state.events.filter((e: any) => e.type === "m.room.topic").map((e: any) => e.event_id)).toEqual([topic.json.event_id]);
    // Without the filter the topic is the timeline's and not in `state` twice.
    const plain = (await initialSync({ room: { timeline: { limit: 1 } } })).rooms.join[roomId];
    expect(plain.timeline.events.map((e: any) => e.event_id)).toEqual([topic.json.event_id]);
    expect(plain.state.events.some((e: any) => e.type === "m.room.topic")).toBe(false);
  });
});
