// A local user joins a room held by a scripted remote server (a stand-in serving a hand-built room),
// SQLite and PostgreSQL: what the remote answers reaches our client as Synapse passes it through — a
// make_join refusal with its status, errcode and other fields (M_INCOMPATIBLE_ROOM_VERSION with its
// room_version; a 401 as 400, M_UNKNOWN_TOKEN as M_UNKNOWN), a make_join naming a room version this
// server does not implement as 400 M_UNSUPPORTED_ROOM_VERSION with room_version, a 5xx or M_NOT_FOUND
// making way for the next server; and a send_join answer (v1, the remote serving no v2) whose state holds
// no m.room.create is refused at once (502), the room left unknown here.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { startFakeOrigin, type FakeAnswer, type FakeOrigin, type FakeRequest } from "../helpers/fake-origin.ts";
import { Dag } from "../helpers/dag.ts";
import { unsignedPdu } from "../../src/domain/rooms/build-event.ts";
import { stateKeyOf } from "../../src/domain/store/state-groups.ts";
import type { Pdu } from "../../src/domain/events/types.ts";

const V3 = "/_matrix/client/v3";
const FED = "/_matrix/federation";
const enc = encodeURIComponent;

describe.each(backends())("remote join failures reaching the client on %s", (backend) => {
  let a: FederatedServer;
  let r: FakeOrigin;
  let other: FakeOrigin;
  let alice: Session;
  let dag: Dag;
  let room: { create: Pdu; state: Pdu[]; stateIds: Map<string, string>; tip: string; depth: number };

  beforeAll(async () => {
    [a, r, other] = await Promise.all([startFederatedServer({ backend }), startFakeOrigin(), startFakeOrigin()]);
    alice = await registerUser(a, "alice");
    // The remote's room: create, its creator's join, power levels, public join rules (built and signed as R).
    dag = new Dag(a.hs.services, "10");
    const events = await dag.create(r, r.user("creator"));
    const stateIds = new Map(events.map((e) => [stateKeyOf(e.pdu.type, e.pdu.state_key!), e.eventId]));
    room = { create: events[0]!.pdu, state: events.map((e) => e.pdu), stateIds, tip: events[3]!.eventId, depth: events[3]!.pdu.depth };
  });
  afterAll(async () => {
    await Promise.all([a?.close(), r?.close(), other?.close()]);
  });

  /** R's make_join template for `userId` on its room (what a resident server answers), room version 10. */
  async function template(userId: string): Promise<Record<string, unknown>> {
    const ctx = { roomId: dag.roomId, version: dag.v, state: room.stateIds, extremities: [room.tip], maxDepth: room.depth };
    const pdu = await unsignedPdu(a.hs.services, ctx, { type: "m.room.member", stateKey: userId, sender: userId, content: { membership: "join" } }, Date.now(), r.serverName);
    const { hashes: _h, signatures: _s, ...t } = pdu;
    return t;
  }

  const join = (via: string[] = [r.serverName]) =>
    a.call("POST", `${V3}/join/${enc(dag.roomId)}?${via.map((v) => `via=${enc(v)}`).join("&")}`, { token: alice.access_token, body: {} });
  const makeJoinAnswer = (answer: FakeAnswer) => (req: FakeRequest): FakeAnswer => (req.path.startsWith(`${FED}/v1/make_join/`) ? answer : undefined);
  const roomUnknown = async () => expect(await a.hs.services.rooms.store.getRoom(dag.roomId)).toBeUndefined();

  it("a make_join refusal reaches the client with the remote's status, errcode and fields", async () => {
    r.handler = makeJoinAnswer({ status: 400, json: { errcode: "M_TEST_ERROR_CODE", error: "denied!" } });
    const res = await join();
    expect([res.status, res.json]).toEqual([400, { errcode: "M_TEST_ERROR_CODE", error: "denied!" }]);

    r.handler = makeJoinAnswer({ status: 400, json: { errcode: "M_INCOMPATIBLE_ROOM_VERSION", error: "y u no upgrade", room_version: "sytest-room-ver" } });
    const incompatible = await join();
    expect([incompatible.status, incompatible.json]).toEqual([400, { errcode: "M_INCOMPATIBLE_ROOM_VERSION", error: "y u no upgrade", room_version: "sytest-room-ver" }]);

    r.handler = makeJoinAnswer({ status: 403, json: { errcode: "M_FORBIDDEN", error: "You are not invited to this room." } });
    const forbidden = await join();
    expect([forbidden.status, forbidden.json]).toEqual([403, { errcode: "M_FORBIDDEN", error: "You are not invited to this room." }]);

    // What would mean something else coming from us is not passed on as is.
    r.handler = makeJoinAnswer({ status: 401, json: { errcode: "M_UNKNOWN_TOKEN", error: "who are you" } });
    const unauthorized = await join();
    expect([unauthorized.status, unauthorized.json.errcode]).toEqual([400, "M_UNKNOWN"]);
    await roomUnknown();
  });

  it("a final refusal ends the search; a 5xx or M_NOT_FOUND makes way for the next server", async () => {
    r.handler = makeJoinAnswer({ status: 400, json: { errcode: "M_TEST_ERROR_CODE", error: "denied!" } });
    other.handler = makeJoinAnswer({ status: 400, json: { errcode: "M_OTHER_ERROR", error: "from the other" } });
    other.requests.length = 0;
    const final = await join([r.serverName, other.serverName]);
    expect([final.status, final.json.errcode]).toEqual([400, "M_TEST_ERROR_CODE"]);
    expect(other.requests.filter((q) => q.path.includes("/make_join/"))).toEqual([]);

    for (const first of [{ status: 500, json: { errcode: "M_UNKNOWN", error: "oops" } }, { status: 404, json: { errcode: "M_NOT_FOUND", error: "Unknown room" } }]) {
      r.handler = makeJoinAnswer(first);
      const next = await join([r.serverName, other.serverName]);
      expect([next.status, next.json.errcode], JSON.stringify(first)).toEqual([400, "M_OTHER_ERROR"]);
    }
    await roomUnknown();
  });

  it("a make_join naming a room version this server lacks: 400 M_UNSUPPORTED_ROOM_VERSION with room_version", async () => {
    const t = await template(alice.user_id);
    r.handler = makeJoinAnswer({ status: 200, json: { room_version: "sytest-room-ver", event: t } });
    other.requests.length = 0;
    const res = await join([r.serverName, other.serverName]);
    expect([res.status, res.json.errcode, res.json.room_version]).toEqual([400, "M_UNSUPPORTED_ROOM_VERSION", "sytest-room-ver"]);
    expect(other.requests).toEqual([]);
    await roomUnknown();
  });

  it("a send_join answer (v1) without an m.room.create in its state is refused at once", async () => {
    const t = await template(alice.user_id);
    r.handler = (req) => {
      if (req.path.startsWith(`${FED}/v1/make_join/`)) return { status: 200, json: { room_version: "10", event: t } };
      // A server from before v2: v2 is unknown to it, v1 answers [200, {...}] without the create event.
      if (req.path.startsWith(`${FED}/v2/send_join/`)) return { status: 404, json: { errcode: "M_UNRECOGNIZED", error: "Unrecognized request" } };
      if (req.path.startsWith(`${FED}/v1/send_join/`)) return { status: 200, json: [200, { origin: r.serverName, state: room.state.slice(1), auth_chain: room.state.slice(1) }] };
      return undefined;
    };
    r.requests.length = 0;
    const started = Date.now();
    const res = await join();
    expect([res.status, res.json.errcode], JSON.stringify(res.json)).toEqual([502, "M_UNKNOWN"]);
    expect(res.json.error).toMatch(/create event/);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(r.requests.map((q) => q.path.split("/").slice(3, 5).join("/"))).toEqual(["v1/make_join", "v2/send_join", "v1/send_join"]);
    await roomUnknown();
  });
});
