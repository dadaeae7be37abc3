// Room items of spec v1.16–v1.18 across servers, on SQLite and PostgreSQL: two Weft servers over TLS on
// loopback, then Weft and a live Synapse.
// - Invite blocking (v1.18, MSC4380): a user blocking invites (`m.invite_permission_config`,
//   `default_action: "block"`) is not invited from another server — its server answers PUT /invite v2 and
//   v1 with 403 M_INVITE_BLOCKED, the inviter's client gets that error, neither server keeps anything —
//   both ways with Synapse too.
// - Stripped state (v1.16, MSC4311): Weft sends invite_room_state as full PDUs, the create event first;
//   the invitee's client gets the stripped form, the create event in it (invites and knocks); a received
//   invite_room_state in room version 12 without the create event as a PDU, or with an entry that is no
//   PDU of the room or badly signed, is 400 M_INVALID_PARAM with nothing stored, and a PDU whose content
//   hash fails is kept redacted; in version 10 faulty entries are left out and the invite kept; v12
//   invites both ways with Synapse (which sends only the create event as a PDU) are accepted and joined.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { startSynapse, type SynapseServer } from "../helpers/synapse.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { eventOnRoom, signedCall, signerOf } from "../helpers/by-hand.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { loadRoom } from "../../src/domain/rooms/room-cache.ts";
import { stateKeyOf } from "../../src/domain/store/state-groups.ts";
import type { Pdu } from "../../src/domain/events/types.ts";

const V3 = "/_matrix/client/v3";
const FED = "/_matrix/federation";
const enc = encodeURIComponent;
const BLOCKING = "m.invite_permission_config";
const STRIPPED_KEYS = ["content", "sender", "state_key", "type"];

type Who = { user_id: string; access_token: string };
type Caller = { call(method: string, p: string, o?: { body?: unknown; token?: string }): Promise<{ status: number; json: any }> };

const block = async (t: Caller, who: Who, content: Record<string, unknown> = { default_action: "block" }) => {
  const res = await t.call("PUT", `${V3}/user/${enc(who.user_id)}/account_data/${BLOCKING}`, { token: who.access_token, body: content });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
};
const invite = (t: Caller, by: Who, roomId: string, userId: string) => t.call("POST", `${V3}/rooms/${enc(roomId)}/invite`, { token: by.access_token, body: { user_id: userId } });

/**
 * Waits until `who`'s /sync on `t` shows `roomId` in rooms.invite / rooms.knock; returns that room's entry
 * and the whole response. Each poll goes on from the last next_batch (Synapse answers a repeat from its cache).
 */
