// Hostile membership requests to a Weft server (SQLite and PostgreSQL), made and signed by hand as another
// Weft server: make_join for a user of another server, for a version the origin lacks, for an unknown
// room; send_join with an event that is not a join, for another room, under another id, for a user of
// another server, not signed by the origin, changed after signing, naming a remote authoriser, or refused
// by the auth rules; invites with a bad signature, for a user of another server, of an unknown room
// version, that are not invites, or without the create event in a v12 invite_room_state (M_INVALID_PARAM).
// Each gets the spec's error and stores nothing. The good requests' answers match the spec.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { federationCall, signedBy, startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { generateSigningKey } from "../../src/domain/signing-key.ts";
import { getRoomVersion, KNOWN_ROOM_VERSIONS } from "../../src/domain/rooms/room-versions.ts";
import { buildEvent, sealEvent } from "../../src/domain/rooms/build-event.ts";
import { loadRoom } from "../../src/domain/rooms/room-cache.ts";
import type { Pdu } from "../../src/domain/events/types.ts";

const V3 = "/_matrix/client/v3";
const FED = "/_matrix/federation";
const enc = encodeURIComponent;

describe.each(backends())("hostile membership requests on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let alice: Session;
  let bob: Session;
  let roomId: string;

  beforeAll(async () => {
    [a, b] = await Promise.all([startFederatedServer({ backend }), startFederatedServer({ backend })]);
    [alice, bob] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob")]);
    roomId = await createRoom(a, alice, { preset: "public_chat", room_version: "10", name: "Guarded" });
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  /** A federation request from `from` to `to`, signed with `key` (from's own key unless given). */
  function fed(to: FederatedServer, from: FederatedServer, method: "GET" | "PUT", path: string, body?: unknown, key = from.hs.services.signingKeys[0]!) {
    const r = { method, path, body };
    return federationCall(to.baseUrl, { ...r, authorization: signedBy(from.serverName, key, to.serverName, r) });
  }

  const makeJoin = (userId: string, ver: readonly string[] = KNOWN_ROOM_VERSIONS, room = roomId) =>
    fed(a, b, "GET", `${FED}/v1/make_join/${enc(room)}/${enc(userId)}${ver.length > 0 ? "?" + ver.map((v) => `ver=${v}`).join("&") : ""}`);

  /** A join of `userId` built from A's template and signed as B (or with `key`), after `edit`. */
  async function joinEvent(userId: string, edit: (pdu: Pdu) => void = () => {}, key = b.hs.services.signingKeys[0]!) {
    const t = await makeJoin(userId);
    expect(t.status, JSON.stringify(t.json)).toBe(200);
    const pdu = { ...t.json.event, hashes: { sha256: "" }, signatures: {} } as Pdu;
    delete pdu.origin;
    edit(pdu);
    return sealEvent(pdu, getRoomVersion("10")!, { serverName: b.serverName, key });
  }

  const sendJoin = (eventId: string, body: unknown, room = roomId) => fed(a, b, "PUT", `${FED}/v2/send_join/${enc(room)}/${enc(eventId)}`, body);

  /** Nothing of it on A: the event unknown, the user's membership as it was. */
  async function storedNothing(eventId: string, userId: string, membership: string | undefined = undefined) {
    expect(await a.hs.services.rooms.events.get(eventId)).toBeUndefined();
    expect((await a.hs.services.rooms.store.membership(roomId, userId))?.membership).toBe(membership);
  }

  describe("make_join", () => {
    it("answers a template the spec describes", async () => {
      const res = await makeJoin(bob.user_id);
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expectMatchesSpec(res, "GET", "/_matrix/federation/v1/make_join/{roomId}/{userId}");
      expect(res.json.room_version).toBe("10");
      expect(res.json.event).toMatchObject({ type: "m.room.member", room_id: roomId, sender: bob.user_id, state_key: bob.user_id, content: { membership: "join" } });
      expect(res.json.event.hashes).toBeUndefined();
      expect(res.json.event.signatures).toBeUndefined();
    });

    it("for a user of another server: 403 M_FORBIDDEN", async () => {
      const res = await makeJoin(`@mallory:${a.serverName}`);
      expect([res.status, res.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    });

    it("without the room's version in ver (none given means version 1): 400 M_INCOMPATIBLE_ROOM_VERSION", async () => {
      for (const ver of [["1", "2", "11"], []]) {
        const res = await makeJoin(bob.user_id, ver);
        expect([res.status, res.json.errcode, res.json.room_version]).toEqual([400, "M_INCOMPATIBLE_ROOM_VERSION", "10"]);
      }
    });

    it("for a room A is not in: 404 M_NOT_FOUND; unsigned: 401", async () => {
      const res = await makeJoin(bob.user_id, KNOWN_ROOM_VERSIONS, `!unknown:${a.serverName}`);
      expect([res.status, res.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
      const unsigned = await federationCall(a.baseUrl, { method: "GET", path: `${FED}/v1/make_join/${enc(roomId)}/${enc(bob.user_id)}?ver=10` });
      expect([unsigned.status, unsigned.json.errcode]).toEqual([401, "M_UNAUTHORIZED"]);
    });

    it("make_leave for a user not in the room: 403 (the auth rules); for another server's user: 403", async () => {
      const res = await fed(a, b, "GET", `${FED}/v1/make_leave/${enc(roomId)}/${enc(bob.user_id)}`);
      expect([res.status, res.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
      const other = await fed(a, b, "GET", `${FED}/v1/make_leave/${enc(roomId)}/${enc(alice.user_id)}`);
      expect([other.status, other.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    });
  });

  describe("send_join", () => {
    it("an event that is not a join: 400 M_BAD_JSON, nothing stored", async () => {
      const leave = await joinEvent(bob.user_id, (p) => (p.content = { membership: "leave" }));
      const res = await sendJoin(leave.eventId, leave.pdu);
      expect([res.status, res.json.errcode]).toEqual([400, "M_BAD_JSON"]);
      await storedNothing(leave.eventId, bob.user_id);
      const message = await joinEvent(bob.user_id, (p) => {
        p.type = "m.room.message";
        delete p.state_key;
        p.content = { msgtype: "m.text", body: "hi" };
      });
      const res2 = await sendJoin(message.eventId, message.pdu);
      expect([res2.status, res2.json.errcode]).toEqual([400, "M_BAD_JSON"]);
      await storedNothing(message.eventId, bob.user_id);
    });

    it("an event for another room, or under another event id: 400 M_BAD_JSON, nothing stored", async () => {
      const other = await createRoom(a, alice, { preset: "public_chat", room_version: "10" });
      const join = await joinEvent(bob.user_id);
      const res = await sendJoin(join.eventId, join.pdu, other);
      expect([res.status, res.json.errcode]).toEqual([400, "M_BAD_JSON"]);
      const renamed = await sendJoin("$notthisone", join.pdu);
      expect([renamed.status, renamed.json.errcode]).toEqual([400, "M_BAD_JSON"]);
      await storedNothing(join.eventId, bob.user_id);
    });

    it("a join of a user of another server: 403 M_FORBIDDEN, nothing stored", async () => {
      const mallory = `@mallory:${a.serverName}`;
      const join = await joinEvent(bob.user_id, (p) => {
        p.sender = mallory;
        p.state_key = mallory;
      });
      const res = await sendJoin(join.eventId, join.pdu);
      expect([res.status, res.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
      await storedNothing(join.eventId, mallory);
    });

    it("not signed by the origin (another key, or no signature): 403 M_FORBIDDEN, nothing stored", async () => {
      const forged = { keyId: b.hs.services.signingKeys[0]!.keyId, privateKey: generateSigningKey().privateKey } as ReturnType<typeof generateSigningKey>;
      const join = await joinEvent(bob.user_id, () => {}, forged);
      const res = await sendJoin(join.eventId, join.pdu);
      expect([res.status, res.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
      const bare = await sendJoin(join.eventId, { ...join.pdu, signatures: {} });
      expect([bare.status, bare.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
      await storedNothing(join.eventId, bob.user_id);
    });

    it("content changed from the template after signing: 400 M_BAD_JSON, nothing stored", async () => {
      const join = await joinEvent(bob.user_id);
      const changed = { ...join.pdu, content: { ...join.pdu.content, displayname: "Not what was signed" } };
      const res = await sendJoin(join.eventId, changed);
      expect([res.status, res.json.errcode]).toEqual([400, "M_BAD_JSON"]);
      await storedNothing(join.eventId, bob.user_id);
    });

    it("naming an authorising user of another server: 400, nothing stored", async () => {
      const join = await joinEvent(bob.user_id, (p) => (p.content = { membership: "join", join_authorised_via_users_server: bob.user_id }));
      const res = await sendJoin(join.eventId, join.pdu);
      expect(res.status).toBe(400);
      expect(typeof res.json.errcode).toBe("string");
      await storedNothing(join.eventId, bob.user_id);
    });

    it("a join the auth rules refuse (a banned user, from a template made before the ban): 403, nothing stored", async () => {
      const eve = await registerUser(b, "eve");
      const join = await joinEvent(eve.user_id);
      expect((await a.call("POST", `${V3}/rooms/${enc(roomId)}/ban`, { token: alice.access_token, body: { user_id: eve.user_id } })).status).toBe(200);
      const res = await sendJoin(join.eventId, join.pdu);
      expect([res.status, res.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
      await storedNothing(join.eventId, eve.user_id, "ban");
      // And now make_join itself refuses her.
      const t = await makeJoin(eve.user_id);
      expect([t.status, t.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    });

    it("the good join: accepted once, answered as the spec says, and idempotent", async () => {
      const join = await joinEvent(bob.user_id, (p) => (p.content = { membership: "join", displayname: "Bob" }));
      const res = await sendJoin(join.eventId, join.pdu);
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expectMatchesSpec(res, "PUT", "/_matrix/federation/v2/send_join/{roomId}/{eventId}");
      expect(res.json.origin).toBe(a.serverName);
      expect(res.json.members_omitted).toBe(false);
      // The servers with joined members before the join (the spec's words): B had none.
      expect(res.json.servers_in_room).toEqual([a.serverName]);
      const types = (res.json.state as Pdu[]).map((e) => `${e.type}|${e.state_key}`);
      expect(types).toEqual(expect.arrayContaining(["m.room.create|", "m.room.power_levels|", "m.room.join_rules|", `m.room.member|${alice.user_id}`]));
      expect(types).not.toContain(`m.room.member|${bob.user_id}`);
      expect((res.json.auth_chain as Pdu[]).map((e) => e.type)).toContain("m.room.create");
      expect(res.json.event).toEqual(join.pdu);
      expect((await a.hs.services.rooms.store.membership(roomId, bob.user_id))?.membership).toBe("join");
      const again = await sendJoin(join.eventId, join.pdu);
      expect(again.status).toBe(200);
      expect(again.json.state).toHaveLength(res.json.state.length);
    });
  });

  describe("invite (B receives invites A signs by hand)", () => {
    /** An invite of `target` into A's room built on A (signed by A unless `key`), after `edit`. */
    async function inviteEvent(target: string, edit: (pdu: Pdu) => void = () => {}, key = a.hs.services.signingKeys[0]!) {
      const room = (await loadRoom(a.hs.services, roomId))!;
      const built = await buildEvent(a.hs.services, { roomId, version: room.version, state: room.state, extremities: room.extremities, maxDepth: room.maxDepth }, { type: "m.room.member", stateKey: target, sender: alice.user_id, content: { membership: "invite" } });
      const pdu = { ...built.pdu, hashes: { sha256: "" }, signatures: {} } as Pdu;
      edit(pdu);
      return sealEvent(pdu, room.version, { serverName: a.serverName, key });
    }
    const putInvite = (eventId: string, body: unknown, room = roomId) => fed(b, a, "PUT", `${FED}/v2/invite/${enc(room)}/${enc(eventId)}`, body);

    async function noInvite(eventId: string, userId: string) {
      expect(await b.hs.services.rooms.events.get(eventId)).toBeUndefined();
      expect(await b.hs.services.rooms.store.membership(roomId, userId)).toBeUndefined();
    }

    it("the good invite: countersigned by B and answered as the spec says", async () => {
      const gina = await registerUser(b, "gina");
      const invite = await inviteEvent(gina.user_id);
      const res = await putInvite(invite.eventId, { room_version: "10", event: invite.pdu, invite_room_state: [] });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expectMatchesSpec(res, "PUT", "/_matrix/federation/v2/invite/{roomId}/{eventId}");
      expect(Object.keys(res.json.event.signatures).sort()).toEqual([a.serverName, b.serverName].sort());
      expect({ ...res.json.event, signatures: invite.pdu.signatures }).toEqual(invite.pdu);
      expect((await b.hs.services.rooms.store.membership(roomId, gina.user_id))?.membership).toBe("invite");
    });

    it("a bad signature: 400 M_INVALID_PARAM, nothing stored", async () => {
      const hank = await registerUser(b, "hank");
      const forged = { keyId: a.hs.services.signingKeys[0]!.keyId, privateKey: generateSigningKey().privateKey } as ReturnType<typeof generateSigningKey>;
      const invite = await inviteEvent(hank.user_id, () => {}, forged);
      const res = await putInvite(invite.eventId, { room_version: "10", event: invite.pdu });
      expect([res.status, res.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
      await noInvite(invite.eventId, hank.user_id);
      const sync = await b.call("GET", `${V3}/sync`, { token: hank.access_token });
      expect(sync.json.rooms?.invite?.[roomId]).toBeUndefined();
    });

    it("for a user of another server, or an unknown local user: 400 M_INVALID_PARAM / 404, nothing stored", async () => {
      const invite = await inviteEvent(`@someone:${a.serverName}`);
      const res = await putInvite(invite.eventId, { room_version: "10", event: invite.pdu });
      expect([res.status, res.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
      expect(await b.hs.services.rooms.events.get(invite.eventId)).toBeUndefined();
      const ghost = await inviteEvent(`@ghost:${b.serverName}`);
      const res2 = await putInvite(ghost.eventId, { room_version: "10", event: ghost.pdu });
      expect([res2.status, res2.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
      expect(await b.hs.services.rooms.events.get(ghost.eventId)).toBeUndefined();
    });

    it("an unknown room version: 400 M_INCOMPATIBLE_ROOM_VERSION; no room_version: 400 M_MISSING_PARAM", async () => {
      const ivy = await registerUser(b, "ivy");
      const invite = await inviteEvent(ivy.user_id);
      const res = await putInvite(invite.eventId, { room_version: "99", event: invite.pdu });
      expect([res.status, res.json.errcode, res.json.room_version]).toEqual([400, "M_INCOMPATIBLE_ROOM_VERSION", "99"]);
      const none = await putInvite(invite.eventId, { event: invite.pdu });
      expect([none.status, none.json.errcode]).toEqual([400, "M_MISSING_PARAM"]);
      await noInvite(invite.eventId, ivy.user_id);
    });

    it("not an invite, not from the origin's user, another event id: 400 M_INVALID_PARAM", async () => {
      const jo = await registerUser(b, "jo");
      const join = await inviteEvent(jo.user_id, (p) => (p.content = { membership: "join" }));
      expect((await putInvite(join.eventId, { room_version: "10", event: join.pdu })).json.errcode).toBe("M_INVALID_PARAM");
      const foreign = await inviteEvent(jo.user_id, (p) => (p.sender = `@alice:${b.serverName}`));
      expect((await putInvite(foreign.eventId, { room_version: "10", event: foreign.pdu })).json.errcode).toBe("M_INVALID_PARAM");
      const good = await inviteEvent(jo.user_id);
      expect((await putInvite("$another", { room_version: "10", event: good.pdu })).json.errcode).toBe("M_INVALID_PARAM");
      for (const e of [join, foreign, good]) expect(await b.hs.services.rooms.events.get(e.eventId)).toBeUndefined();
      expect(await b.hs.services.rooms.store.membership(roomId, jo.user_id)).toBeUndefined();
    });

    it("room version 12: invite_room_state without the create event (as a PDU) is 400 M_INVALID_PARAM (spec v1.18)", async () => {
      const v12 = await createRoom(a, alice, { preset: "private_chat", room_version: "12", name: "Twelve" });
      const kim = await registerUser(b, "kim");
      const room = (await loadRoom(a.hs.services, v12))!;
      const built = await buildEvent(a.hs.services, { roomId: v12, version: room.version, state: room.state, extremities: room.extremities, maxDepth: room.maxDepth }, { type: "m.room.member", stateKey: kim.user_id, sender: alice.user_id, content: { membership: "invite" } });
      const put = (state: unknown) => fed(b, a, "PUT", `${FED}/v2/invite/${enc(v12)}/${enc(built.eventId)}`, { room_version: "12", event: built.pdu, invite_room_state: state });
      const create = (await a.hs.services.rooms.events.get(room.createEventId))!.pdu;
      const stripped = { type: "m.room.create", state_key: "", sender: create.sender, content: create.content };
      for (const state of [[], [stripped]]) {
        const res = await put(state);
        expect([res.status, res.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
      }
      // A create event of another room.
      const other = (await loadRoom(a.hs.services, roomId))!;
      const wrong = await put([(await a.hs.services.rooms.events.get(other.createEventId))!.pdu]);
      expect([wrong.status, wrong.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
      expect(await b.hs.services.rooms.events.get(built.eventId)).toBeUndefined();
      // With it: accepted.
      const ok = await put([create]);
      expect(ok.status, JSON.stringify(ok.json)).toBe(200);
      expect((await b.hs.services.rooms.store.membership(v12, kim.user_id))?.membership).toBe("invite");
    });
  });
});
