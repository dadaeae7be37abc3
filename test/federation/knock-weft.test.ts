// Knocking across two Weft servers over TLS on loopback (SQLite and PostgreSQL): a user of B knocks on a
// knock room of A through /knock?server_name= (room versions 7, 10 and 12) and sees it in /sync
// rooms.knock with the room's stripped state; A's moderator answers with an invite, which B's user
// accepts; a knock refused by A's moderator (a kick) and a knock withdrawn by its user both end it on
// both sides; knock_restricted (v10). Bad input: knocks on rooms that do not allow them (join rule
// invite, version 6), hand-signed make_knock / send_knock requests that break the spec's rules, and
// restricted joins (v8, v9, v10) not signed by the authorising user's server, are refused as the spec
// says and store nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { federationCall, signedBy, startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { getRoomVersion, KNOWN_ROOM_VERSIONS } from "../../src/domain/rooms/room-versions.ts";
import { addSignature, buildEvent, sealEvent } from "../../src/domain/rooms/build-event.ts";
import { receiveRemoteEvents } from "../../src/domain/rooms/receive.ts";
import { loadRoom } from "../../src/domain/rooms/room-cache.ts";
import type { Pdu } from "../../src/domain/events/types.ts";

const V3 = "/_matrix/client/v3";
const FED = "/_matrix/federation";
const enc = encodeURIComponent;

