// Redactions received over federation and erased users' events served to other servers (SQLite and
// PostgreSQL), between two Weft servers over TLS, B's events pushed to A by hand. In a version 5 room a
// redaction from B of A's user's event (bob lacks the power to redact) is taken ({}) and has no effect,
// before and after alice redacts it herself (then `redacted_by` names her redaction, as Synapse says it);
// a redaction naming an event of another room is ignored: it redacts nothing and clients never see it;
// an erased user's events reach other servers redacted (/event, /backfill, /get_missing_events).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { eventOnRoom, joinByHand, sendMessages, sendTransaction, signedCall, signerOf, syncUntil } from "../helpers/by-hand.ts";
import type { EventDraft } from "../../src/domain/rooms/build-event.ts";

const V3 = "/_matrix/client/v3";
const FED = "/_matrix/federation/v1";
const enc = encodeURIComponent;

describe.each(backends())("redactions over federation on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let alice: Session;
  let bob: Session;

  beforeAll(async () => {
    [a, b] = await Promise.all([startFederatedServer({ backend }), startFederatedServer({ backend, config: { send_federation: false } })]);
    [alice, bob] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob")]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  /** A room of alice's (version `version`) that bob of B joined. */
  async function sharedRoom(version: string): Promise<string> {
    const roomId = await createRoom(a, alice, { preset: "public_chat", room_version: version });
    await joinByHand(b, a, roomId, bob.user_id);
    return roomId;
  }

  /** An event of bob's, built by B on A's room as it is now and pushed to A; its id. */
  async function fromBob(roomId: string, draft: Omit<EventDraft, "sender">): Promise<string> {
    const e = await eventOnRoom(a.hs.services, roomId, signerOf(b), { ...draft, sender: bob.user_id });
    const res = await sendTransaction(signerOf(b), a, [e.pdu]);
    expect([res.status, res.json], JSON.stringify(res.json)).toEqual([200, { pdus: { [e.eventId]: {} } }]);
    return e.eventId;
  }

  const getEvent = (roomId: string, id: string) => a.call("GET", `${V3}/rooms/${enc(roomId)}/event/${enc(id)}`, { token: alice.access_token });

  it("a redaction from another server than the redacted event's (room v3+) has no effect, before and after a valid one", async () => {
    const roomId = await sharedRoom("5");
    const [msg] = await sendMessages(a, alice.access_token, roomId, "Hello", 1);
    const spoofed = await fromBob(roomId, { type: "m.room.redaction", redacts: msg!, content: {} });
    const sentinel = await fromBob(roomId, { type: "m.room.message", content: { msgtype: "m.text", body: "sentinel" } });
    await syncUntil(a, alice.access_token, roomId, (evs) => evs.some((e) => e.event_id === sentinel));
    const before = await getEvent(roomId, msg!);
    expect(before.json.content.body).toBe("Hello1");
    expect(before.json.unsigned?.redacted_by).toBeUndefined();
    expect(before.json.unsigned?.redacted_because).toBeUndefined();
    // Served to B unredacted too.
    const served = await signedCall(signerOf(b), a, "GET", `${FED}/event/${enc(msg!)}`);
    expect(served.json.pdus[0].content.body).toBe("Hello1");

    const redacted = await a.call("PUT", `${V3}/rooms/${enc(roomId)}/redact/${enc(msg!)}/r1`, { token: alice.access_token, body: {} });
    expect(redacted.status, JSON.stringify(redacted.json)).toBe(200);
    const after = await getEvent(roomId, msg!);
    expect(after.json.content).toEqual({});
    expect(after.json.unsigned.redacted_by).toBe(redacted.json.event_id);
    expect(after.json.unsigned.redacted_because.event_id).toBe(redacted.json.event_id);

    // Another spoofed redaction changes nothing: alice's is the one that redacted it.
    await fromBob(roomId, { type: "m.room.redaction", redacts: msg!, content: {} });
    const still = await getEvent(roomId, msg!);
    expect(still.json.unsigned.redacted_by).toBe(redacted.json.event_id);
    expect(spoofed).not.toBe(redacted.json.event_id);
  });

  it("a redaction naming an event of another room is ignored: it redacts nothing, and clients never see it", async () => {
    const [room1, room2] = [await sharedRoom("10"), await sharedRoom("10")];
    const hi = await fromBob(room1, { type: "m.room.message", content: { msgtype: "m.text", body: "hi" } });
    // bob's own event (a redaction of which would take effect in its room), named from room2.
    const redaction = await fromBob(room2, { type: "m.room.redaction", redacts: hi, content: {} });
    const sentinel = await fromBob(room2, { type: "m.room.message", content: { msgtype: "m.text", body: "sentinel" } });
    const seen = await syncUntil(a, alice.access_token, room2, (evs) => evs.some((e) => e.event_id === sentinel));
    expect(seen.map((e) => e.event_id)).not.toContain(redaction);
    const shown = await getEvent(room2, redaction);
    expect([shown.status, shown.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    const messages = await a.call("GET", `${V3}/rooms/${enc(room2)}/messages?dir=b&limit=50`, { token: alice.access_token });
    expect(messages.json.chunk.map((e: { event_id: string }) => e.event_id)).not.toContain(redaction);
    const original = await getEvent(room1, hi);
    expect([original.status, original.json.content.body, original.json.unsigned?.redacted_by]).toEqual([200, "hi", undefined]);
  });

  it("an erased user's events reach other servers redacted", async () => {
    const roomId = await sharedRoom("10");
    const eve = await registerUser(a, "eve");
    expect((await a.call("POST", `${V3}/join/${enc(roomId)}`, { token: eve.access_token, body: {} })).status).toBe(200);
    const [said] = await sendMessages(a, eve.access_token, roomId, "body", 1);
    const asB = (method: "GET" | "POST", path: string, body?: unknown) => signedCall(signerOf(b), a, method, path, body);
    const event = () => asB("GET", `${FED}/event/${enc(said!)}`).then((r) => r.json.pdus[0]);
    expect((await event()).content.body).toBe("body1");

    const first = await a.call("POST", `${V3}/account/deactivate`, { token: eve.access_token, body: { erase: true } });
    const done = await a.call("POST", `${V3}/account/deactivate`, {
      token: eve.access_token,
      body: { erase: true, auth: { type: "m.login.password", identifier: { type: "m.id.user", user: "eve" }, password: "password", session: first.json.session } },
    });
    expect(done.status, JSON.stringify(done.json)).toBe(200);
    const redacted = await event();
    expect(redacted.content).toEqual({});
    expect(redacted.hashes).toBeDefined();
    const backfill = await asB("GET", `${FED}/backfill/${enc(roomId)}?v=${enc(said!)}&limit=1`);
    expect(backfill.json.pdus.find((p: { content: Record<string, unknown>; sender: string }) => p.sender === eve.user_id && p.content.body !== undefined)).toBeUndefined();
    expect(backfill.json.pdus.length).toBe(1);
    const tips = await a.hs.services.rooms.events.extremities(roomId);
    const missing = await asB("POST", `${FED}/get_missing_events/${enc(roomId)}`, { earliest_events: [], latest_events: tips, limit: 10, min_depth: 0 });
    const hers = (missing.json.events as { sender: string; type: string; content: Record<string, unknown> }[]).filter((p) => p.sender === eve.user_id && p.type === "m.room.message");
    expect(hers.length).toBe(1);
    expect(hers[0]!.content).toEqual({});
  });
});
