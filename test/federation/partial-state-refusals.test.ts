// What a room joined with partial state refuses to other servers, as Synapse does (Weft↔Weft over TLS, SQLite
// and PostgreSQL): B joins A's room with partial state (its /state fetch held back), and while it is partial
// B answers make_join / send_join / make_knock / send_knock / send_leave with 404 M_NOT_FOUND, /state,
// /state_ids, /event and /event_auth with 403 ORG.MATRIX.MSC3895_UNABLE_DUE_TO_PARTIAL_STATE; it serves
// /backfill and /get_missing_events to the servers its join named, with other servers' events redacted.
// Once the full state is in, every one of them answers normally.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { startFakeOrigin, type FakeOrigin } from "../helpers/fake-origin.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { fillRoomWithMembers } from "../helpers/big-room.ts";
import { eventOnRoom, signedCall, signerOf } from "../helpers/by-hand.ts";
import { holdStateFetches } from "../helpers/partial-state.ts";
import { isPartialState } from "../../src/domain/federation/partial-state/flag.ts";
import { loadRoom } from "../../src/domain/rooms/room-cache.ts";

const V3 = "/_matrix/client/v3";
const F1 = "/_matrix/federation/v1";
const enc = encodeURIComponent;
const PARTIAL = "ORG.MATRIX.MSC3895_UNABLE_DUE_TO_PARTIAL_STATE";

