// What Weft serves other servers about its rooms, over TLS: GET /event, /event_auth, /state, /state_ids,
// /backfill and POST /get_missing_events for a room of A's alice (history visibility `joined`) that bob of
// B joined (by hand until make_join lands): the spec's shapes and walks, the state *before* an event, the
// auth chain of one event only, history from before B had a member served redacted, and the refusals —
// 404 for an unknown room or event (a rejected one too), 403 for a server with no member in the room (a
// stand-in server whose keys A can fetch), 400 for a bad request. SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { eventOnRoom, joinByHand, sendMessages, sendTransaction, signedCall, signerOf, type Signer } from "../helpers/by-hand.ts";
import { startFakeOrigin, type FakeOrigin } from "../helpers/fake-origin.ts";
import { eventIdOf } from "../../src/domain/events/hashes.ts";
import { authEventIds, type Pdu } from "../../src/domain/events/types.ts";
import { loadRoom } from "../../src/domain/rooms/room-cache.ts";
import type { RoomVersion } from "../../src/domain/rooms/room-versions.ts";

const V3 = "/_matrix/client/v3";
const F = "/_matrix/federation/v1";
const enc = encodeURIComponent;

describe.each(backends())("serving events and state to other servers on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let stranger: FakeOrigin;
  let alice: Session;
  let bob: Session;
  let roomId: string;
  let version: RoomVersion;
  let before: string;
  let bobJoin: string;
  const m: string[] = [];

  beforeAll(async () => {
    [a, b, stranger] = await Promise.all([startFederatedServer({ backend }), startFederatedServer({ backend }), startFakeOrigin()]);
    [alice, bob] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob")]);
    roomId = await createRoom(a, alice, {
      preset: "public_chat",
      initial_state: [{ type: "m.room.history_visibility", state_key: "", content: { history_visibility: "joined" } }],
    });
    version = (await loadRoom(a.hs.services, roomId))!.version;
    before = (await sendMessages(a, alice.access_token, roomId, "said before B had anyone here ", 1))[0]!;
    bobJoin = await joinByHand(b, a, roomId, bob.user_id);
    m.push(...(await sendMessages(a, alice.access_token, roomId, "m", 5)));
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close(), stranger?.close()]);
  });

  const asB = (method: "GET" | "POST", path: string, body?: unknown) => signedCall(signerOf(b), a, method, path, body);
  const asStranger = (method: "GET" | "POST", path: string, body?: unknown) => signedCall(stranger as Signer, a, method, path, body);
  const pdu = async (id: string) => (await a.hs.services.rooms.events.get(id))!.pdu;
  const idOf = (p: Pdu) => eventIdOf(p, version);

  /** The auth chain of `ids` from A's store (the test's own walk over auth_events). */
  async function authChain(ids: string[]): Promise<Set<string>> {
    const out = new Set<string>();
    let front = (await Promise.all(ids.map(pdu))).flatMap((p) => authEventIds(p));
    while (front.length > 0) {
      const next: string[] = [];
      for (const id of front) {
        if (out.has(id)) continue;
        out.add(id);
        next.push(...authEventIds(await pdu(id)));
      }
      front = next;
    }
    return out;
  }

  async function refusals(path: (room: string, event: string) => string, method: "GET" | "POST" = "GET", body?: unknown) {
    const unknownRoom = await asB(method, path("!nowhere:" + a.serverName, m[0]!), body);
    expect([unknownRoom.status, unknownRoom.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    const outsider = await asStranger(method, path(roomId, m[0]!), body);
    expect([outsider.status, outsider.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    const unsigned = await a.call(method, path(roomId, m[0]!), { body });
    expect([unsigned.status, unsigned.json.errcode]).toEqual([401, "M_UNAUTHORIZED"]);
  }

  it("GET /event: the event as stored, transaction-shaped; redacted when B may not see it; refusals", async () => {
    const res = await asB("GET", `${F}/event/${enc(m[0]!)}`);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "GET", `${F}/event/x`);
    expect(res.json.origin).toBe(a.serverName);
    expect(res.json.pdus).toEqual([await pdu(m[0]!)]);
    // From before B had a member, under `joined` visibility: redacted (same id: ids hash the redacted form).
    const hidden = await asB("GET", `${F}/event/${enc(before)}`);
    expect(hidden.status).toBe(200);
    expect(hidden.json.pdus[0].content).toEqual({});
    expect(hidden.json.pdus[0].hashes).toEqual((await pdu(before)).hashes);
    expect(idOf(hidden.json.pdus[0])).toBe(before);

    const unknown = await asB("GET", `${F}/event/${enc("$nothing-like-it")}`);
    expect([unknown.status, unknown.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    const outsider = await asStranger("GET", `${F}/event/${enc(m[0]!)}`);
    expect([outsider.status, outsider.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    // A rejected event (bob names the room without the power to) is never served.
    const rejected = await eventOnRoom(a.hs.services, roomId, signerOf(b), { type: "m.room.name", stateKey: "", sender: bob.user_id, content: { name: "bob's room" } });
    const sent = await sendTransaction(signerOf(b), a, [rejected.pdu]);
    // Processed (and rejected): answered {} as Synapse does.
    expect(sent.json.pdus[rejected.eventId]).toEqual({});
    expect((await a.hs.services.rooms.events.get(rejected.eventId))!.rejectedReason).not.toBeNull();
    const notServed = await asB("GET", `${F}/event/${enc(rejected.eventId)}`);
    expect([notServed.status, notServed.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    // Nor the state at it.
    for (const endpoint of ["state", "state_ids"]) {
      const res = await asB("GET", `${F}/${endpoint}/${enc(roomId)}?event_id=${enc(rejected.eventId)}`);
      expect([res.status, res.json.errcode], endpoint).toEqual([404, "M_NOT_FOUND"]);
    }
  });

  it("GET /state_ids and /state: the state before the event and its auth chain; refusals", async () => {
    const res = await asB("GET", `${F}/state_ids/${enc(roomId)}?event_id=${enc(m[2]!)}`);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "GET", `${F}/state_ids/x`);
    const m2 = (await a.hs.services.rooms.events.get(m[1]!))!;
    const expected = [...(await a.hs.services.rooms.stateGroups.get(m2.stateGroup!)).values()];
    expect([...res.json.pdu_ids].sort()).toEqual(expected.sort());
    expect(res.json.pdu_ids).toContain(bobJoin);
    expect(new Set(res.json.auth_chain_ids)).toEqual(await authChain(expected));

    // At bob's join: the state before it, which has no member event for bob.
    const atJoin = await asB("GET", `${F}/state_ids/${enc(roomId)}?event_id=${enc(bobJoin)}`);
    expect(atJoin.status).toBe(200);
    expect(atJoin.json.pdu_ids).not.toContain(bobJoin);
    const kinds = await Promise.all(atJoin.json.pdu_ids.map(async (id: string) => [(await pdu(id)).type, (await pdu(id)).state_key]));
    expect(kinds).not.toContainEqual(["m.room.member", bob.user_id]);

    const full = await asB("GET", `${F}/state/${enc(roomId)}?event_id=${enc(m[2]!)}`);
    expect(full.status).toBe(200);
    expectMatchesSpec(full, "GET", `${F}/state/x`);
    expect(full.json.pdus.map(idOf).sort()).toEqual([...res.json.pdu_ids].sort());
    expect(full.json.auth_chain.map(idOf).sort()).toEqual([...res.json.auth_chain_ids].sort());

    for (const kind of ["state", "state_ids"]) {
      const missing = await asB("GET", `${F}/${kind}/${enc(roomId)}`);
      expect([missing.status, missing.json.errcode]).toEqual([400, "M_MISSING_PARAM"]);
      const unknownEvent = await asB("GET", `${F}/${kind}/${enc(roomId)}?event_id=${enc("$unknown")}`);
      expect([unknownEvent.status, unknownEvent.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
      await refusals((room, event) => `${F}/${kind}/${enc(room)}?event_id=${enc(event)}`);
    }
  });

  it("GET /event_auth: the auth chain of that one event, not the room's whole state", async () => {
    const res = await asB("GET", `${F}/event_auth/${enc(roomId)}/${enc(m[2]!)}`);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "GET", `${F}/event_auth/x/y`);
    const ids = res.json.auth_chain.map(idOf);
    expect(new Set(ids)).toEqual(await authChain([m[2]!]));
    expect(ids).not.toContain(bobJoin);
    expect(ids).not.toContain(m[2]);
    const types = res.json.auth_chain.map((p: Pdu) => p.type);
    expect(types).toContain("m.room.create");
    expect(types).not.toContain("m.room.history_visibility");
    const unknownEvent = await asB("GET", `${F}/event_auth/${enc(roomId)}/${enc("$unknown")}`);
    expect([unknownEvent.status, unknownEvent.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    await refusals((room, event) => `${F}/event_auth/${enc(room)}/${enc(event)}`);
  });

  it("POST /get_missing_events: the breadth-first walk between earliest and latest, limit and min_depth; refusals", async () => {
    const gme = (body: unknown) => asB("POST", `${F}/get_missing_events/${enc(roomId)}`, body);
    const res = await gme({ earliest_events: [m[0]], latest_events: [m[4]], limit: 10 });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "POST", `${F}/get_missing_events/x`);
    expect(res.json.events.map(idOf)).toEqual([m[1], m[2], m[3]]);
    const two = await gme({ earliest_events: [m[0]], latest_events: [m[4]], limit: 2 });
    expect(two.json.events.map(idOf)).toEqual([m[2], m[3]]);
    const deep = await gme({ earliest_events: [m[0]], latest_events: [m[4]], min_depth: (await pdu(m[3]!)).depth });
    expect(deep.json.events.map(idOf)).toEqual([m[3]]);
    // Walking back into history B may not see: served redacted.
    const back = await gme({ earliest_events: [], latest_events: [bobJoin], limit: 1 });
    expect(back.json.events.map(idOf)).toEqual([before]);
    expect(back.json.events[0].content).toEqual({});

    for (const [body, errcode] of [
      [{ latest_events: [m[4]] }, "M_MISSING_PARAM"],
      [{ earliest_events: [], latest_events: m[4] }, "M_BAD_JSON"],
      [{ earliest_events: [1], latest_events: [m[4]] }, "M_BAD_JSON"],
      [{ earliest_events: [], latest_events: [m[4]], limit: "10" }, "M_BAD_JSON"],
    ] as const) {
      const bad = await gme(body);
      expect([bad.status, bad.json.errcode], JSON.stringify(body)).toEqual([400, errcode]);
    }
    await refusals((room) => `${F}/get_missing_events/${enc(room)}`, "POST", { earliest_events: [], latest_events: [m[4]] });
  });

  it("GET /backfill: the given events and those before them, newest first, up to the limit; refusals", async () => {
    const res = await asB("GET", `${F}/backfill/${enc(roomId)}?v=${enc(m[4]!)}&limit=3`);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "GET", `${F}/backfill/x`);
    expect(res.json.origin).toBe(a.serverName);
    expect(res.json.pdus.map(idOf)).toEqual([m[4], m[3], m[2]]);
    // Everything back to the create event; history from before B had a member, redacted.
    const all = await asB("GET", `${F}/backfill/${enc(roomId)}?v=${enc(m[4]!)}&limit=1000`);
    const ids = all.json.pdus.map(idOf);
    expect(all.json.pdus[all.json.pdus.length - 1].type).toBe("m.room.create");
    expect(ids).toEqual(expect.arrayContaining([...m, bobJoin, before]));
    expect(all.json.pdus.find((p: Pdu) => idOf(p) === before).content).toEqual({});
    expect(all.json.pdus.find((p: Pdu) => idOf(p) === m[0]).content.body).toBe("m1");
    const depths = all.json.pdus.map((p: Pdu) => p.depth);
    expect(depths).toEqual([...depths].sort((x, y) => y - x));

    const noV = await asB("GET", `${F}/backfill/${enc(roomId)}?limit=3`);
    expect([noV.status, noV.json.errcode]).toEqual([400, "M_MISSING_PARAM"]);
    const noLimit = await asB("GET", `${F}/backfill/${enc(roomId)}?v=${enc(m[4]!)}`);
    expect([noLimit.status, noLimit.json.errcode]).toEqual([400, "M_MISSING_PARAM"]);
    const badLimit = await asB("GET", `${F}/backfill/${enc(roomId)}?v=${enc(m[4]!)}&limit=many`);
    expect([badLimit.status, badLimit.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    await refusals((room, event) => `${F}/backfill/${enc(room)}?v=${enc(event)}&limit=5`);
  });
});
