// The v1 membership APIs older servers still use (SQLite and PostgreSQL), between two Weft servers over
// TLS. Inbound: PUT /v1/send_join, /v1/send_leave and /v1/invite are served, with v1's `[200, {...}]`
// answers, and take effect as their v2 twins do. Outbound: to a server that answers v2 with 404
// M_UNRECOGNIZED (B, as A's client sees it: A's v2 requests are sent to a path B does not serve, and B
// answers 404 M_UNRECOGNIZED itself), joins, leaves and invites fall back to v1 — invites only in rooms of
// versions 1 and 2, whose event format v1 carries (400 M_UNSUPPORTED_ROOM_VERSION otherwise, as Synapse).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { eventOnRoom, signPdu, signedCall, signerOf } from "../helpers/by-hand.ts";
import { eventIdOf } from "../../src/domain/events/hashes.ts";
import { verifyJsonSignature } from "../../src/domain/signing.ts";
import { redactEvent } from "../../src/domain/events/redaction.ts";
import type { Pdu } from "../../src/domain/events/types.ts";
import type { Services } from "../../src/domain/services.ts";
import { leaveRemoteRoom } from "../../src/domain/federation/membership/leave-remote.ts";

const V3 = "/_matrix/client/v3";
const FED = "/_matrix/federation";
const enc = encodeURIComponent;

/**
 * Makes `s`'s outbound v2 send_join, send_leave and invite go to `/v0/...`, which no server serves (the
 * remote's own 404 M_UNRECOGNIZED comes back, as from a server without v2); records those it PUTs.
 */