async function inSync(t: Caller, who: Who, section: "invite" | "knock", roomId: string, ms = 30_000): Promise<{ room: any; res: { status: number; json: any } }> {
  const deadline = Date.now() + ms;
  let since: string | undefined;
  for (;;) {
    const res = await t.call("GET", `${V3}/sync?timeout=${since ? 1000 : 0}${since ? `&since=${enc(since)}` : ""}`, { token: who.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const found = res.json?.rooms?.[section]?.[roomId];
    if (found) return { room: found, res };
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${roomId} in rooms.${section}`);
    since = res.json.next_batch;
  }
}

/** The stripped events of an invite or knock, but the membership event itself (sent whole). */
const strippedOf = (events: any[], userId: string) => events.filter((e) => !(e.type === "m.room.member" && e.state_key === userId));

describe.each(backends())("room items of spec v1.16–v1.18 between two Weft servers on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let alice: Session;
  let n = 0;

  beforeAll(async () => {
    [a, b] = await Promise.all([startFederatedServer({ backend }), startFederatedServer({ backend })]);
    alice = await registerUser(a, "alice");
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  const userOnB = (p: string) => registerUser(b, `${p}${++n}`);
  const membershipOnB = async (roomId: string, userId: string) => (await b.hs.services.rooms.store.membership(roomId, userId))?.membership;
  const putInvite = (roomId: string, eventId: string, body: unknown) => signedCall(signerOf(a), b, "PUT", `${FED}/v2/invite/${enc(roomId)}/${enc(eventId)}`, body);
  /** An invite of `userId` into A's room `roomId`, built and signed on A. */
  const inviteEvent = (roomId: string, userId: string) => eventOnRoom(a.hs.services, roomId, signerOf(a), { type: "m.room.member", stateKey: userId, sender: alice.user_id, content: { membership: "invite" } });
  /** A state event of A's room as A stores it (a full PDU). */
  const stateEvent = async (roomId: string, type: string): Promise<Pdu> => {
    const room = (await loadRoom(a.hs.services, roomId))!;
    return structuredClone((await a.hs.services.rooms.events.get(room.state.get(stateKeyOf(type, ""))!))!.pdu);
  };

  describe("invite blocking", () => {
    it("B answers A's invite of a blocking user with 403 M_INVITE_BLOCKED; A's client gets it; neither keeps anything", async () => {
      const bob = await userOnB("bob");
      await block(b, bob);
      const roomId = await createRoom(a, alice, { preset: "private_chat", room_version: "10" });
      const res = await invite(a, alice, roomId, bob.user_id);
      expect([res.status, res.json.errcode], JSON.stringify(res.json)).toEqual([403, "M_INVITE_BLOCKED"]);
      expectMatchesSpec(res, "POST", `${V3}/rooms/${enc(roomId)}/invite`);
      expect(await a.hs.services.rooms.store.membership(roomId, bob.user_id)).toBeUndefined();
      expect(await membershipOnB(roomId, bob.user_id)).toBeUndefined();

      // The federation answer itself, v2 and (for a room version 2 room) v1.
      const byHand = await inviteEvent(roomId, bob.user_id);
      const v2 = await putInvite(roomId, byHand.eventId, { room_version: "10", event: byHand.pdu, invite_room_state: [await stateEvent(roomId, "m.room.create")] });
      expect([v2.status, v2.json.errcode], JSON.stringify(v2.json)).toEqual([403, "M_INVITE_BLOCKED"]);
      expectMatchesSpec(v2, "PUT", `${FED}/v2/invite/${enc(roomId)}/${enc(byHand.eventId)}`);
      const old = await createRoom(a, alice, { preset: "private_chat", room_version: "2" });
      const v1Invite = await inviteEvent(old, bob.user_id);
      const v1 = await signedCall(signerOf(a), b, "PUT", `${FED}/v1/invite/${enc(old)}/${enc(v1Invite.eventId)}`, { ...v1Invite.pdu, unsigned: { invite_room_state: [] } });
      expect([v1.status, v1.json.errcode], JSON.stringify(v1.json)).toEqual([403, "M_INVITE_BLOCKED"]);
      expectMatchesSpec(v1, "PUT", `${FED}/v1/invite/${enc(old)}/${enc(v1Invite.eventId)}`);
      for (const id of [byHand.eventId, v1Invite.eventId]) expect(await b.hs.services.rooms.events.get(id)).toBeUndefined();

      // The block lifted: the invite goes through.
      await block(b, bob, {});
      expect((await invite(a, alice, roomId, bob.user_id)).status).toBe(200);
      await inSync(b, bob, "invite", roomId);
    });
  });

  describe("stripped state (MSC4311)", () => {
    it.each(["10", "12"])("v%s: sent as full PDUs, the create event first; the invitee's client gets them stripped, the create event in them", async (version) => {
      const bob = await userOnB("bob");
      const roomId = await createRoom(a, alice, { preset: "private_chat", room_version: version, name: `Stripped ${version}`, topic: "t" });
      const res = await invite(a, alice, roomId, bob.user_id);
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      const inviteId = (await loadRoom(a.hs.services, roomId))!.state.get(stateKeyOf("m.room.member", bob.user_id))!;

      // What B received and keeps: every entry a PDU of the room, the create event first, A's member event among them.
      const stored = (await b.hs.services.rooms.events.get(inviteId))!.pdu.unsigned!.invite_room_state as Pdu[];
      expect(stored[0]!.type).toBe("m.room.create");
      for (const e of stored) expect(Object.keys(e)).toEqual(expect.arrayContaining(["auth_events", "hashes", "signatures", "origin_server_ts"]));
      expect(stored.map((e) => e.type)).toEqual(expect.arrayContaining(["m.room.create", "m.room.join_rules", "m.room.name", "m.room.topic", "m.room.member"]));

      // What bob's client gets: the stripped form, the create event in it.
      const { room, res: sync } = await inSync(b, bob, "invite", roomId);
      expectMatchesSpec(sync, "GET", `${V3}/sync`);
      const events = strippedOf(room.invite_state.events, bob.user_id);
      for (const e of events) expect(Object.keys(e).sort()).toEqual(STRIPPED_KEYS);
      expect(events.find((e) => e.type === "m.room.create")).toMatchObject({ state_key: "", sender: alice.user_id, content: { room_version: version } });
      expect(events.find((e) => e.type === "m.room.name")?.content).toEqual({ name: `Stripped ${version}` });
    });

    it("a knock: the knocker's client gets the create event in knock_state", async () => {
      const kim = await userOnB("kim");
      const roomId = await createRoom(a, alice, { preset: "private_chat", room_version: "12", name: "Knock here", initial_state: [{ type: "m.room.join_rules", state_key: "", content: { join_rule: "knock" } }] });
      const res = await b.call("POST", `${V3}/knock/${enc(roomId)}?via=${enc(a.serverName)}`, { token: kim.access_token, body: {} });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      const { room } = await inSync(b, kim, "knock", roomId);
      const events = strippedOf(room.knock_state.events, kim.user_id);
      for (const e of events) expect(Object.keys(e).sort()).toEqual(STRIPPED_KEYS);
      expect(events.find((e) => e.type === "m.room.create")?.content.room_version).toBe("12");
      expect(events.find((e) => e.type === "m.room.join_rules")?.content.join_rule).toBe("knock");
    });

    it("v12: a received invite_room_state that fails validation is 400 M_INVALID_PARAM (spec v1.18), nothing stored; a tampered PDU is kept redacted", async () => {
      const roomId = await createRoom(a, alice, { preset: "private_chat", room_version: "12", name: "Twelve" });
      const otherRoom = await createRoom(a, alice, { preset: "private_chat", room_version: "12", name: "Other" });
      const kim = await userOnB("kim");
      const built = await inviteEvent(roomId, kim.user_id);
      const path = `${FED}/v2/invite/${enc(roomId)}/${enc(built.eventId)}`;
      const put = (state: unknown) => putInvite(roomId, built.eventId, { room_version: "12", event: built.pdu, invite_room_state: state });
      const [create, name, otherCreate, otherName] = [await stateEvent(roomId, "m.room.create"), await stateEvent(roomId, "m.room.name"), await stateEvent(otherRoom, "m.room.create"), await stateEvent(otherRoom, "m.room.name")];
      const stripped = (e: Pdu) => ({ type: e.type, state_key: e.state_key, sender: e.sender, content: e.content });
      const badlySigned = { ...name, origin_server_ts: name.origin_server_ts + 1 };
      const cases: [string, unknown][] = [
        ["no list", { "m.room.create": create }],
        ["no create event", [name]],
        ["the create event stripped", [stripped(create), name]],
        ["another room's create event", [otherCreate, name]],
        ["another room's name event", [create, otherName]],
        ["a PDU badly signed", [create, badlySigned]],
        ["a PDU not of this room version's format", [create, { ...name, depth: "one" }]],
        ["an entry that is no event", [create, { type: "m.room.name" }]],
      ];
      for (const [what, state] of cases) {
        const res = await put(state);
        expect([res.status, res.json.errcode], `${what}: ${JSON.stringify(res.json)}`).toEqual([400, "M_INVALID_PARAM"]);
        expectMatchesSpec(res, "PUT", path);
      }
      expect(await b.hs.services.rooms.events.get(built.eventId)).toBeUndefined();
      expect(await membershipOnB(roomId, kim.user_id)).toBeUndefined();

      // The create event as a PDU, other entries stripped (what Synapse sends), one PDU changed after signing.
      const tampered = { ...name, content: { name: "Changed after signing" } };
      const joinRules = await stateEvent(roomId, "m.room.join_rules");
      const ok = await put([create, stripped(joinRules), tampered]);
      expect(ok.status, JSON.stringify(ok.json)).toBe(200);
      // Not checked against the OpenAPI: its invite_event still requires `origin`, which Weft leaves out
      // of events from room version 11 on (no longer kept by redaction there). The answer by hand instead.
      expect(Object.keys(ok.json.event.signatures).sort()).toEqual([a.serverName, b.serverName].sort());
      expect(await membershipOnB(roomId, kim.user_id)).toBe("invite");
      const { room } = await inSync(b, kim, "invite", roomId);
      const events = strippedOf(room.invite_state.events, kim.user_id);
      expect(events.map((e) => e.type).sort()).toEqual(["m.room.create", "m.room.join_rules", "m.room.name"]);
      // Its content hash fails: the name event is kept as its redaction, with no name.
      expect(events.find((e) => e.type === "m.room.name")!.content).toEqual({});
      expect(events.find((e) => e.type === "m.room.join_rules")!.content).toEqual(joinRules.content);
    });

    it("v10: faulty entries are left out and the invite kept (the spec's migration rule for versions 1–11)", async () => {
      const roomId = await createRoom(a, alice, { preset: "private_chat", room_version: "10", name: "Ten" });
      const otherRoom = await createRoom(a, alice, { preset: "private_chat", room_version: "10", name: "Elsewhere" });
      const lee = await userOnB("lee");
      const built = await inviteEvent(roomId, lee.user_id);
      const name = await stateEvent(roomId, "m.room.name");
      const res = await putInvite(roomId, built.eventId, {
        room_version: "10",
        event: built.pdu,
        // No create event; one entry no event, one a PDU of another room, one a stripped name.
        invite_room_state: [{ type: "m.room.name" }, await stateEvent(otherRoom, "m.room.name"), { type: "m.room.name", state_key: "", sender: name.sender, content: name.content }],
      });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      const kept = (await b.hs.services.rooms.events.get(built.eventId))!.pdu.unsigned!.invite_room_state as any[];
      expect(kept).toEqual([{ type: "m.room.name", state_key: "", sender: name.sender, content: { name: "Ten" } }]);
      const { room } = await inSync(b, lee, "invite", roomId);
      expect(strippedOf(room.invite_state.events, lee.user_id).map((e) => e.content.name)).toEqual(["Ten"]);
    });
  });
});

describe.each(backends())("room items of spec v1.16–v1.18 between Weft (%s) and Synapse", (backend) => {
  let weft: FederatedServer;
  let syn: SynapseServer;
  let alice: Session;
  let sam: Who;
  let n = 0;

  beforeAll(async () => {
    [weft, syn] = await Promise.all([startFederatedServer({ backend }), startSynapse()]);
    alice = await registerUser(weft, "alice");
    sam = await syn.register("sam");
  }, 600_000);
  afterAll(async () => {
    await Promise.all([syn?.close(), weft?.close()]);
  });

  const synapseRoom = async (body: Record<string, unknown>) => {
    const res = await syn.call("POST", `${V3}/createRoom`, { token: sam.access_token, body });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.room_id as string;
  };
  const membershipOn = async (t: Caller, reader: Who, roomId: string, userId: string) => {
    const res = await t.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(userId)}`, { token: reader.access_token });
    return res.status === 200 ? (res.json.membership as string) : undefined;
  };

  it("invite blocking both ways: Synapse refuses Weft's invite of its blocking user, Weft Synapse's of its own; 403 M_INVITE_BLOCKED to the inviter", async () => {
    const sid = await syn.register(`sid${++n}`);
    await block(syn, sid);
    const weftRoom = await createRoom(weft, alice, { preset: "private_chat", room_version: "10" });
    const res = await invite(weft, alice, weftRoom, sid.user_id);
    expect([res.status, res.json.errcode], JSON.stringify(res.json) + syn.logTail(20)).toEqual([403, "M_INVITE_BLOCKED"]);
    expect(await membershipOn(weft, alice, weftRoom, sid.user_id)).toBeUndefined();

    const wes = await registerUser(weft, `wes${++n}`);
    await block(weft, wes);
    const synRoom = await synapseRoom({ preset: "private_chat", room_version: "10" });
    const back = await invite(syn, sam, synRoom, wes.user_id);
    expect([back.status, back.json.errcode], JSON.stringify(back.json) + syn.logTail(20)).toEqual([403, "M_INVITE_BLOCKED"]);
    expect(await membershipOn(syn, sam, synRoom, wes.user_id)).toBeUndefined();
    expect(await weft.hs.services.rooms.store.membership(synRoom, wes.user_id)).toBeUndefined();
  }, 90_000);

  it("v12 invites both ways carry the create event and are accepted and joined: Synapse's (the create event a PDU, the rest stripped) and Weft's (all PDUs)", async () => {
    // Synapse invites a Weft user.
    const wes = await registerUser(weft, `wes${++n}`);
    const synRoom = await synapseRoom({ preset: "private_chat", room_version: "12", name: "Synapse twelve" });
    const res = await invite(syn, sam, synRoom, wes.user_id);
    expect(res.status, JSON.stringify(res.json) + syn.logTail(20)).toBe(200);
    const { room } = await inSync(weft, wes, "invite", synRoom);
    const events = strippedOf(room.invite_state.events, wes.user_id);
    for (const e of events) expect(Object.keys(e).sort()).toEqual(STRIPPED_KEYS);
    expect(events.find((e) => e.type === "m.room.create")).toMatchObject({ sender: sam.user_id, content: { room_version: "12" } });
    expect(events.find((e) => e.type === "m.room.name")?.content.name).toBe("Synapse twelve");
    expect((await weft.call("POST", `${V3}/join/${enc(synRoom)}`, { token: wes.access_token, body: {} })).status).toBe(200);
    await eventually(async () => (await membershipOn(syn, sam, synRoom, wes.user_id)) === "join", "Synapse to see wes joined", 30_000);

    // Weft invites a Synapse user.
    const sky = await syn.register(`sky${++n}`);
    const weftRoom = await createRoom(weft, alice, { preset: "private_chat", room_version: "12", name: "Weft twelve" });
    const out = await invite(weft, alice, weftRoom, sky.user_id);
    expect(out.status, JSON.stringify(out.json) + syn.logTail(20)).toBe(200);
    const seen = await inSync(syn, sky, "invite", weftRoom);
    const theirs = strippedOf(seen.room.invite_state.events, sky.user_id);
    // Synapse strips Weft's PDUs for its client too.
    for (const e of theirs) expect(Object.keys(e).sort()).toEqual(STRIPPED_KEYS);
    expect(theirs.find((e: any) => e.type === "m.room.create")).toMatchObject({ sender: alice.user_id, content: { room_version: "12" } });
    expect(theirs.find((e: any) => e.type === "m.room.name")?.content.name).toBe("Weft twelve");
    const join = await syn.call("POST", `${V3}/join/${enc(weftRoom)}?server_name=${enc(weft.serverName)}`, { token: sky.access_token, body: {} });
    expect(join.status, JSON.stringify(join.json) + syn.logTail(20)).toBe(200);
    expect(await membershipOn(weft, alice, weftRoom, sky.user_id)).toBe("join");
  }, 120_000);
});
