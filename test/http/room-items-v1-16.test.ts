// Room items of spec v1.16–v1.18 on one server, Weft on SQLite and PostgreSQL and the same scenarios on a
// live Synapse (its experimental msc4169 and msc4155 on, as the scenarios need):
// - invite blocking (v1.18, MSC4380): `m.invite_permission_config` with `default_action: "block"` makes
//   /invite, the state API and createRoom's `invite` answer 403 M_INVITE_BLOCKED, nothing stored; other
//   values let invites through; it decides over MSC4155's filter; server admins may still invite; an
//   invite made before the block is kept out of /sync while it lasts, and GET /state still shows it;
// - additional_creators on POST /rooms/{roomId}/upgrade (v1.16, MSC4289): to room version 12 they are
//   checked and put in the new create event, kept out of its power levels, and are creators there; to an
//   older version the field is ignored; createRoom's trusted_private_chat makes the invitees creators;
// - redactions through PUT /send/m.room.redaction (v1.18, MSC4169): as /redact in room versions 10 and
//   11 — the same refusals, the same event (`redacts` where the version keeps it, the body's other keys
//   kept), the target redacted; the create event and server ACLs may not be redacted (as Synapse).
// Where Synapse answers differently, the scenario says so and why.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { startSynapse, type SynapseServer } from "../helpers/synapse.ts";
import { loginUser, registerUser } from "../helpers/users.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import type { Pdu } from "../../src/domain/events/types.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const BLOCKING = "m.invite_permission_config";
const MSC4155 = "org.matrix.msc4155.invite_permission_config";

type Who = { user_id: string; access_token: string };
type Res = { status: number; json: any };

/** One homeserver under test, Weft or Synapse, through its client API. */
interface Hs {
  synapse: boolean;
  call(method: string, p: string, o?: { body?: unknown; token?: string }): Promise<Res>;
  user(localpart: string): Promise<Who>;
  admin(localpart: string): Promise<Who>;
  /** Weft only: the event as stored (its PDU). */
  stored?(eventId: string): Promise<Pdu | undefined>;
}

