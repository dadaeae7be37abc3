// Our join of a room held by another server (make_join / send_join) is that server's to send on to the
// room's other servers: we never push it ourselves (Synapse: proactively_send false). What we send next
// (a message) reaches the resident server alone in its transaction. SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { startFakeOrigin, type FakeOrigin, type FakeRequest } from "../helpers/fake-origin.ts";
import { Dag } from "../helpers/dag.ts";
import { unsignedPdu } from "../../src/domain/rooms/build-event.ts";
import { stateKeyOf } from "../../src/domain/store/state-groups.ts";
import { eventually } from "../helpers/federation-peer.ts";

const V3 = "/_matrix/client/v3";
const FED = "/_matrix/federation";
const enc = encodeURIComponent;

describe.each(backends())("our own join through a remote server on %s", (backend) => {
  let a: FederatedServer;
  let r: FakeOrigin;
  let alice: Session;
  let dag: Dag;

  beforeAll(async () => {
    [a, r] = await Promise.all([startFederatedServer({ backend }), startFakeOrigin()]);
    alice = await registerUser(a, "alice");
    dag = new Dag(a.hs.services, "10");
    const events = await dag.create(r, r.user("creator"));
    const stateIds = new Map(events.map((e) => [stateKeyOf(e.pdu.type, e.pdu.state_key!), e.eventId]));
    const tip = events[events.length - 1]!;
    const ctx = { roomId: dag.roomId, version: dag.v, state: stateIds, extremities: [tip.eventId], maxDepth: tip.pdu.depth };
    const pdu = await unsignedPdu(a.hs.services, ctx, { type: "m.room.member", stateKey: alice.user_id, sender: alice.user_id, content: { membership: "join" } }, Date.now(), r.serverName);
    const { hashes: _h, signatures: _s, ...template } = pdu;
    const state = events.map((e) => e.pdu);
    r.handler = (req: FakeRequest) => {
      if (req.path.startsWith(`${FED}/v1/make_join/`)) return { status: 200, json: { room_version: "10", event: template } };
      if (req.path.startsWith(`${FED}/v2/send_join/`)) return { status: 200, json: { origin: r.serverName, state, auth_chain: state } };
      if (req.path.startsWith(`${FED}/v1/send/`)) return { status: 200, json: { pdus: {} } };
      return undefined;
    };
  });
  afterAll(async () => {
    await Promise.all([a?.close(), r?.close()]);
  });

  it("sends the message after the join, never the join", async () => {
    const joined = await a.call("POST", `${V3}/join/${enc(dag.roomId)}?via=${enc(r.serverName)}`, { token: alice.access_token, body: {} });
    expect(joined.status, JSON.stringify(joined.json)).toBe(200);
    const sent = await a.call("PUT", `${V3}/rooms/${enc(dag.roomId)}/send/m.room.message/t1`, { token: alice.access_token, body: { msgtype: "m.text", body: "hello" } });
    expect(sent.status).toBe(200);
    const pushed = () => r.requests.filter((q) => q.path.startsWith(`${FED}/v1/send/`)).flatMap((q) => (q.body as { pdus: { type: string }[] }).pdus);
    await eventually(() => pushed().some((p) => p.type === "m.room.message"), "the message reaches the resident server");
    expect(pushed().map((p) => p.type)).toEqual(["m.room.message"]);
  });
});
