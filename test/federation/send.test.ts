// Inbound transactions (PUT /_matrix/federation/v1/send/{txnId}) between two Weft servers over TLS: B's
// events reach a room A shares with B (alice of A joined bob's room on B, by hand until make_join lands)
// and A's alice sees them in /sync; the spec's answer shape; a replayed transaction gets the stored answer
// and changes nothing; oversize and malformed transactions are refused whole; per PDU: a bad content hash
// stores the event redacted, a bad signature drops it, an event failing auth is rejected (stored, never
// served) or soft-failed against current state is answered {} all the same (it was processed: Synapse's
// answer), a malformed one is an error, one for a room A does not know is ignored, one for a room A is no
// longer in is refused; EDUs go to the handler of their type (unknown types dropped). SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { eventOnRoom, joinByHand, pushEvents, sendTransaction, signedCall, signerOf, syncUntil } from "../helpers/by-hand.ts";
import { buildEvent } from "../../src/domain/rooms/build-event.ts";
import type { EduHandler } from "../../src/domain/federation/edu.ts";
import { generateSigningKey } from "../../src/domain/signing-key.ts";
import { eventIdOf } from "../../src/domain/events/hashes.ts";
import { loadRoom } from "../../src/domain/rooms/room-cache.ts";
import { stateKeyOf } from "../../src/domain/store/state-groups.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("PUT /send on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let alice: Session;
  let bob: Session;
  let roomId: string;

  beforeAll(async () => {
    // B's events reach A only as the tests push them (by hand): B's own sender is off.
    [a, b] = await Promise.all([startFederatedServer({ backend }), startFederatedServer({ backend, config: { send_federation: false } })]);
    [alice, bob] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob")]);
    roomId = await createRoom(b, bob, { preset: "public_chat", name: "Shared" });
    await joinByHand(a, b, roomId, alice.user_id);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  /** bob sends a message on B (a local send there); returns its event id and PDU. */
  async function bobSays(body: string, room = roomId) {
    const res = await b.call("PUT", `${V3}/rooms/${enc(room)}/send/m.room.message/${enc(body)}${Math.random()}`, { token: bob.access_token, body: { msgtype: "m.text", body } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const e = (await b.hs.services.rooms.events.get(res.json.event_id))!;
    return { eventId: e.eventId, pdu: structuredClone(e.pdu) };
  }

  const stored = (id: string) => a.hs.services.rooms.events.get(id);
  const clientEvent = (id: string) => a.call("GET", `${V3}/rooms/${enc(roomId)}/event/${enc(id)}`, { token: alice.access_token });

  it("accepts B's events into the shared room: the spec's answer, and alice sees them in /sync", async () => {
    const one = await bobSays("hello from B");
    const two = await bobSays("and again");
    const res = await sendTransaction(signerOf(b), a, [one.pdu, two.pdu]);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(res.json).toEqual({ pdus: { [one.eventId]: {}, [two.eventId]: {} } });
    expectMatchesSpec(res, "PUT", "/_matrix/federation/v1/send/t1");
    const seen = await syncUntil(a, alice.access_token, roomId, (evs) => evs.some((e) => e.event_id === two.eventId));
    expect(seen.filter((e) => e.type === "m.room.message").map((e) => e.content.body).slice(-2)).toEqual(["hello from B", "and again"]);
    expect(seen.find((e) => e.event_id === one.eventId)!.sender).toBe(bob.user_id);
    // Both are A's forward extremity now: alice's reply builds on them.
    expect(await a.hs.services.rooms.events.extremities(roomId)).toEqual([two.eventId]);
    // Sent again in another transaction: duplicates, answered as handled.
    const again = await sendTransaction(signerOf(b), a, [one.pdu]);
    expect(again.json).toEqual({ pdus: { [one.eventId]: {} } });
  });

  it("a replayed transaction gets the stored answer and changes nothing, even with another body", async () => {
    const m = await bobSays("once");
    const txnId = `replay-${Date.now()}`;
    const first = await sendTransaction(signerOf(b), a, [m.pdu], undefined, txnId);
    expect(first.json).toEqual({ pdus: { [m.eventId]: {} } });
    const later = await bobSays("smuggled in a replay");
    const replay = await sendTransaction(signerOf(b), a, [later.pdu], undefined, txnId);
    expect([replay.status, replay.json]).toEqual([200, first.json]);
    expect(await stored(later.eventId)).toBeUndefined();
    // The same id from another origin is another transaction.
    const c = await startFederatedServer({ backend });
    try {
      const other = await sendTransaction(signerOf(c), a, [], undefined, txnId);
      expect([other.status, other.json]).toEqual([200, { pdus: {} }]);
    } finally {
      await c.close();
    }
    // Concurrent retries of one transaction share one answer.
    const m2 = await bobSays("concurrent");
    const id2 = `concurrent-${Date.now()}`;
    const answers = await Promise.all([1, 2, 3].map(() => sendTransaction(signerOf(b), a, [m2.pdu], undefined, id2)));
    for (const r of answers) expect([r.status, r.json]).toEqual([200, { pdus: { [m2.eventId]: {} } }]);
  });

  it("refuses oversize and malformed transactions whole (nothing stored)", async () => {
    const m = await bobSays("in an oversize transaction");
    const tooMany = await sendTransaction(signerOf(b), a, Array.from({ length: 51 }, () => m.pdu));
    expect([tooMany.status, tooMany.json.errcode]).toEqual([400, "M_TOO_LARGE"]);
    const tooManyEdus = await sendTransaction(signerOf(b), a, [m.pdu], Array.from({ length: 101 }, () => ({ edu_type: "m.typing", content: {} })));
    expect([tooManyEdus.status, tooManyEdus.json.errcode]).toEqual([400, "M_TOO_LARGE"]);
    expect(await stored(m.eventId)).toBeUndefined();

    const put = (body: unknown) => signedCall(signerOf(b), a, "PUT", `/_matrix/federation/v1/send/bad-${Math.random()}`, body);
    const cases: [unknown, number, string][] = [
      [{ origin: a.serverName, origin_server_ts: 1, pdus: [m.pdu] }, 403, "M_FORBIDDEN"],
      [{ origin_server_ts: 1, pdus: [m.pdu] }, 400, "M_BAD_JSON"],
      [{ origin: b.serverName, pdus: [m.pdu] }, 400, "M_BAD_JSON"],
      [{ origin: b.serverName, origin_server_ts: 1 }, 400, "M_BAD_JSON"],
      [{ origin: b.serverName, origin_server_ts: 1, pdus: {} }, 400, "M_BAD_JSON"],
      [{ origin: b.serverName, origin_server_ts: 1, pdus: [], edus: "x" }, 400, "M_BAD_JSON"],
    ];
    for (const [body, status, errcode] of cases) {
      const res = await put(body);
      expect([res.status, res.json.errcode], JSON.stringify(body)).toEqual([status, errcode]);
    }
    expect(await stored(m.eventId)).toBeUndefined();
    const notJson = await signedCall(signerOf(b), a, "PUT", "/_matrix/federation/v1/send/nj", undefined);
    expect([notJson.status, notJson.json.errcode]).toEqual([400, "M_NOT_JSON"]);
    // Unsigned: nothing is even read.
    const unsigned = await a.call("PUT", `/_matrix/federation/v1/send/u1`, { body: { origin: b.serverName, origin_server_ts: 1, pdus: [m.pdu] } });
    expect([unsigned.status, unsigned.json.errcode]).toEqual([401, "M_UNAUTHORIZED"]);
  });

  it("per PDU: a bad content hash stores it redacted, a bad signature drops it, a malformed one is an error", async () => {
    const tampered = await bobSays("the original words");
    tampered.pdu.content = { msgtype: "m.text", body: "words changed on the way" };
    const forged = await bobSays("forged");
    const keyId = Object.keys(forged.pdu.signatures[b.serverName]!)[0]!;
    const stranger = await eventOnRoom(b.hs.services, roomId, { serverName: b.serverName, key: generateSigningKey() }, { type: "m.room.message", sender: bob.user_id, content: { msgtype: "m.text", body: "unknown key" } });
    forged.pdu.signatures[b.serverName]![keyId] = stranger.pdu.signatures[b.serverName]![Object.keys(stranger.pdu.signatures[b.serverName]!)[0]!]!;
    const malformed = await bobSays("no depth");
    delete (malformed.pdu as { depth?: number }).depth;
    // Without its depth the event's id (a hash over it) is another one.
    const malformedId = eventIdOf(malformed.pdu, (await loadRoom(a.hs.services, roomId))!.version);
    const res = await sendTransaction(signerOf(b), a, [tampered.pdu, forged.pdu, stranger.pdu, malformed.pdu]);
    expect(res.status).toBe(200);
    expect(Object.keys(res.json.pdus).sort(), JSON.stringify(res.json)).toEqual([tampered.eventId, forged.eventId, stranger.eventId, malformedId].sort());
    expect(res.json.pdus[tampered.eventId]).toEqual({});
    expect(res.json.pdus[forged.eventId].error).toMatch(/signature/i);
    expect(res.json.pdus[stranger.eventId].error).toMatch(/signature/i);
    expect(res.json.pdus[malformedId].error).toMatch(/depth/);
    expectMatchesSpec(res, "PUT", "/_matrix/federation/v1/send/t2");
    expect((await stored(tampered.eventId))!.pdu.content).toEqual({});
    const shown = await clientEvent(tampered.eventId);
    expect([shown.status, shown.json.content]).toEqual([200, {}]);
    for (const id of [forged.eventId, stranger.eventId, malformedId, malformed.eventId]) expect(await stored(id)).toBeUndefined();
  });

  it("an event its auth events do not allow is rejected: stored as such, never served to clients or servers", async () => {
    // bob (power 100 on B's room) is fine; mallory of B never joined.
    const mallory = `@mallory:${b.serverName}`;
    // Built on A's tips (B's own may be events the test above kept from A: a pushed event whose prev_events
    // its origin cannot give is refused before any auth rule, as Synapse).
    const bad = await eventOnRoom(a.hs.services, roomId, signerOf(b), { type: "m.room.message", sender: mallory, content: { msgtype: "m.text", body: "let me in" } });
    const res = await sendTransaction(signerOf(b), a, [bad.pdu]);
    // Processed and rejected by the auth rules: no error for the sender (as Synapse), which would retry it.
    expect([res.status, res.json]).toEqual([200, { pdus: { [bad.eventId]: {} } }]);
    const row = (await stored(bad.eventId))!;
    expect(row.rejectedReason).toMatch(/Auth rule|not joined|membership/i);
    expect((await clientEvent(bad.eventId)).status).toBe(404);
    const fed = await signedCall(signerOf(b), a, "GET", `/_matrix/federation/v1/event/${enc(bad.eventId)}`);
    expect([fed.status, fed.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    expect(await a.hs.services.rooms.events.extremities(roomId)).not.toContain(bad.eventId);
  });

  it("an event soft-failed against current state is answered {} too: stored as such, not shown, not a tip", async () => {
    // eve of B joins; A hears of it, then of her ban. Her message built before the ban (on her join) passes
    // the auth rules at its place in the DAG and fails against A's current state.
    const eve = await registerUser(b, "eve");
    const joined = await b.call("POST", `${V3}/join/${enc(roomId)}`, { token: eve.access_token, body: {} });
    expect(joined.status, JSON.stringify(joined.json)).toBe(200);
    const atJoin = (await loadRoom(b.hs.services, roomId))!;
    const joinId = atJoin.state.get(stateKeyOf("m.room.member", eve.user_id))!;
    const banned = await b.call("POST", `${V3}/rooms/${enc(roomId)}/ban`, { token: bob.access_token, body: { user_id: eve.user_id } });
    expect(banned.status, JSON.stringify(banned.json)).toBe(200);
    const banId = (await loadRoom(b.hs.services, roomId))!.state.get(stateKeyOf("m.room.member", eve.user_id))!;
    const pushed = await pushEvents(b, a, [joinId, banId]);
    expect(pushed.json).toEqual({ pdus: { [joinId]: {}, [banId]: {} } });
    const late = await buildEvent(b.hs.services, { roomId, version: atJoin.version, state: atJoin.state, extremities: atJoin.extremities, maxDepth: atJoin.maxDepth }, { type: "m.room.message", sender: eve.user_id, content: { msgtype: "m.text", body: "said before my ban" } });
    const tipsBefore = await a.hs.services.rooms.events.extremities(roomId);
    const res = await sendTransaction(signerOf(b), a, [late.pdu]);
    expect([res.status, res.json]).toEqual([200, { pdus: { [late.eventId]: {} } }]);
    expectMatchesSpec(res, "PUT", "/_matrix/federation/v1/send/t3");
    const row = (await stored(late.eventId))!;
    expect([row.softFailed, row.rejectedReason, row.outlier]).toEqual([true, null, false]);
    expect(await a.hs.services.rooms.events.extremities(roomId)).toEqual(tipsBefore);
    const seen = await syncUntil(a, alice.access_token, roomId, (evs) => evs.some((e) => e.event_id === banId));
    expect(seen.map((e) => e.event_id)).not.toContain(late.eventId);
  });

  it("a PDU for a room A does not know is ignored; one for a room A is no longer in is refused", async () => {
    const elsewhere = await createRoom(b, bob, { preset: "public_chat" });
    const m = await bobSays("not for A", elsewhere);
    const res = await sendTransaction(signerOf(b), a, [m.pdu]);
    expect([res.status, res.json]).toEqual([200, { pdus: {} }]);
    expect(await stored(m.eventId)).toBeUndefined();
    expect(await a.hs.services.rooms.store.getRoom(elsewhere)).toBeUndefined();

    // alice joins a second room, then leaves it (A has no one left there).
    const left = await createRoom(b, bob, { preset: "public_chat" });
    await joinByHand(a, b, left, alice.user_id);
    const leave = await a.call("POST", `${V3}/rooms/${enc(left)}/leave`, { token: alice.access_token, body: {} });
    expect(leave.status).toBe(200);
    const after = await bobSays("after alice left", left);
    const refused = await sendTransaction(signerOf(b), a, [after.pdu]);
    expect(refused.json.pdus[after.eventId].error).toMatch(/not in the room/);
    expect(await stored(after.eventId)).toBeUndefined();
  });

  it("dispatches EDUs to the handler of their type; unknown types and malformed EDUs are dropped", async () => {
    const got: [string, unknown][] = [];
    const handler: EduHandler = { type: "org.weft.test", handle: async (_s, origin, content) => void got.push([origin, content]) };
    a.hs.services.extensions.eduHandlers.push(handler);
    try {
      const res = await sendTransaction(signerOf(b), a, [], [
        { edu_type: "org.weft.test", content: { n: 1 } },
        { edu_type: "m.unknown.to.weft", content: {} },
        { content: { no: "type" } },
        "not an object",
        { edu_type: "org.weft.test", content: { n: 2 } },
      ]);
      expect([res.status, res.json]).toEqual([200, { pdus: {} }]);
      expect(got).toEqual([[b.serverName, { n: 1 }], [b.serverName, { n: 2 }]]);
    } finally {
      a.hs.services.extensions.eduHandlers.splice(a.hs.services.extensions.eduHandlers.indexOf(handler), 1);
    }
  });
});