/** Each scenario, run against `get()`'s server. */
function scenarios(get: () => Hs) {
  let n = 0;
  const uniq = (p: string) => `${p}${++n}x${Date.now() % 100000}`;
  const txn = () => `t${++n}-${Date.now()}`;

  async function room(hs: Hs, who: Who, body: Record<string, unknown>): Promise<string> {
    const res = await hs.call("POST", `${V3}/createRoom`, { token: who.access_token, body });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.room_id as string;
  }
  const join = async (hs: Hs, who: Who, roomId: string) => {
    const res = await hs.call("POST", `${V3}/join/${enc(roomId)}`, { token: who.access_token, body: {} });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
  };
  const setConfig = async (hs: Hs, who: Who, type: string, content: Record<string, unknown>) => {
    const res = await hs.call("PUT", `${V3}/user/${enc(who.user_id)}/account_data/${type}`, { token: who.access_token, body: content });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "PUT", `${V3}/user/${enc(who.user_id)}/account_data/${type}`);
  };
  const invite = (hs: Hs, by: Who, roomId: string, userId: string) => hs.call("POST", `${V3}/rooms/${enc(roomId)}/invite`, { token: by.access_token, body: { user_id: userId } });
  /** The membership of `userId` in `roomId` as `reader` reads it from the room's state (undefined: none). */
  const membership = async (hs: Hs, reader: Who, roomId: string, userId: string) => {
    const res = await hs.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(userId)}`, { token: reader.access_token });
    return res.status === 200 ? (res.json.membership as string) : undefined;
  };
  /** The rooms of `who`'s rooms.invite in a fresh initial /sync (a filter of its own, so no server answers from a cache). */
  const invitedRooms = async (hs: Hs, who: Who): Promise<string[]> => {
    const filter = enc(JSON.stringify({ room: { timeline: { limit: ++n } } }));
    const res = await hs.call("GET", `${V3}/sync?timeout=0&filter=${filter}`, { token: who.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return Object.keys(res.json.rooms?.invite ?? {});
  };
  const joinedRooms = async (hs: Hs, who: Who): Promise<string[]> => (await hs.call("GET", `${V3}/joined_rooms`, { token: who.access_token })).json.joined_rooms;
  const stateOf = async (hs: Hs, who: Who, roomId: string) => {
    const res = await hs.call("GET", `${V3}/rooms/${enc(roomId)}/state`, { token: who.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json as { type: string; state_key: string; sender: string; content: any }[];
  };
  const createOf = async (hs: Hs, who: Who, roomId: string) => (await stateOf(hs, who, roomId)).find((e) => e.type === "m.room.create")!;
  const powerOf = async (hs: Hs, who: Who, roomId: string) => (await stateOf(hs, who, roomId)).find((e) => e.type === "m.room.power_levels")!.content;

  describe("invite blocking (m.invite_permission_config)", () => {
    it("default_action block: /invite, the state API and createRoom's invite are 403 M_INVITE_BLOCKED, nothing stored", async () => {
      const hs = get();
      const [alice, bob] = await Promise.all([hs.user(uniq("alice")), hs.user(uniq("bob"))]);
      await setConfig(hs, bob, BLOCKING, { default_action: "block" });
      const roomId = await room(hs, alice, { preset: "private_chat" });

      const res = await invite(hs, alice, roomId, bob.user_id);
      expect([res.status, res.json.errcode], JSON.stringify(res.json)).toEqual([403, "M_INVITE_BLOCKED"]);
      expectMatchesSpec(res, "POST", `${V3}/rooms/${enc(roomId)}/invite`);
      const statePath = `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(bob.user_id)}`;
      const state = await hs.call("PUT", statePath, { token: alice.access_token, body: { membership: "invite" } });
      expect([state.status, state.json.errcode], JSON.stringify(state.json)).toEqual([403, "M_INVITE_BLOCKED"]);
      expectMatchesSpec(state, "PUT", statePath);
      expect(await membership(hs, alice, roomId, bob.user_id)).toBeUndefined();

      const before = await joinedRooms(hs, alice);
      const created = await hs.call("POST", `${V3}/createRoom`, { token: alice.access_token, body: { invite: [bob.user_id], name: "never" } });
      expect([created.status, created.json.errcode], JSON.stringify(created.json)).toEqual([403, "M_INVITE_BLOCKED"]);
      expectMatchesSpec(created, "POST", `${V3}/createRoom`);
      // Weft refuses before anything is made. Synapse makes the room first and only then fails on the
      // invite, leaving the room behind with its creator in it (the spec: "It is possible for one of the
      // invited users to be rejected whilst the room creation as a whole succeeds").
      expect((await joinedRooms(hs, alice)).length).toBe(before.length + (hs.synapse ? 1 : 0));
      expect(await invitedRooms(hs, bob)).toEqual([]);
    });

    it("any other content lets invites through; the same event without default_action ends the block", async () => {
      const hs = get();
      const alice = await hs.user(uniq("alice"));
      for (const content of [{}, { default_action: "allow" }, { default_action: "BLOCK" }, { default_action: ["block"] }, { default_action: null }]) {
        const bob = await hs.user(uniq("bob"));
        await setConfig(hs, bob, BLOCKING, content);
        const roomId = await room(hs, alice, { preset: "private_chat" });
        const res = await invite(hs, alice, roomId, bob.user_id);
        expect(res.status, `${JSON.stringify(content)}: ${JSON.stringify(res.json)}`).toBe(200);
        expect(await membership(hs, alice, roomId, bob.user_id)).toBe("invite");
      }
      const carol = await hs.user(uniq("carol"));
      await setConfig(hs, carol, BLOCKING, { default_action: "block" });
      const roomId = await room(hs, alice, { preset: "private_chat" });
      expect((await invite(hs, alice, roomId, carol.user_id)).json.errcode).toBe("M_INVITE_BLOCKED");
      await setConfig(hs, carol, BLOCKING, {});
      expect((await invite(hs, alice, roomId, carol.user_id)).status).toBe(200);
    });

    it("decides over MSC4155's filter, whichever says more", async () => {
      const hs = get();
      const alice = await hs.user(uniq("alice"));
      // MSC4155 blocks alice, but the stable config is present and allows: the stable one decides.
      const bob = await hs.user(uniq("bob"));
      await setConfig(hs, bob, MSC4155, { blocked_users: [alice.user_id] });
      const r1 = await room(hs, alice, { preset: "private_chat" });
      expect((await invite(hs, alice, r1, bob.user_id)).json.errcode).toBe("M_INVITE_BLOCKED");
      await setConfig(hs, bob, BLOCKING, {});
      expect((await invite(hs, alice, r1, bob.user_id)).status).toBe(200);
      // MSC4155 allows alice, the stable config blocks everyone: blocked.
      const carol = await hs.user(uniq("carol"));
      await setConfig(hs, carol, MSC4155, { allowed_users: [alice.user_id] });
      await setConfig(hs, carol, BLOCKING, { default_action: "block" });
      const r2 = await room(hs, alice, { preset: "private_chat" });
      expect((await invite(hs, alice, r2, carol.user_id)).json.errcode).toBe("M_INVITE_BLOCKED");
    });

    it("a server admin may invite; an invite from before the block is kept out of /sync while it lasts, and GET /state shows it", async () => {
      const hs = get();
      const [admin, alice, dan] = await Promise.all([hs.admin(uniq("admin")), hs.user(uniq("alice")), hs.user(uniq("dan"))]);
      await setConfig(hs, dan, BLOCKING, { default_action: "block" });
      const byAdmin = await room(hs, admin, { preset: "private_chat" });
      const res = await invite(hs, admin, byAdmin, dan.user_id);
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expect(await membership(hs, admin, byAdmin, dan.user_id)).toBe("invite");

      const erin = await hs.user(uniq("erin"));
      const early = await room(hs, alice, { preset: "private_chat" });
      expect((await invite(hs, alice, early, erin.user_id)).status).toBe(200);
      expect(await invitedRooms(hs, erin)).toEqual([early]);
      await setConfig(hs, erin, BLOCKING, { default_action: "block" });
      // The spec: invites for a user who blocks them "MUST NOT be served over client synchronisation
      // endpoints", those already in the database too; Weft keeps them out while the block lasts, and
      // the admin's invite as well. Synapse 1.163 hides only invites its filter ignores, not blocked ones.
      expect(await invitedRooms(hs, erin)).toEqual(hs.synapse ? [early] : []);
      expect((await invitedRooms(hs, dan)).includes(byAdmin)).toBe(hs.synapse);
      // Other endpoints are not affected: the room's state still holds the invite.
      expect(await membership(hs, alice, early, erin.user_id)).toBe("invite");
      // Unblocked: served again (the spec's MAY).
      await setConfig(hs, erin, BLOCKING, {});
      expect(await invitedRooms(hs, erin)).toEqual([early]);
    });
  });

  describe("additional_creators (room version 12)", () => {
    /** A v11 room of alice's with bob and carol joined and both in its power levels. */
    async function oldRoom(hs: Hs) {
      const [alice, bob, carol] = await Promise.all([hs.user(uniq("alice")), hs.user(uniq("bob")), hs.user(uniq("carol"))]);
      const roomId = await room(hs, alice, { preset: "public_chat", room_version: "11", name: "Old" });
      await join(hs, bob, roomId);
      await join(hs, carol, roomId);
      const pl = await powerOf(hs, alice, roomId);
      const put = await hs.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.power_levels/`, { token: alice.access_token, body: { ...pl, users: { ...pl.users, [bob.user_id]: 50, [carol.user_id]: 50 } } });
      expect(put.status, JSON.stringify(put.json)).toBe(200);
      return { alice, bob, carol, roomId };
    }
    const upgrade = (hs: Hs, who: Who, roomId: string, body: Record<string, unknown>) => hs.call("POST", `${V3}/rooms/${enc(roomId)}/upgrade`, { token: who.access_token, body });

    it("an upgrade to 12 puts them in the new create event, not in its power levels, and they are creators there", async () => {
      const hs = get();
      const { alice, bob, carol, roomId } = await oldRoom(hs);
      const res = await upgrade(hs, alice, roomId, { new_version: "12", additional_creators: [bob.user_id] });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expectMatchesSpec(res, "POST", `${V3}/rooms/${enc(roomId)}/upgrade`);
      const replacement = res.json.replacement_room as string;
      const create = await createOf(hs, alice, replacement);
      expect(create.sender).toBe(alice.user_id);
      expect(create.content).toMatchObject({ room_version: "12", additional_creators: [bob.user_id], predecessor: { room_id: roomId } });
      // Creators have unlimited power and are not listed; carol keeps her 50.
      const pl = await powerOf(hs, alice, replacement);
      expect(Object.keys(pl.users ?? {}).sort()).toEqual([carol.user_id]);
      expect(pl.users[carol.user_id]).toBe(50);
      // bob, a creator, may change the power levels once joined; carol (50) may not.
      await join(hs, bob, replacement);
      await join(hs, carol, replacement);
      const byBob = await hs.call("PUT", `${V3}/rooms/${enc(replacement)}/state/m.room.power_levels/`, { token: bob.access_token, body: { ...pl, users: { [carol.user_id]: 60 } } });
      expect(byBob.status, JSON.stringify(byBob.json)).toBe(200);
      const byCarol = await hs.call("PUT", `${V3}/rooms/${enc(replacement)}/state/m.room.power_levels/`, { token: carol.access_token, body: { ...pl, users: { [carol.user_id]: 100 } } });
      expect(byCarol.status).toBe(403);
    });

    it("malformed additional_creators are a 400 and nothing is upgraded; to a version without them the field is ignored", async () => {
      const hs = get();
      const { alice, roomId } = await oldRoom(hs);
      // Weft answers M_BAD_JSON for a value of the wrong type and M_INVALID_PARAM for a string that is no
      // user id; Synapse answers 400 M_FORBIDDEN (its check raises an AuthError) for all three.
      for (const [additional_creators, errcode] of [["@a:b.c", "M_BAD_JSON"], [["@a:b.c", 42], "M_BAD_JSON"], [["not-a-user-id"], "M_INVALID_PARAM"], [["@x:bad$domain"], "M_INVALID_PARAM"]] as const) {
        const res = await upgrade(hs, alice, roomId, { new_version: "12", additional_creators });
        expect(res.status, JSON.stringify(additional_creators)).toBe(400);
        if (!hs.synapse) expect(res.json.errcode).toBe(errcode);
        expectMatchesSpec(res, "POST", `${V3}/rooms/${enc(roomId)}/upgrade`);
      }
      expect((await hs.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.tombstone/`, { token: alice.access_token })).status).toBe(404);

      // Upgrading to 11: "ignored and has no effect", even malformed.
      const res = await upgrade(hs, alice, roomId, { new_version: "11", additional_creators: "not even a list" });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      const create = await createOf(hs, alice, res.json.replacement_room);
      expect(create.content.room_version).toBe("11");
      expect(create.content).not.toHaveProperty("additional_creators");
    });

    it("createRoom with trusted_private_chat in 12: the invitees join the named additional_creators; not in 11", async () => {
      const hs = get();
      const [alice, bob, carol] = await Promise.all([hs.user(uniq("alice")), hs.user(uniq("bob")), hs.user(uniq("carol"))]);
      const roomId = await room(hs, alice, { room_version: "12", preset: "trusted_private_chat", invite: [bob.user_id], creation_content: { additional_creators: [carol.user_id] } });
      const create = await createOf(hs, alice, roomId);
      expect([...create.content.additional_creators].sort()).toEqual([bob.user_id, carol.user_id].sort());
      expect(Object.keys((await powerOf(hs, alice, roomId)).users ?? {})).toEqual([]);
      const old = await room(hs, alice, { room_version: "11", preset: "trusted_private_chat", invite: [bob.user_id] });
      expect((await createOf(hs, alice, old)).content).not.toHaveProperty("additional_creators");
      expect((await powerOf(hs, alice, old)).users).toMatchObject({ [alice.user_id]: 100, [bob.user_id]: 100 });
    });
  });

  describe.each(["10", "11"])("redactions through /send (room version %s)", (version) => {
    const sendPath = (roomId: string, type: string) => `${V3}/rooms/${enc(roomId)}/send/${type}/${txn()}`;
    const say = async (hs: Hs, who: Who, roomId: string, body: string) => {
      const res = await hs.call("PUT", sendPath(roomId, "m.room.message"), { token: who.access_token, body: { msgtype: "m.text", body } });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      return res.json.event_id as string;
    };
    const event = async (hs: Hs, who: Who, roomId: string, eventId: string) => {
      const res = await hs.call("GET", `${V3}/rooms/${enc(roomId)}/event/${enc(eventId)}`, { token: who.access_token });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      return res.json;
    };
    async function setup(hs: Hs) {
      const [alice, bob] = await Promise.all([hs.user(uniq("alice")), hs.user(uniq("bob"))]);
      const roomId = await room(hs, alice, { preset: "public_chat", room_version: version });
      await join(hs, bob, roomId);
      return { alice, bob, roomId, hers: await say(hs, alice, roomId, "hers"), his: await say(hs, bob, roomId, "his") };
    }

    it("is refused as /redact is, and makes the event /redact makes", async () => {
      const hs = get();
      const { alice, bob, roomId, hers, his } = await setup(hs);
      // bob (power 0) may not redact alice's event, by either endpoint; nothing changes.
      const viaSend = await hs.call("PUT", sendPath(roomId, "m.room.redaction"), { token: bob.access_token, body: { redacts: hers } });
      const viaRedact = await hs.call("PUT", `${V3}/rooms/${enc(roomId)}/redact/${enc(hers)}/${txn()}`, { token: bob.access_token, body: {} });
      for (const res of [viaSend, viaRedact]) expect([res.status, res.json.errcode], JSON.stringify(res.json)).toEqual([403, "M_FORBIDDEN"]);
      expect((await event(hs, bob, roomId, hers)).content.body).toBe("hers");

      // bob redacts his own through /send, alice hers through /redact, each body with a reason and a key of its own.
      const sent = await hs.call("PUT", sendPath(roomId, "m.room.redaction"), { token: bob.access_token, body: { redacts: his, reason: "mine", "org.example.note": 1 } });
      expect(sent.status, JSON.stringify(sent.json)).toBe(200);
      expectMatchesSpec(sent, "PUT", sendPath(roomId, "m.room.redaction"));
      const redactPath = `${V3}/rooms/${enc(roomId)}/redact/${enc(hers)}/${txn()}`;
      const redacted = await hs.call("PUT", redactPath, { token: alice.access_token, body: { reason: "hers", "org.example.note": 2 } });
      expect(redacted.status, JSON.stringify(redacted.json)).toBe(200);
      expectMatchesSpec(redacted, "PUT", redactPath);

      const [bySend, byRedact] = [await event(hs, alice, roomId, sent.json.event_id), await event(hs, alice, roomId, redacted.json.event_id)];
      // Clients get `redacts` at the top level and in content, whatever the version; the body's keys kept.
      expect(bySend).toMatchObject({ type: "m.room.redaction", sender: bob.user_id, redacts: his, content: { redacts: his, reason: "mine", "org.example.note": 1 } });
      expect(byRedact).toMatchObject({ type: "m.room.redaction", sender: alice.user_id, redacts: hers, content: { redacts: hers, reason: "hers", "org.example.note": 2 } });
      expect(Object.keys(bySend.content).sort()).toEqual(Object.keys(byRedact.content).sort());
      for (const [target, by] of [[his, sent.json.event_id], [hers, redacted.json.event_id]]) {
        const ev = await event(hs, bob, roomId, target);
        expect(ev.content).toEqual({});
        expect(ev.unsigned.redacted_because.event_id).toBe(by);
      }
      if (hs.stored) {
        // As stored: `redacts` at the top level before v11, in content from v11 (the spec's "MUST move").
        for (const [id, target] of [[sent.json.event_id, his], [redacted.json.event_id, hers]]) {
          const pdu = (await hs.stored(id))!;
          if (version === "10") expect([pdu.redacts, pdu.content.redacts]).toEqual([target, undefined]);
          else expect([pdu.redacts, pdu.content.redacts]).toEqual([undefined, target]);
        }
      }
    });

    it("bad bodies are refused and redact nothing; the create event and server ACLs may not be redacted", async () => {
      const hs = get();
      const { alice, roomId, hers } = await setup(hs);
      const create = (await stateOf(hs, alice, roomId)).find((e) => e.type === "m.room.create")!;
      const createId = (await hs.call("GET", `${V3}/rooms/${enc(roomId)}/state`, { token: alice.access_token })).json.find((e: any) => e.type === "m.room.create").event_id as string;
      expect(create).toBeDefined();
      const acl = await hs.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.server_acl/`, { token: alice.access_token, body: { allow: ["*"], deny: [] } });
      expect(acl.status).toBe(200);
      for (const target of [createId, acl.json.event_id as string]) {
        const viaSend = await hs.call("PUT", sendPath(roomId, "m.room.redaction"), { token: alice.access_token, body: { redacts: target } });
        const viaRedact = await hs.call("PUT", `${V3}/rooms/${enc(roomId)}/redact/${enc(target)}/${txn()}`, { token: alice.access_token, body: {} });
        for (const res of [viaSend, viaRedact]) expect([res.status, res.json.errcode], JSON.stringify(res.json)).toEqual([403, "M_FORBIDDEN"]);
      }
      // /redact with a `redacts` naming another event (Synapse checks it from room version 11 only).
      if (version === "11" || !hs.synapse) {
        const other = await hs.call("PUT", `${V3}/rooms/${enc(roomId)}/redact/${enc(hers)}/${txn()}`, { token: alice.access_token, body: { redacts: createId } });
        expect([other.status, other.json.errcode], JSON.stringify(other.json)).toEqual([400, "M_INVALID_PARAM"]);
      }
      if (!hs.synapse) {
        // Weft checks a redaction's body as the spec's /redact schema says, on both endpoints: a `reason`
        // that is no string, or /send without `redacts`, is 400 M_BAD_JSON. Synapse 1.163 stores the first
        // as sent and answers the second with a 500.
        const noRedacts = await hs.call("PUT", sendPath(roomId, "m.room.redaction"), { token: alice.access_token, body: { reason: "what?" } });
        expect([noRedacts.status, noRedacts.json.errcode]).toEqual([400, "M_BAD_JSON"]);
        expectMatchesSpec(noRedacts, "PUT", sendPath(roomId, "m.room.redaction"));
        const badReason = await hs.call("PUT", sendPath(roomId, "m.room.redaction"), { token: alice.access_token, body: { redacts: hers, reason: 42 } });
        expect([badReason.status, badReason.json.errcode]).toEqual([400, "M_BAD_JSON"]);
        const badReason2 = await hs.call("PUT", `${V3}/rooms/${enc(roomId)}/redact/${enc(hers)}/${txn()}`, { token: alice.access_token, body: { reason: 42 } });
        expect([badReason2.status, badReason2.json.errcode]).toEqual([400, "M_BAD_JSON"]);
      }
      expect((await event(hs, alice, roomId, hers)).content.body).toBe("hers");
      expect((await stateOf(hs, alice, roomId)).find((e) => e.type === "m.room.server_acl")!.content.allow).toEqual(["*"]);
    });
  });
}