describe.each(backends())("a partial-state room's refusals to other servers on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let f: FakeOrigin;
  let stranger: FakeOrigin;
  let alice: Session;
  let bob: Session;

  beforeAll(async () => {
    f = await startFakeOrigin((req) => (req.path.startsWith(`${F1}/send/`) ? { status: 200, json: { pdus: {} } } : undefined));
    stranger = await startFakeOrigin();
    [a, b] = await Promise.all([startFederatedServer({ backend }), startFederatedServer({ backend })]);
    [alice, bob] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob")]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close(), f?.close(), stranger?.close()]);
  });

  it("refuses what it cannot answer while partial, serves history redacted, and answers all once complete", async () => {
    const roomId = await createRoom(a, alice, { preset: "public_chat", name: "Partial refusals", room_version: "10" });
    await fillRoomWithMembers(a.hs.services, roomId, f, 30);
    const hold = holdStateFetches(b.hs.services);
    const joined = await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: bob.access_token, body: {} });
    expect(joined.status, JSON.stringify(joined.json)).toBe(200);
    expect(await isPartialState(b.hs.services, roomId)).toBe(true);
    const bobJoin = (await loadRoom(b.hs.services, roomId))!.state.get(`m.room.member\u0000${bob.user_id}`)!;

    // History on B while partial: alice's message (from A), then bob's.
    const fromA = await a.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/r1`, { token: alice.access_token, body: { msgtype: "m.text", body: "from A" } });
    expect(fromA.status).toBe(200);
    await eventually(async () => (await b.hs.services.rooms.events.get(fromA.json.event_id))?.stateGroup != null, "B receiving alice's message");
    const fromB = await b.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/r2`, { token: bob.access_token, body: { msgtype: "m.text", body: "from B" } });
    expect(fromB.status, JSON.stringify(fromB.json)).toBe(200);

    const A = signerOf(a);
    const asA = (method: "GET" | "PUT" | "POST", path: string, body?: unknown) => signedCall(A, b, method, path, body);
    const newcomer = `@newcomer:${a.serverName}`;
    const join = await eventOnRoom(b.hs.services, roomId, A, { type: "m.room.member", stateKey: newcomer, sender: newcomer, content: { membership: "join" } });
    const knock = await eventOnRoom(b.hs.services, roomId, A, { type: "m.room.member", stateKey: newcomer, sender: newcomer, content: { membership: "knock" } });
    const leave = await eventOnRoom(b.hs.services, roomId, A, { type: "m.room.member", stateKey: alice.user_id, sender: alice.user_id, content: { membership: "leave" } });

    const handshakes = [
      await asA("GET", `${F1}/make_join/${enc(roomId)}/${enc(newcomer)}?ver=10`),
      await signedCall(A, b, "PUT", `/_matrix/federation/v2/send_join/${enc(roomId)}/${enc(join.eventId)}`, join.pdu),
      await asA("GET", `${F1}/make_knock/${enc(roomId)}/${enc(newcomer)}?ver=10`),
      await asA("PUT", `${F1}/send_knock/${enc(roomId)}/${enc(knock.eventId)}`, knock.pdu),
      await signedCall(A, b, "PUT", `/_matrix/federation/v2/send_leave/${enc(roomId)}/${enc(leave.eventId)}`, leave.pdu),
    ];
    for (const r of handshakes) expect([r.status, r.json.errcode], JSON.stringify(r.json)).toEqual([404, "M_NOT_FOUND"]);
    // Nothing was stored from the refused handshakes.
    for (const id of [join.eventId, knock.eventId, leave.eventId]) expect(await b.hs.services.rooms.events.get(id)).toBeUndefined();

    const reads = [
      await asA("GET", `${F1}/state/${enc(roomId)}?event_id=${enc(fromB.json.event_id)}`),
      await asA("GET", `${F1}/state_ids/${enc(roomId)}?event_id=${enc(fromB.json.event_id)}`),
      await asA("GET", `${F1}/event/${enc(fromB.json.event_id)}`),
      await asA("GET", `${F1}/event_auth/${enc(roomId)}/${enc(fromB.json.event_id)}`),
    ];
    for (const r of reads) expect([r.status, r.json.errcode], JSON.stringify(r.json)).toEqual([403, PARTIAL]);

    // /backfill and /get_missing_events are served to a server the join named; A's events come redacted.
    const bodies = (pdus: { event_id?: string; content: Record<string, unknown>; sender: string; type: string }[]) =>
      new Map(pdus.filter((p) => p.type === "m.room.message").map((p) => [p.sender, p.content["body"]]));
    const backfill = await asA("GET", `${F1}/backfill/${enc(roomId)}?v=${enc(fromB.json.event_id)}&limit=10`);
    expect(backfill.status, JSON.stringify(backfill.json)).toBe(200);
    expect(bodies(backfill.json.pdus)).toEqual(new Map([[bob.user_id, "from B"], [alice.user_id, undefined]]));
    const missing = await asA("POST", `${F1}/get_missing_events/${enc(roomId)}`, { earliest_events: [bobJoin], latest_events: [fromB.json.event_id], limit: 10 });
    expect(missing.status, JSON.stringify(missing.json)).toBe(200);
    expect(bodies(missing.json.events)).toEqual(new Map([[alice.user_id, undefined]]));
    // A server in neither the partial state nor the join's servers is not in the room.
    const outsider = await signedCall(stranger, b, "GET", `${F1}/backfill/${enc(roomId)}?v=${enc(fromB.json.event_id)}&limit=10`);
    expect([outsider.status, outsider.json.errcode]).toEqual([403, "M_FORBIDDEN"]);

    // The full state arrives: everything answers.
    hold.release();
    await eventually(async () => !(await isPartialState(b.hs.services, roomId)), "B completing the room's state", 60_000);
    for (const r of [
      await asA("GET", `${F1}/state_ids/${enc(roomId)}?event_id=${enc(fromB.json.event_id)}`),
      await asA("GET", `${F1}/event/${enc(fromB.json.event_id)}`),
      await asA("GET", `${F1}/make_join/${enc(roomId)}/${enc(newcomer)}?ver=10`),
    ]) expect(r.status, JSON.stringify(r.json).slice(0, 300)).toBe(200);
    const full = await asA("GET", `${F1}/state/${enc(roomId)}?event_id=${enc(fromB.json.event_id)}`);
    expect(full.status).toBe(200);
    expect((full.json.pdus as { type: string }[]).filter((e) => e.type === "m.room.member").length).toBe(32);
    const again = await asA("GET", `${F1}/backfill/${enc(roomId)}?v=${enc(fromB.json.event_id)}&limit=10`);
    expect(bodies(again.json.pdus)).toEqual(new Map([[bob.user_id, "from B"], [alice.user_id, "from A"]]));
  }, 180_000);
});