function remotesServeNoV2(s: Services): string[] {
  const fed = s.federation;
  const original = fed.putJson.bind(fed);
  const puts: string[] = [];
  fed.putJson = ((dest: string, path: string, ...rest: unknown[]) => {
    const sent = path.replace(/^\/_matrix\/federation\/v2\/(send_join|send_leave|invite)\//, "/_matrix/federation/v0/$1/");
    const handshake = /^\/_matrix\/federation\/(v\d\/(?:send_join|send_leave|invite))\//.exec(sent);
    if (handshake) puts.push(handshake[1]!);
    return (original as (...a: unknown[]) => Promise<unknown>)(dest, sent, ...rest);
  }) as typeof fed.putJson;
  return puts;
}

describe.each(backends())("v1 membership APIs on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let alice: Session;
  let bob: Session;
  let puts: string[];

  beforeAll(async () => {
    [a, b] = await Promise.all([startFederatedServer({ backend }), startFederatedServer({ backend })]);
    [alice, bob] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob")]);
    puts = remotesServeNoV2(a.hs.services);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  const asB = (method: "GET" | "PUT", path: string, body?: unknown) => signedCall(signerOf(b), a, method, path, body);
  const membershipOnA = async (roomId: string, userId: string) => (await a.hs.services.rooms.store.membership(roomId, userId))?.membership;

  /** B completes A's make_join / make_leave template for `userId` and signs it. */
  async function completed(roomId: string, userId: string, kind: "join" | "leave") {
    const t = await asB("GET", `${FED}/v1/make_${kind}/${enc(roomId)}/${enc(userId)}${kind === "join" ? "?ver=10" : ""}`);
    expect(t.status, JSON.stringify(t.json)).toBe(200);
    return signPdu({ ...t.json.event, origin_server_ts: Date.now() } as Pdu, t.json.room_version, signerOf(b));
  }

  it("inbound PUT /v1/send_join and /v1/send_leave: v1's [200, {...}] answers, and the membership takes effect", async () => {
    const roomId = await createRoom(a, alice, { preset: "public_chat", room_version: "10" });
    const join = await completed(roomId, bob.user_id, "join");
    const res = await asB("PUT", `${FED}/v1/send_join/${enc(roomId)}/${enc(join.eventId)}`, join.pdu);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(Array.isArray(res.json) && res.json.length === 2 && res.json[0] === 200).toBe(true);
    const answer = res.json[1];
    expect(answer.origin).toBe(a.serverName);
    const stateTypes = (answer.state as Pdu[]).map((e) => e.type).sort();
    expect(stateTypes).toEqual(["m.room.create", "m.room.history_visibility", "m.room.join_rules", "m.room.member", "m.room.power_levels"]);
    expect((answer.auth_chain as Pdu[]).map((e) => eventIdOf(e, "10"))).toContain((answer.state as Pdu[]).map((e) => eventIdOf(e, "10")).find((id, i) => answer.state[i].type === "m.room.create"));
    expect(await membershipOnA(roomId, bob.user_id)).toBe("join");

    const leave = await completed(roomId, bob.user_id, "leave");
    const left = await asB("PUT", `${FED}/v1/send_leave/${enc(roomId)}/${enc(leave.eventId)}`, leave.pdu);
    expect([left.status, left.json]).toEqual([200, [200, {}]]);
    expect(await membershipOnA(roomId, bob.user_id)).toBe("leave");
    // Refusals are v2's: a join that is not one.
    const again = await completed(roomId, bob.user_id, "join");
    const wrong = await asB("PUT", `${FED}/v1/send_join/${enc(roomId)}/${enc(again.eventId)}`, { ...again.pdu, room_id: "!other:elsewhere" });
    expect([wrong.status, wrong.json.errcode]).toEqual([400, "M_BAD_JSON"]);
    expect(await membershipOnA(roomId, bob.user_id)).toBe("leave");
  });

  it("inbound PUT /v1/invite: the event itself as the body, its stripped state in unsigned; answered [200, {event}] countersigned", async () => {
    const carol = await registerUser(a, "carol");
    const roomId = await createRoom(b, bob, { preset: "private_chat", room_version: "2", name: "Old room" });
    const invite = await eventOnRoom(b.hs.services, roomId, signerOf(b), { type: "m.room.member", stateKey: carol.user_id, sender: bob.user_id, content: { membership: "invite" } });
    const stripped = [{ type: "m.room.name", state_key: "", sender: bob.user_id, content: { name: "Old room" } }];
    const res = await asB("PUT", `${FED}/v1/invite/${enc(roomId)}/${enc(invite.eventId)}`, { ...invite.pdu, unsigned: { invite_room_state: stripped } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(res.json[0]).toBe(200);
    expectMatchesSpec(res, "PUT", `${FED}/v1/invite/x/y`);
    const signed = res.json[1].event as Pdu;
    expect(signed.event_id).toBe(invite.eventId);
    const keyId = a.hs.services.signingKeys[0]!.keyId;
    expect(verifyJsonSignature(redactEvent(signed, "2"), a.serverName, keyId, a.hs.services.signingKeys[0]!.publicKeyObject)).toBe(true);
    const sync = await a.call("GET", `${V3}/sync`, { token: carol.access_token });
    const invited = sync.json.rooms?.invite?.[roomId];
    expect(invited, JSON.stringify(sync.json.rooms)).toBeDefined();
    expect(invited.invite_state.events.find((e: { type: string }) => e.type === "m.room.name")?.content).toEqual({ name: "Old room" });

    // A room of version 3 or later cannot be carried by v1: its events fail version 1's format.
    const newer = await createRoom(b, bob, { preset: "private_chat", room_version: "10" });
    const dave = await registerUser(a, "dave");
    const v10 = await eventOnRoom(b.hs.services, newer, signerOf(b), { type: "m.room.member", stateKey: dave.user_id, sender: bob.user_id, content: { membership: "invite" } });
    const refused = await asB("PUT", `${FED}/v1/invite/${enc(newer)}/${enc(v10.eventId)}`, v10.pdu);
    expect([refused.status, refused.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    expect(await a.hs.services.rooms.events.get(v10.eventId)).toBeUndefined();
  });

  it("outbound: a server that answers v2 with 404 M_UNRECOGNIZED is asked v1 for send_join, send_leave and invite", async () => {
    const roomId = await createRoom(b, bob, { preset: "public_chat", room_version: "2", name: "On B" });
    puts.length = 0;
    const joined = await a.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(b.serverName)}`, { token: alice.access_token, body: {} });
    expect(joined.status, JSON.stringify(joined.json)).toBe(200);
    expect(puts).toEqual(["v0/send_join", "v1/send_join"]);
    expect((await b.hs.services.rooms.store.membership(roomId, alice.user_id))?.membership).toBe("join");
    const name = await a.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.name/`, { token: alice.access_token });
    expect([name.status, name.json]).toEqual([200, { name: "On B" }]);

    // alice invites a user of B into a room of A (version 2): v1 invite, countersigned by B.
    const mine = await createRoom(a, alice, { preset: "private_chat", room_version: "2" });
    const erin = await registerUser(b, "erin");
    puts.length = 0;
    const invited = await a.call("POST", `${V3}/rooms/${enc(mine)}/invite`, { token: alice.access_token, body: { user_id: erin.user_id } });
    expect(invited.status, JSON.stringify(invited.json)).toBe(200);
    expect(puts).toEqual(["v0/invite", "v1/invite"]);
    expect(await membershipOnA(mine, erin.user_id)).toBe("invite");
    await eventually(async () => (await b.hs.services.rooms.store.membership(mine, erin.user_id))?.membership === "invite", "erin's invite on B");

    // In a version 10 room v1 cannot carry the invite: 400 M_UNSUPPORTED_ROOM_VERSION, nothing stored.
    const v10 = await createRoom(a, alice, { preset: "private_chat", room_version: "10" });
    const refused = await a.call("POST", `${V3}/rooms/${enc(v10)}/invite`, { token: alice.access_token, body: { user_id: erin.user_id } });
    expect([refused.status, refused.json.errcode]).toEqual([400, "M_UNSUPPORTED_ROOM_VERSION"]);
    expect(await membershipOnA(v10, erin.user_id)).toBeUndefined();

    // alice leaves B's room through B (make_leave, then send_leave v1).
    puts.length = 0;
    await leaveRemoteRoom(a.hs.services, roomId, alice.user_id, [b.serverName], { membership: "leave" });
    await eventually(async () => (await b.hs.services.rooms.store.membership(roomId, alice.user_id))?.membership === "leave", "alice's leave on B");
    expect(puts).toEqual(["v0/send_leave", "v1/send_leave"]);
  });
});