describe.each(backends())("room items of spec v1.16–v1.18 on Weft (%s)", (backend) => {
  let t: TestServer;
  const hs: Hs = {
    synapse: false,
    call: (m, p, o) => t.call(m, p, o),
    user: (localpart) => registerUser(t, localpart),
    admin: async (localpart) => {
      const who = await registerUser(t, localpart);
      await t.hs.services.users.setAdmin(who.user_id, true);
      return loginUser(t, localpart);
    },
    stored: async (id) => (await t.hs.services.rooms.events.get(id))?.pdu,
  };
  beforeAll(async () => {
    t = await startTestServer({ backend, config: { experimental_features: { msc4155_enabled: true } } });
  });
  afterAll(() => t?.close());
  scenarios(() => hs);
});

describe("room items of spec v1.16–v1.18 on a live Synapse", () => {
  let syn: SynapseServer;
  const hs: Hs = {
    synapse: true,
    call: (m, p, o) => syn.call(m, p, o),
    user: (localpart) => syn.register(localpart),
    admin: (localpart) => syn.register(localpart, undefined, { admin: true }),
  };
  beforeAll(async () => {
    syn = await startSynapse({ config: { experimental_features: { msc4155_enabled: true, msc4169_enabled: true } } });
  }, 120_000);
  afterAll(() => syn?.close());
  scenarios(() => hs);
});
