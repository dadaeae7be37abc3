// Server ACLs between two Weft servers over TLS on loopback (SQLite and PostgreSQL). A is named
// `localhost:PORT`, B by IP literal on 127.0.0.1, and an ACL matches hosts without their ports, so an ACL
// denying "127.0.0.1" (or IP literals) shuts B out of A's room: B's PDUs are answered "Server is banned
// from room" and not stored, its typing is dropped, its room reads and invites are 403, and A's events no
// longer go to B; lifting the ACL lets B back in. An ACL that would deny A itself is refused (400, as
// Synapse), through the state API and createRoom's initial_state alike — A's full name is matched, port
// included, as Synapse's self-check does: C, a third server named `localhost:PORT` like A, is shut out by
// an ACL denying "localhost", which A takes; C is then refused on every room endpoint, v1 and v2.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { FederationError } from "../../src/federation/errors.ts";
import { destinationsOfEvents, remoteServersInRoom } from "../../src/domain/federation/room-servers.ts";
import { eventOnRoom, sendTransaction, signedCall, signerOf } from "../helpers/by-hand.ts";
import { loadRoom } from "../../src/domain/rooms/room-cache.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("server ACLs across Weft servers on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let c: FederatedServer;
  let alice: Session;
  let bob: Session;
  let carol: Session;
  let roomId: string;
  let txn = 0;

  beforeAll(async () => {
    [a, b, c] = await Promise.all([startFederatedServer({ backend, name: "localhost" }), startFederatedServer({ backend }), startFederatedServer({ backend, name: "localhost" })]);
    [alice, bob, carol] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob"), registerUser(c, "carol")]);
    roomId = await createRoom(a, alice, { preset: "public_chat" });
    for (const [t, who] of [[b, bob], [c, carol]] as const) {
      const join = await t.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: who.access_token, body: {} });
      expect(join.status, JSON.stringify(join.json)).toBe(200);
      await eventually(async () => (await a.hs.services.rooms.store.membership(roomId, who.user_id))?.membership === "join", `${who.user_id} joined on A`);
    }
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close(), c?.close()]);
  });

  const setAcl = async (content: Record<string, unknown>) => {
    const res = await a.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.server_acl/`, { token: alice.access_token, body: content });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  };
  /** B reads the room's state ids from A (a room-scoped federation read). */
  const stateIdsFromB = async (eventId: string) => {
    try {
      await b.hs.services.federation.getJson(a.serverName, `/_matrix/federation/v1/state_ids/${enc(roomId)}`, { event_id: eventId });
      return 200;
    } catch (err) {
      if (err instanceof FederationError && err.kind === "remote") return `${err.remoteStatus} ${err.remoteErrcode}`;
      throw err;
    }
  };
  /** The answer A gave B for the transaction carrying `eventId`, once there is one. */
  const answerFor = (eventId: string) =>
    eventually(async () => {
      const rows = await a.hs.services.storage.sql.all<{ response: string }>(`SELECT response FROM received_transactions WHERE origin = ?`, [b.serverName]);
      return rows.map((r) => JSON.parse(r.response).pdus?.[eventId]).find((x) => x !== undefined);
    }, `A's answer for ${eventId}`);

  it("an ACL denying B reaches B; then B's PDUs, typing and room reads are refused, and A sends it nothing more", async () => {
    const before = await setAcl({ allow: ["*"] });
    expect(await stateIdsFromB(before)).toBe(200);
    const aclId = await setAcl({ allow: ["*"], deny: ["127.0.0.1"], allow_ip_literals: true });

    // Room-scoped reads: 403 M_FORBIDDEN.
    expect(await stateIdsFromB(aclId)).toBe("403 M_FORBIDDEN");
    const make = await b.hs.services.federation.getJson(a.serverName, `/_matrix/federation/v1/make_join/${enc(roomId)}/${enc(`@carol:${b.serverName}`)}`, { ver: ["10"] }).catch((e: FederationError) => e);
    expect(make instanceof FederationError && make.remoteStatus === 403).toBe(true);

    // The ACL itself reaches B (as Synapse sends it: the ACL before it is in force); B's server still lets
    // bob's typing and message go to A, which refuses them.
    await eventually(async () => (await b.hs.services.rooms.events.get(aclId)) !== undefined, "the ACL on B");
    const typing = await b.call("PUT", `${V3}/rooms/${enc(roomId)}/typing/${enc(bob.user_id)}`, { token: bob.access_token, body: { typing: true, timeout: 20000 } });
    expect(typing.status).toBe(200);
    const msg = await b.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/t${++txn}`, { token: bob.access_token, body: { msgtype: "m.text", body: "let me in" } });
    expect(msg.status).toBe(200);
    expect(await answerFor(msg.json.event_id)).toEqual({ error: "Server is banned from room" });
    const onA = await a.call("GET", `${V3}/rooms/${enc(roomId)}/event/${enc(msg.json.event_id)}`, { token: alice.access_token });
    expect(onA.status).toBe(404);
    const sync = await a.call("GET", `${V3}/sync`, { token: alice.access_token });
    const typingNow = (sync.json.rooms?.join?.[roomId]?.ephemeral?.events ?? []).find((e: any) => e.type === "m.typing");
    expect(typingNow?.content.user_ids ?? []).not.toContain(bob.user_id);

    // A's own events and EDUs no longer go to B.
    const mine = await a.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/a${++txn}`, { token: alice.access_token, body: { msgtype: "m.text", body: "not for B" } });
    const stored = (await a.hs.services.rooms.events.get(mine.json.event_id))!;
    expect((await destinationsOfEvents(a.hs.services, [stored])).get(stored.eventId)).toEqual([c.serverName]);
    expect(await remoteServersInRoom(a.hs.services, roomId)).toEqual([c.serverName]);

    // Lifted: B reads the room again, and is a destination again.
    const lifted = await setAcl({ allow: ["*"] });
    expect(await stateIdsFromB(lifted)).toBe(200);
    expect((await remoteServersInRoom(a.hs.services, roomId)).sort()).toEqual([b.serverName, c.serverName].sort());
  });

  it("an invite from a server the room's ACL denies is refused (403); lifted, the same invite is taken", async () => {
    const carol = await registerUser(a, "carol");
    const pl = await a.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.power_levels/`, { token: alice.access_token });
    const plSet = await a.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.power_levels/`, { token: alice.access_token, body: { ...pl.json, invite: 0 } });
    expect(plSet.status).toBe(200);
    const invite = await eventOnRoom(a.hs.services, roomId, signerOf(b), { type: "m.room.member", stateKey: carol.user_id, sender: bob.user_id, content: { membership: "invite" } });
    const create = await a.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.create/`, { token: alice.access_token });
    const put = () => signedCall(signerOf(b), a, "PUT", `/_matrix/federation/v2/invite/${enc(roomId)}/${enc(invite.eventId)}`, { room_version: create.json.room_version ?? "1", event: invite.pdu, invite_room_state: [] });
    await setAcl({ allow: ["*"], deny: ["127.0.0.1"] });
    const refused = await put();
    expect(refused.status, JSON.stringify(refused.json)).toBe(403);
    expect(refused.json).toEqual({ errcode: "M_FORBIDDEN", error: "Server is banned from room" });
    expect(await a.hs.services.rooms.events.get(invite.eventId)).toBeUndefined();
    await setAcl({ allow: ["*"] });
    const taken = await put();
    expect(taken.status, JSON.stringify(taken.json)).toBe(200);
  });

  it("an ACL that would deny this server itself is refused, in the state API and in createRoom", async () => {
    // A's full name is matched, port included (Synapse's self-check): "localhost" alone allows it not.
    const refusals = [{ allow: [] }, { deny: ["*"] }, {}, { allow: ["LOCALHOST"], deny: ["local*"] }, { allow: ["localhost"] }, { allow: ["*"], deny: [a.serverName.toUpperCase()] }];
    const aclBefore = await a.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.server_acl/`, { token: alice.access_token });
    for (const content of refusals) {
      const res = await a.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.server_acl/`, { token: alice.access_token, body: content });
      expect(res.status, JSON.stringify(content)).toBe(400);
      expect(res.json).toEqual({ errcode: "M_UNKNOWN", error: "Can't create an ACL event that denies the local server" });
    }
    const aclAfter = await a.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.server_acl/`, { token: alice.access_token });
    expect(aclAfter.json).toEqual(aclBefore.json);
    // Allowed: our own name, matched without regard to case.
    await setAcl({ allow: ["LOCALHOST:*", "127.0.0.1"], deny: ["elsewhere.example"] });
    await setAcl({ allow: ["*"] });

    const rooms = async () => (await a.call("GET", `${V3}/joined_rooms`, { token: alice.access_token })).json.joined_rooms as string[];
    const before = await rooms();
    const create = await a.call("POST", `${V3}/createRoom`, { token: alice.access_token, body: { initial_state: [{ type: "m.room.server_acl", state_key: "", content: { allow: ["other.example"] } }] } });
    expect(create.status).toBe(400);
    expect(create.json.errcode).toBe("M_UNKNOWN");
    expect(await rooms()).toEqual(before);
  });

  it("on a host shared with A, an ACL denying the host is taken and shuts C out of every room endpoint (ports not considered)", async () => {
    expect(a.serverName.split(":")[0]).toBe("localhost");
    expect(c.serverName.split(":")[0]).toBe("localhost");
    const aclId = await setAcl({ allow: ["*"], deny: ["localhost"] });
    const asC = (method: "GET" | "PUT" | "POST", path: string, body?: unknown) => signedCall(signerOf(c), a, method, path, body);
    const F = "/_matrix/federation";
    // C's PDUs: each answered "Server is banned from room", none stored.
    const msg = await eventOnRoom(a.hs.services, roomId, signerOf(c), { type: "m.room.message", sender: carol.user_id, content: { msgtype: "m.text", body: "still here?" } });
    const sent = await sendTransaction(signerOf(c), a, [msg.pdu]);
    expect([sent.status, sent.json]).toEqual([200, { pdus: { [msg.eventId]: { error: "Server is banned from room" } } }]);
    expect(await a.hs.services.rooms.events.get(msg.eventId)).toBeUndefined();
    // Every room endpoint: 403 M_FORBIDDEN.
    const leave = await eventOnRoom(a.hs.services, roomId, signerOf(c), { type: "m.room.member", stateKey: carol.user_id, sender: carol.user_id, content: { membership: "leave" } });
    const invite = await eventOnRoom(a.hs.services, roomId, signerOf(c), { type: "m.room.member", stateKey: `@dora:${a.serverName}`, sender: carol.user_id, content: { membership: "invite" } });
    const version = (await loadRoom(a.hs.services, roomId))!.version.id;
    const calls: [string, () => ReturnType<typeof asC>][] = [
      ["make_join", () => asC("GET", `${F}/v1/make_join/${enc(roomId)}/${enc(`@dan:${c.serverName}`)}?ver=${version}`)],
      ["make_leave", () => asC("GET", `${F}/v1/make_leave/${enc(roomId)}/${enc(carol.user_id)}`)],
      ["send_join v1", () => asC("PUT", `${F}/v1/send_join/${enc(roomId)}/${enc(leave.eventId)}`, leave.pdu)],
      ["send_join v2", () => asC("PUT", `${F}/v2/send_join/${enc(roomId)}/${enc(leave.eventId)}`, leave.pdu)],
      ["send_leave v1", () => asC("PUT", `${F}/v1/send_leave/${enc(roomId)}/${enc(leave.eventId)}`, leave.pdu)],
      ["send_leave v2", () => asC("PUT", `${F}/v2/send_leave/${enc(roomId)}/${enc(leave.eventId)}`, leave.pdu)],
      ["invite v1", () => asC("PUT", `${F}/v1/invite/${enc(roomId)}/${enc(invite.eventId)}`, invite.pdu)],
      ["invite v2", () => asC("PUT", `${F}/v2/invite/${enc(roomId)}/${enc(invite.eventId)}`, { room_version: version, event: invite.pdu, invite_room_state: [] })],
      ["state", () => asC("GET", `${F}/v1/state/${enc(roomId)}?event_id=${enc(aclId)}`)],
      ["state_ids", () => asC("GET", `${F}/v1/state_ids/${enc(roomId)}?event_id=${enc(aclId)}`)],
      ["backfill", () => asC("GET", `${F}/v1/backfill/${enc(roomId)}?v=${enc(aclId)}&limit=10`)],
      ["event_auth", () => asC("GET", `${F}/v1/event_auth/${enc(roomId)}/${enc(aclId)}`)],
      ["get_missing_events", () => asC("POST", `${F}/v1/get_missing_events/${enc(roomId)}`, { earliest_events: [], latest_events: [aclId], limit: 10 })],
    ];
    for (const [what, call] of calls) {
      const res = await call();
      expect([res.status, res.json], what).toEqual([403, { errcode: "M_FORBIDDEN", error: "Server is banned from room" }]);
    }
    expect((await a.hs.services.rooms.store.membership(roomId, carol.user_id))?.membership).toBe("join");
    // B, on another host, still reads the room; A's events go to B and not to C.
    expect(await stateIdsFromB(aclId)).toBe(200);
    expect(await remoteServersInRoom(a.hs.services, roomId)).toEqual([b.serverName]);
    const lifted = await setAcl({ allow: ["*"] });
    const back = await asC("GET", `${F}/v1/state_ids/${enc(roomId)}?event_id=${enc(lifted)}`);
    expect(back.status, JSON.stringify(back.json)).toBe(200);
    expect((await remoteServersInRoom(a.hs.services, roomId)).sort()).toEqual([b.serverName, c.serverName].sort());
  });

  it("allow_ip_literals: false shuts out servers named by IP literal", async () => {
    const aclId = await setAcl({ allow: ["*"], allow_ip_literals: false });
    expect(await stateIdsFromB(aclId)).toBe("403 M_FORBIDDEN");
    const lifted = await setAcl({ allow: ["*"] });
    expect(await stateIdsFromB(lifted)).toBe(200);
  });
});
