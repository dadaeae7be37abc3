// This server's signature on its own messages, made when they first leave it (rooms/own-signature.ts): a
// message sent into a room no other server is in is stored without it, one sent while another server is
// in the room is signed as it is built. Whatever way an event leaves — GET /event, /backfill,
// /get_missing_events, redacted or not, the sender's transactions, a client's event_format "federation" —
// it carries A's signature, byte for byte the one @noble/ed25519 (an independent implementation) makes over
// the event's redacted canonical form with A's key. SQLite and PostgreSQL.
import { createHash } from "node:crypto";
import * as ed from "@noble/ed25519";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { joinByHand, sendMessages, signedCall, signerOf, syncUntil } from "../helpers/by-hand.ts";
import { canonicalJson, decodeBase64 } from "../../src/domain/canonical-json.ts";
import { redactEvent } from "../../src/domain/events/redaction.ts";
import { eventIdOf } from "../../src/domain/events/hashes.ts";
import type { Pdu } from "../../src/domain/events/types.ts";
import { loadRoom } from "../../src/domain/rooms/room-cache.ts";
import type { RoomVersion } from "../../src/domain/rooms/room-versions.ts";
import { pdusOf } from "../../src/federation/sender/transaction.ts";

ed.hashes.sha512 = (m) => new Uint8Array(createHash("sha512").update(m).digest());

const V3 = "/_matrix/client/v3";
const F = "/_matrix/federation/v1";
const enc = encodeURIComponent;