describe.each(backends())("knocking across Weft servers on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let alice: Session;

  beforeAll(async () => {
    [a, b] = await Promise.all([startFederatedServer({ backend }), startFederatedServer({ backend })]);
    alice = await registerUser(a, "alice");
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  const knockRoom = (version: string, rule = "knock", extra: Record<string, unknown> = {}) =>
    createRoom(a, alice, { preset: "private_chat", room_version: version, name: `Knock v${version}`, initial_state: [{ type: "m.room.join_rules", state_key: "", content: { join_rule: rule, ...extra } }] });

  async function membershipOn(t: FederatedServer, roomId: string, userId: string): Promise<string | undefined> {
    return (await t.hs.services.rooms.store.membership(roomId, userId))?.membership;
  }

  const knock = (who: Session, roomId: string, via = a.serverName) =>
    b.call("POST", `${V3}/knock/${enc(roomId)}?server_name=${enc(via)}`, { token: who.access_token, body: { reason: "let me in" } });

  /** A federation request from B to A, signed by B. */
  function fed(method: "GET" | "PUT", path: string, body?: unknown) {
    const r = { method, path, body };
    return federationCall(a.baseUrl, { ...r, authorization: signedBy(b.serverName, b.hs.services.signingKeys[0]!, a.serverName, r) });
  }

  for (const version of ["7", "10", "12"]) {
    it(`a user of B knocks on a version ${version} room of A, sees it in /sync rooms.knock, and joins once invited`, async () => {
      const roomId = await knockRoom(version);
      const kim = await registerUser(b, `kim${version}`);
      const res = await knock(kim, roomId);
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expect(res.json).toEqual({ room_id: roomId });
      expectMatchesSpec(res, "POST", "/_matrix/client/v3/knock/{roomIdOrAlias}");

      // A holds the knock in the room's state.
      const onA = await a.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(kim.user_id)}`, { token: alice.access_token });
      expect(onA.json).toMatchObject({ membership: "knock", reason: "let me in" });

      // B's /sync: rooms.knock with the stripped state A answered, and the knock itself.
      const sync = await b.call("GET", `${V3}/sync`, { token: kim.access_token });
      expect(sync.status).toBe(200);
      const section = sync.json.rooms.knock[roomId];
      expect(section, JSON.stringify(sync.json.rooms)).toBeDefined();
      const events = section.knock_state.events as { type: string; state_key: string; content: Record<string, unknown> }[];
      expect(events.find((e) => e.type === "m.room.create")?.content.room_version ?? "1").toBe(version);
      expect(events.find((e) => e.type === "m.room.join_rules")?.content.join_rule).toBe("knock");
      expect(events.find((e) => e.type === "m.room.name")?.content.name).toBe(`Knock v${version}`);
      expect(events.find((e) => e.type === "m.room.member" && e.state_key === kim.user_id)?.content.membership).toBe("knock");
      expect(sync.json.rooms.join?.[roomId]).toBeUndefined();

      // A's moderator answers the knock with an invite; it reaches B, and kim joins through A.
      const invite = await a.call("POST", `${V3}/rooms/${enc(roomId)}/invite`, { token: alice.access_token, body: { user_id: kim.user_id } });
      expect(invite.status, JSON.stringify(invite.json)).toBe(200);
      await eventually(async () => (await membershipOn(b, roomId, kim.user_id)) === "invite", "the invite reaching B");
      const join = await b.call("POST", `${V3}/join/${enc(roomId)}`, { token: kim.access_token, body: {} });
      expect(join.status, JSON.stringify(join.json)).toBe(200);
      expect(await membershipOn(a, roomId, kim.user_id)).toBe("join");
      expect(await membershipOn(b, roomId, kim.user_id)).toBe("join");
    });
  }

  it("a knock refused by A's moderator (a kick) reaches the knocker on B, who is then out of the room", async () => {
    const roomId = await knockRoom("10");
    const ken = await registerUser(b, "ken");
    expect((await knock(ken, roomId)).status).toBe(200);
    const before = await b.call("GET", `${V3}/sync`, { token: ken.access_token });
    expect(before.json.rooms.knock[roomId]).toBeDefined();
    const kick = await a.call("POST", `${V3}/rooms/${enc(roomId)}/kick`, { token: alice.access_token, body: { user_id: ken.user_id, reason: "not today" } });
    expect(kick.status, JSON.stringify(kick.json)).toBe(200);
    await eventually(async () => (await membershipOn(b, roomId, ken.user_id)) === "leave", "the refusal reaching B");
    const sync = await b.call("GET", `${V3}/sync?since=${enc(before.json.next_batch)}`, { token: ken.access_token });
    expect(sync.json.rooms?.knock?.[roomId]).toBeUndefined();
    const left = sync.json.rooms?.leave?.[roomId];
    expect(left, JSON.stringify(sync.json.rooms)).toBeDefined();
    // The room's history is not B's to show: the refusal is all ken sees.
    const refusal = (left.timeline.events as { type: string; state_key: string; sender: string; content: Record<string, unknown> }[]).find((e) => e.type === "m.room.member" && e.state_key === ken.user_id);
    expect(refusal).toMatchObject({ sender: alice.user_id, content: { membership: "leave", reason: "not today" } });
    // Knocking again is allowed after a refusal.
    expect((await knock(ken, roomId)).status).toBe(200);
    expect(await membershipOn(a, roomId, ken.user_id)).toBe("knock");
  });

  it("a knock withdrawn by its user on B leaves through A (make_leave / send_leave)", async () => {
    const roomId = await knockRoom("10");
    const kay = await registerUser(b, "kay");
    expect((await knock(kay, roomId)).status).toBe(200);
    const leave = await b.call("POST", `${V3}/rooms/${enc(roomId)}/leave`, { token: kay.access_token, body: {} });
    expect(leave.status, JSON.stringify(leave.json)).toBe(200);
    expect(await membershipOn(a, roomId, kay.user_id)).toBe("leave");
    expect(await membershipOn(b, roomId, kay.user_id)).toBe("leave");
    const sync = await b.call("GET", `${V3}/sync`, { token: kay.access_token });
    expect(sync.json.rooms.knock?.[roomId]).toBeUndefined();
  });

  it("knock_restricted (v10): a user of B knocks, and a member of the allowed room joins without knocking", async () => {
    const space = await createRoom(a, alice, { preset: "public_chat", name: "Space" });
    const roomId = await knockRoom("10", "knock_restricted", { allow: [{ type: "m.room_membership", room_id: space }] });
    const [kit, kel] = await Promise.all([registerUser(b, "kit"), registerUser(b, "kel")]);
    expect((await knock(kit, roomId)).status).toBe(200);
    expect(await membershipOn(a, roomId, kit.user_id)).toBe("knock");
    // Not in the space: no join.
    const refused = await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: kel.access_token, body: {} });
    expect([refused.status, refused.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    expect((await b.call("POST", `${V3}/join/${enc(space)}?via=${enc(a.serverName)}`, { token: kel.access_token, body: {} })).status).toBe(200);
    const joined = await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: kel.access_token, body: {} });
    expect(joined.status, JSON.stringify(joined.json)).toBe(200);
    const join = await a.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(kel.user_id)}`, { token: alice.access_token });
    expect(join.json).toMatchObject({ membership: "join", join_authorised_via_users_server: alice.user_id });
  });

  it("knocks on rooms that do not allow them are refused by A, and B stores nothing", async () => {
    const nope = await registerUser(b, "nope");
    const inviteOnly = await knockRoom("10", "invite");
    const r1 = await knock(nope, inviteOnly);
    expect([r1.status, r1.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    expect(await membershipOn(b, inviteOnly, nope.user_id)).toBeUndefined();
    expect(await membershipOn(a, inviteOnly, nope.user_id)).toBeUndefined();
    // Version 6 has no knocking: A says 403 before looking at the join rules.
    const v6 = await createRoom(a, alice, { preset: "private_chat", room_version: "6" });
    const t = await fed("GET", `${FED}/v1/make_knock/${enc(v6)}/${enc(nope.user_id)}?${KNOWN_ROOM_VERSIONS.map((v) => `ver=${v}`).join("&")}`);
    expect([t.status, t.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    const r2 = await knock(nope, v6);
    expect([r2.status, r2.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    expect(await b.hs.services.rooms.store.getRoom(v6)).toBeUndefined();
  });

  for (const version of ["8", "9", "10"]) {
    it(`a restricted join (v${version}) naming A's user but not signed by A fails its signature check on receipt; with A's signature it is accepted`, async () => {
      const space = await createRoom(a, alice, { preset: "public_chat", room_version: version });
      const roomId = await knockRoom(version, "restricted", { allow: [{ type: "m.room_membership", room_id: space }] });
      const s = a.hs.services;
      const userId = `@wanda${version}:${b.serverName}`;
      const signerB = { serverName: b.serverName, key: b.hs.services.signingKeys[0]! };
      // wanda is in the allowed room (her join built and signed as B would, received by A).
      const sp = (await loadRoom(s, space))!;
      const spaceJoin = await buildEvent(s, { roomId: space, version: sp.version, state: sp.state, extremities: sp.extremities, maxDepth: sp.maxDepth }, { type: "m.room.member", stateKey: userId, sender: userId, content: { membership: "join" } }, Date.now(), signerB);
      expect((await receiveRemoteEvents(s, space, [{ pdu: spaceJoin.pdu }]))[0]).toMatchObject({ status: "accepted" });

      const room = (await loadRoom(s, roomId))!;
      const ctx = { roomId, version: room.version, state: room.state, extremities: room.extremities, maxDepth: room.maxDepth };
      const draft = { type: "m.room.member", stateKey: userId, sender: userId, content: { membership: "join", join_authorised_via_users_server: alice.user_id } };
      const onlyB = await buildEvent(s, ctx, draft, Date.now(), signerB);
      // The authorising server's signature is one the event needs (as Synapse): without it, dropped.
      const [refused] = await receiveRemoteEvents(s, roomId, [{ pdu: onlyB.pdu }]);
      expect(refused).toMatchObject({ status: "dropped" });
      expect(await s.rooms.events.get(onlyB.eventId)).toBeUndefined();
      expect(await membershipOn(a, roomId, userId)).toBeUndefined();

      // The same join countersigned by A (the authorising user's server): accepted.
      const both = await buildEvent(s, ctx, draft, Date.now() + 1, signerB);
      const countersigned = addSignature(both.pdu, room.version, { serverName: a.serverName, key: s.signingKeys[0]! });
      const [accepted] = await receiveRemoteEvents(s, roomId, [{ pdu: countersigned }]);
      expect(accepted).toMatchObject({ status: "accepted" });
      expect(await membershipOn(a, roomId, userId)).toBe("join");
    });
  }

  it("hand-signed make_knock / send_knock that break the spec's rules get its errors, and A stores nothing", async () => {
    const roomId = await knockRoom("10");
    const userId = `@mallory:${b.serverName}`;
    const base = `${FED}/v1/make_knock/${enc(roomId)}/${enc(userId)}`;
    // `ver` is required; a version list without the room's is M_INCOMPATIBLE_ROOM_VERSION with the version.
    const noVer = await fed("GET", base);
    expect([noVer.status, noVer.json.errcode]).toEqual([400, "M_MISSING_PARAM"]);
    const old = await fed("GET", `${base}?ver=6`);
    expect([old.status, old.json.errcode, old.json.room_version]).toEqual([400, "M_INCOMPATIBLE_ROOM_VERSION", "10"]);
    // Another server's user.
    const other = await fed("GET", `${FED}/v1/make_knock/${enc(roomId)}/${enc(alice.user_id)}?ver=10`);
    expect([other.status, other.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    const unknown = await fed("GET", `${FED}/v1/make_knock/${enc(`!nowhere:${a.serverName}`)}/${enc(userId)}?ver=10`);
    expect([unknown.status, unknown.json.errcode]).toEqual([404, "M_NOT_FOUND"]);

    const t = await fed("GET", `${base}?ver=10`);
    expect(t.status, JSON.stringify(t.json)).toBe(200);
    expectMatchesSpec(t, "GET", "/_matrix/federation/v1/make_knock/{roomId}/{userId}");
    expect(t.json).toMatchObject({ room_version: "10", event: { type: "m.room.member", state_key: userId, sender: userId, content: { membership: "knock" } } });
    const v = getRoomVersion("10")!;
    const seal = (edit: (p: Pdu) => void) => {
      const pdu = { ...t.json.event, hashes: { sha256: "" }, signatures: {} } as Pdu;
      edit(pdu);
      return sealEvent(pdu, v, { serverName: b.serverName, key: b.hs.services.signingKeys[0]! });
    };
    const sendKnock = (eventId: string, body: unknown) => fed("PUT", `${FED}/v1/send_knock/${enc(roomId)}/${enc(eventId)}`, body);

    const notKnock = seal((p) => (p.content = { membership: "join" }));
    const r1 = await sendKnock(notKnock.eventId, notKnock.pdu);
    expect([r1.status, r1.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    const forOther = seal((p) => {
      p.sender = alice.user_id;
      p.state_key = alice.user_id;
    });
    const r2 = await sendKnock(forOther.eventId, forOther.pdu);
    expect([r2.status, r2.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    const good = seal(() => {});
    const tampered = { ...good.pdu, content: { membership: "knock", reason: "changed after signing" } };
    const r3 = await sendKnock(good.eventId, tampered);
    expect([r3.status, r3.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    const wrongId = await sendKnock("$not-this-one", good.pdu);
    expect([wrongId.status, wrongId.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    expect(await membershipOn(a, roomId, userId)).toBeUndefined();

    // The good one: knock_room_state as PDUs, the create event among them.
    const ok = await sendKnock(good.eventId, good.pdu);
    expect(ok.status, JSON.stringify(ok.json)).toBe(200);
    expectMatchesSpec(ok, "PUT", "/_matrix/federation/v1/send_knock/{roomId}/{eventId}");
    const state = ok.json.knock_room_state as Pdu[];
    expect(state.find((e) => e.type === "m.room.create")).toMatchObject({ signatures: expect.any(Object), hashes: expect.any(Object) });
    expect(ok.json.knock_state_events).toEqual(state);
    expect(await membershipOn(a, roomId, userId)).toBe("knock");
  });
});
