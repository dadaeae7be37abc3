// Room upgrades and redactions across two Weft servers over TLS on loopback (SQLite and PostgreSQL): A's
// moderator upgrades a room B's user is in — the tombstone reaches B, and B's user follows by joining the
// new room through A, B then holding it with its predecessor; A's moderator redacts B's user's message and
// B's user redacts their own, each redaction shown on both sides; B's user may not redact A's messages
// (refused on B, and a redaction forged as B's server, pushed to A, does not take effect there).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import type { FederatedServer } from "../helpers/federation.ts";
import { eventually } from "../helpers/federation-peer.ts";
import type { Session } from "../helpers/users.ts";
import { startServerPair, type ServerPair } from "../helpers/server-pair.ts";
import { createRoom } from "../helpers/rooms.ts";
import { buildEvent } from "../../src/domain/rooms/build-event.ts";
import { receiveRemoteEvents } from "../../src/domain/rooms/receive.ts";
import { loadRoom } from "../../src/domain/rooms/room-cache.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("upgrades and redactions across Weft servers on %s", (backend) => {
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

  async function sharedRoom(version = "10"): Promise<string> {
    const roomId = await createRoom(a, alice, { preset: "public_chat", room_version: version, name: "Shared" });
    const join = await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: bob.access_token, body: {} });
    expect(join.status, JSON.stringify(join.json)).toBe(200);
    return roomId;
  }

  const send = async (t: FederatedServer, who: Session, roomId: string, body: string): Promise<string> => {
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/${Date.now()}${Math.random()}`, { token: who.access_token, body: { msgtype: "m.text", body } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  };

  const eventOn = async (t: FederatedServer, who: Session, roomId: string, eventId: string) => {
    const res = await t.call("GET", `${V3}/rooms/${enc(roomId)}/event/${enc(eventId)}`, { token: who.access_token });
    return res.status === 200 ? (res.json as { content: Record<string, unknown>; unsigned?: Record<string, unknown> }) : undefined;
  };

  it("an upgrade by A's moderator reaches B, and B's user follows into the new room through A", async () => {
    const roomId = await sharedRoom("10");
    const up = await a.call("POST", `${V3}/rooms/${enc(roomId)}/upgrade`, { token: alice.access_token, body: { new_version: "11" } });
    expect(up.status, JSON.stringify(up.json)).toBe(200);
    const newRoom = up.json.replacement_room as string;

    // The tombstone reaches B.
    const tombstone = await eventually(async () => {
      const res = await b.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.tombstone`, { token: bob.access_token });
      return res.status === 200 ? res.json : undefined;
    }, "the tombstone reaching B");
    expect(tombstone.replacement_room).toBe(newRoom);

    // bob follows: the new room through the old room's server (as clients do, via the tombstone's sender).
    const join = await b.call("POST", `${V3}/join/${enc(newRoom)}?via=${enc(a.serverName)}`, { token: bob.access_token, body: {} });
    expect(join.status, JSON.stringify(join.json)).toBe(200);
    const create = await b.call("GET", `${V3}/rooms/${enc(newRoom)}/state/m.room.create`, { token: bob.access_token });
    expect(create.json).toMatchObject({ room_version: "11", predecessor: { room_id: roomId } });
    const name = await b.call("GET", `${V3}/rooms/${enc(newRoom)}/state/m.room.name`, { token: bob.access_token });
    expect(name.json.name).toBe("Shared");
    const onA = await a.call("GET", `${V3}/rooms/${enc(newRoom)}/state/m.room.member/${enc(bob.user_id)}`, { token: alice.access_token });
    expect(onA.json.membership).toBe("join");
    // Messages flow in the new room both ways.
    const fromB = await send(b, bob, newRoom, "hello from the new room");
    await eventually(async () => (await eventOn(a, alice, newRoom, fromB))?.content.body === "hello from the new room", "B's message reaching A");
  });

  it("A's moderator redacts B's user's message; B's user redacts their own: both sides show the redactions", async () => {
    const roomId = await sharedRoom("10");
    const first = await send(b, bob, roomId, "to be removed by alice");
    const second = await send(b, bob, roomId, "to be removed by bob");
    await eventually(async () => (await eventOn(a, alice, roomId, second)) !== undefined, "bob's messages reaching A");

    const byAlice = await a.call("PUT", `${V3}/rooms/${enc(roomId)}/redact/${enc(first)}/r${Date.now()}`, { token: alice.access_token, body: { reason: "moderation" } });
    expect(byAlice.status, JSON.stringify(byAlice.json)).toBe(200);
    const byBob = await b.call("PUT", `${V3}/rooms/${enc(roomId)}/redact/${enc(second)}/r${Date.now()}`, { token: bob.access_token, body: {} });
    expect(byBob.status, JSON.stringify(byBob.json)).toBe(200);

    for (const [t, who] of [[a, alice], [b, bob]] as const) {
      for (const [id, redaction] of [[first, byAlice.json.event_id], [second, byBob.json.event_id]]) {
        const e = await eventually(async () => {
          const got = await eventOn(t, who, roomId, id);
          return got && got.content.body === undefined ? got : undefined;
        }, `the redaction of ${id} on ${t.serverName}`);
        expect(e.content).toEqual({});
        expect((e.unsigned?.redacted_because as { event_id?: string } | undefined)?.event_id).toBe(redaction);
      }
    }
  });

  it("B's user may not redact A's user's message: refused on B, and A's message stays whole", async () => {
    const roomId = await sharedRoom("10");
    const msg = await send(a, alice, roomId, "alice's words");
    await eventually(async () => (await eventOn(b, bob, roomId, msg)) !== undefined, "alice's message reaching B");
    const res = await b.call("PUT", `${V3}/rooms/${enc(roomId)}/redact/${enc(msg)}/r${Date.now()}`, { token: bob.access_token, body: {} });
    expect([res.status, res.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    // A later message from B reaching A proves B sent everything it would have sent.
    const later = await send(b, bob, roomId, "after the refused redaction");
    await eventually(async () => (await eventOn(a, alice, roomId, later)) !== undefined, "bob's later message reaching A");
    expect((await eventOn(a, alice, roomId, msg))!.content.body).toBe("alice's words");
    expect((await eventOn(b, bob, roomId, msg))!.content.body).toBe("alice's words");

    // A redaction of alice's message by bob, built and signed as B would (bypassing B's own check), pushed
    // to A: it may be kept, but it does not take effect (bob lacks the power; the message is not B's).
    const room = (await loadRoom(a.hs.services, roomId))!;
    const forged = await buildEvent(a.hs.services, { roomId, version: room.version, state: room.state, extremities: room.extremities, maxDepth: room.maxDepth },
      { type: "m.room.redaction", sender: bob.user_id, content: { redacts: msg }, redacts: msg }, Date.now(), { serverName: b.serverName, key: b.hs.services.signingKeys[0]! });
    const [outcome] = await receiveRemoteEvents(a.hs.services, roomId, [{ pdu: forged.pdu }]);
    expect(["accepted", "rejected", "soft_failed"]).toContain(outcome!.status);
    expect((await eventOn(a, alice, roomId, msg))!.content.body).toBe("alice's words");
  });
});