describe.each(backends())("this server's signature on its own events, on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let alice: Session;
  let bob: Session;
  let roomId: string;
  let version: RoomVersion;
  let alone: string[];
  let together: string[];

  beforeAll(async () => {
    [a, b] = await Promise.all([startFederatedServer({ backend }), startFederatedServer({ backend })]);
    [alice, bob] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob")]);
    roomId = await createRoom(a, alice, { preset: "public_chat", initial_state: [{ type: "m.room.history_visibility", state_key: "", content: { history_visibility: "shared" } }] });
    version = (await loadRoom(a.hs.services, roomId))!.version;
    alone = await sendMessages(a, alice.access_token, roomId, "alone ", 3);
    await joinByHand(b, a, roomId, bob.user_id);
    together = await sendMessages(a, alice.access_token, roomId, "together ", 2);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  const asB = (method: "GET" | "POST", path: string, body?: unknown) => signedCall(signerOf(b), a, method, path, body);
  const keyOfA = () => a.hs.services.signingKeys[0]!;
  /** What a server signs of a PDU: its redacted form, canonical, without signatures and unsigned. */
  const signedBytes = (pdu: Pdu, v: RoomVersion) => {
    const { signatures: _s, unsigned: _u, ...redacted } = redactEvent(pdu, v);
    return Buffer.from(canonicalJson(redacted));
  };
  /** Checks that a PDU served by A carries exactly the signature noble makes with A's key, and that noble verifies it. */
  const expectSignedByA = (pdu: Pdu, v = version) => {
    const signature = pdu.signatures?.[a.serverName]?.[keyOfA().keyId];
    const expected = Buffer.from(ed.sign(signedBytes(pdu, v), keyOfA().seed)).toString("base64").replace(/=+$/, "");
    expect(signature, JSON.stringify(pdu)).toBe(expected);
    expect(ed.verify(decodeBase64(signature!), signedBytes(pdu, v), keyOfA().publicKey)).toBe(true);
  };
  const storedSignatures = async (eventId: string) => {
    const row = await a.hs.services.storage.sql.get<{ json: string }>("SELECT json FROM events WHERE event_id = ?", [eventId]);
    return (JSON.parse(row!.json) as Pdu).signatures;
  };

  it("messages sent while A was alone in the room are stored unsigned; those sent with B in it, signed", async () => {
    for (const id of alone) expect(await storedSignatures(id)).toEqual({});
    for (const id of together) expect(Object.keys((await storedSignatures(id))[a.serverName] ?? {})).toEqual([keyOfA().keyId]);
  });

  it("GET /event, /backfill and /get_missing_events serve every event of A's with A's signature", async () => {
    for (const id of [...alone, ...together]) {
      const res = await asB("GET", `${F}/event/${enc(id)}`);
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expect(eventIdOf(res.json.pdus[0], version)).toBe(id);
      expectSignedByA(res.json.pdus[0]);
    }
    const backfill = await asB("GET", `${F}/backfill/${enc(roomId)}?v=${enc(together[1]!)}&limit=100`);
    expect(backfill.status).toBe(200);
    const fromA = backfill.json.pdus.filter((p: Pdu) => p.sender === alice.user_id);
    expect(fromA.map((p: Pdu) => eventIdOf(p, version))).toEqual(expect.arrayContaining([...alone, ...together]));
    for (const p of fromA) expectSignedByA(p);
    const missing = await asB("POST", `${F}/get_missing_events/${enc(roomId)}`, { earliest_events: [], latest_events: [together[0]], limit: 10 });
    expect(missing.status).toBe(200);
    const lazy = missing.json.events.filter((p: Pdu) => alone.includes(eventIdOf(p, version)));
    expect(lazy.length).toBeGreaterThan(0);
    for (const p of lazy) expectSignedByA(p);
  });

  it("a redacted message sent alone is served redacted, with the same signature", async () => {
    const res = await a.call("PUT", `${V3}/rooms/${enc(roomId)}/redact/${enc(alone[0]!)}/r-${Date.now()}`, { token: alice.access_token, body: { reason: "gone" } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const served = await asB("GET", `${F}/event/${enc(alone[0]!)}`);
    expect(served.status).toBe(200);
    expect(served.json.pdus[0].content).toEqual({});
    expect(eventIdOf(served.json.pdus[0], version)).toBe(alone[0]);
    expectSignedByA(served.json.pdus[0]);
  });

  it("B's /sync has the messages A sent with B in the room, signed (A's sender)", async () => {
    const more = await sendMessages(a, alice.access_token, roomId, "pushed ", 2);
    const seen = await syncUntil(b, bob.access_token, roomId, (events) => more.every((id) => events.some((e) => e.event_id === id)));
    for (const id of more) expect(seen.find((e) => e.event_id === id)!.content.body).toMatch(/^pushed /);
    // The copies B stored are what A sent: signed by A.
    for (const id of more) expectSignedByA((await b.hs.services.rooms.events.get(id))!.pdu);
  });

  it("the federation sender's transactions carry the signature of a message stored without it", async () => {
    // A message is never queued for a server while none is in its room; the sender signs all the same.
    const solo = await createRoom(a, alice, { preset: "private_chat" });
    const [said] = await sendMessages(a, alice.access_token, solo, "queued ", 1);
    const stored = (await a.hs.services.rooms.events.get(said!))!;
    expect(stored.pdu.signatures).toEqual({});
    const [sent] = await pdusOf(a.hs.services, [{ destination: b.serverName, streamOrdering: stored.streamOrdering, roomId: solo, eventId: said! }]);
    const soloVersion = (await loadRoom(a.hs.services, solo))!.version;
    expect(eventIdOf(sent!, soloVersion)).toBe(said);
    expectSignedByA(sent!, soloVersion);
  });

  it("a client's event_format federation shows A's own events signed, in a room no other server is in", async () => {
    const solo = await createRoom(a, alice, { preset: "private_chat" });
    const [said] = await sendMessages(a, alice.access_token, solo, "solo ", 1);
    expect(await storedSignatures(said!)).toEqual({});
    const filter = JSON.stringify({ event_format: "federation", room: { rooms: [solo], timeline: { limit: 10 } } });
    const res = await a.call("GET", `${V3}/sync?filter=${enc(filter)}`, { token: alice.access_token });
    expect(res.status).toBe(200);
    const events: Pdu[] = res.json.rooms.join[solo].timeline.events;
    const message = events.find((e) => (e as Pdu & { event_id: string }).event_id === said)!;
    const { event_id: _id, unsigned: _u, ...pdu } = message as Pdu & { event_id: string };
    expectSignedByA(pdu as Pdu, (await loadRoom(a.hs.services, solo))!.version);
  });
});
