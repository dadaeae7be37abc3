// Events received while a room's state was partial, checked again once the full state is in (as Synapse's
// de-partial-stating), Weft↔Weft over TLS on SQLite and PostgreSQL: A's room holds members of a stand-in
// server F, one of whom A bans; B joins with partial state (its /state fetch held back), so B does not know
// of the ban. F then sends B, as the banned user, a message and a new join (a display name change), citing
// the user's old join as auth event: the partial state lets both in. Once B has the full state, both are
// rejected (and leave the search index and relations), current state holds the ban again, later states
// leave the rejected join out, and what others sent meanwhile stays.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { startFakeOrigin, type FakeOrigin } from "../helpers/fake-origin.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { fillRoomWithMembers } from "../helpers/big-room.ts";
import { sendTransaction, signedCall } from "../helpers/by-hand.ts";
import { holdStateFetches } from "../helpers/partial-state.ts";
import { isPartialState } from "../../src/domain/federation/partial-state/flag.ts";
import { loadRoom } from "../../src/domain/rooms/room-cache.ts";
import { buildEvent, type EventDraft } from "../../src/domain/rooms/build-event.ts";
import { stateKeyOf } from "../../src/domain/store/state-groups.ts";
import type { Pdu } from "../../src/domain/events/types.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("events received while partial, checked against the full state, on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let f: FakeOrigin;
  let alice: Session;
  let bob: Session;

  beforeAll(async () => {
    f = await startFakeOrigin((req) => (req.path.startsWith("/_matrix/federation/v1/send/") ? { status: 200, json: { pdus: {} } } : undefined));
    [a, b] = await Promise.all([startFederatedServer({ backend }), startFederatedServer({ backend })]);
    [alice, bob] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob")]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close(), f?.close()]);
  });

  it("rejects what the partial state let in and the full state does not authorise", async () => {
    const roomId = await createRoom(a, alice, { preset: "public_chat", name: "Recheck", room_version: "10" });
    const [, , , , , mallory] = await fillRoomWithMembers(a.hs.services, roomId, f, 12);
    const malloryKey = stateKeyOf("m.room.member", mallory!);
    const oldJoin = (await loadRoom(a.hs.services, roomId))!.state.get(malloryKey)!;
    const ban = await a.call("POST", `${V3}/rooms/${enc(roomId)}/ban`, { token: alice.access_token, body: { user_id: mallory } });
    expect(ban.status, JSON.stringify(ban.json)).toBe(200);
    const banId = (await loadRoom(a.hs.services, roomId))!.state.get(malloryKey)!;
    expect(banId).not.toBe(oldJoin);

    // F answers /event_auth for its events with mallory's old join and that join's auth chain, as A has them.
    f.handler = async (req) => {
      if (req.path.startsWith("/_matrix/federation/v1/send/")) return { status: 200, json: { pdus: {} } };
      if (req.path.startsWith("/_matrix/federation/v1/event_auth/")) {
        const chain = await signedCall(f, a, "GET", `/_matrix/federation/v1/event_auth/${enc(roomId)}/${enc(oldJoin)}`);
        const join = (await a.hs.services.rooms.events.get(oldJoin))!.pdu;
        return { status: 200, json: { auth_chain: [join, ...chain.json.auth_chain] } };
      }
      return undefined;
    };

    const hold = holdStateFetches(b.hs.services);
    const joined = await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: bob.access_token, body: {} });
    expect(joined.status, JSON.stringify(joined.json)).toBe(200);
    expect(await isPartialState(b.hs.services, roomId)).toBe(true);
    // B's partial state knows nothing of mallory: neither the old join nor the ban.
    expect((await loadRoom(b.hs.services, roomId))!.state.has(malloryKey)).toBe(false);

    // Mallory's events, built on B's room with the old join as mallory's membership.
    const onB = async (draft: EventDraft) => {
      const room = (await loadRoom(b.hs.services, roomId))!;
      const lookup = async (id: string) => (await b.hs.services.rooms.events.get(id))?.pdu ?? (await a.hs.services.rooms.events.get(id))?.pdu;
      const ctx = { roomId, version: room.version, state: new Map(room.state).set(malloryKey, oldJoin), extremities: room.extremities, maxDepth: room.maxDepth, lookup };
      return buildEvent(b.hs.services, ctx, draft, Date.now(), f);
    };
    const accepted = async (pdu: Pdu, eventId: string) => {
      const sent = await sendTransaction(f, b, [pdu]);
      expect([sent.status, sent.json.pdus?.[eventId]], JSON.stringify(sent.json)).toEqual([200, {}]);
      const e = (await b.hs.services.rooms.events.get(eventId))!;
      expect([e.outlier, e.rejectedReason, e.softFailed]).toEqual([false, null, false]);
    };
    const msg = await onB({ type: "m.room.message", sender: mallory!, content: { msgtype: "m.text", body: "banned but talking" } });
    await accepted(msg.pdu, msg.eventId);
    const rejoin = await onB({ type: "m.room.member", stateKey: mallory!, sender: mallory!, content: { membership: "join", displayname: "Still here" } });
    await accepted(rejoin.pdu, rejoin.eventId);
    expect((await loadRoom(b.hs.services, roomId))!.state.get(malloryKey)).toBe(rejoin.eventId);

    // Meanwhile, from A and from B: events the full state allows.
    const fromA = await a.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/c1`, { token: alice.access_token, body: { msgtype: "m.text", body: "from A" } });
    expect(fromA.status).toBe(200);
    await eventually(async () => (await b.hs.services.rooms.events.get(fromA.json.event_id))?.stateGroup != null, "B receiving alice's message");
    const fromB = await b.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/c2`, { token: bob.access_token, body: { msgtype: "m.text", body: "from B" } });
    expect(fromB.status, JSON.stringify(fromB.json)).toBe(200);
    // Mallory reacts to alice's message too; B indexes the reaction and mallory's message meanwhile.
    const reaction = await onB({ type: "m.reaction", sender: mallory!, content: { "m.relates_to": { rel_type: "m.annotation", event_id: fromA.json.event_id, key: "+1" } } });
    await accepted(reaction.pdu, reaction.eventId);
    const indexed = async () => ({
      relations: [...(await b.hs.services.relations.ofEvents(b.hs.services.storage.sql, [reaction.eventId])).keys()],
      search: (await b.hs.services.search.search({ words: ["banned"], rooms: [{ roomId }], types: ["m.room.message"], orderBy: "recent", limit: 10 })).map((h) => h.eventId),
    });
    expect(await indexed()).toEqual({ relations: [reaction.eventId], search: [msg.eventId] });

    hold.release();
    await eventually(async () => !(await isPartialState(b.hs.services, roomId)), "B completing the room's state", 60_000);

    const events = await b.hs.services.rooms.events.getMany([msg.eventId, rejoin.eventId, fromA.json.event_id, fromB.json.event_id]);
    expect(events.get(msg.eventId)!.rejectedReason).toMatch(/full state/);
    expect((await b.hs.services.rooms.events.get(reaction.eventId))!.rejectedReason).toMatch(/full state/);
    // Out of the search index and the relations.
    expect(await indexed()).toEqual({ relations: [], search: [] });
    expect(events.get(rejoin.eventId)!.rejectedReason).toMatch(/full state/);
    expect([events.get(fromA.json.event_id)!.rejectedReason, events.get(fromB.json.event_id)!.rejectedReason]).toEqual([null, null]);
    // Current state has the ban again; the state at bob's later message leaves the rejected join out.
    const member = await b.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(mallory!)}`, { token: bob.access_token });
    expect([member.status, member.json.membership]).toEqual([200, "ban"]);
    expect((await loadRoom(b.hs.services, roomId))!.state.get(malloryKey)).toBe(banId);
    const group = await b.hs.services.rooms.stateGroups.get(events.get(fromB.json.event_id)!.stateGroup!);
    expect(group.get(malloryKey)).toBe(banId);
    const members = await b.call("GET", `${V3}/rooms/${enc(roomId)}/joined_members`, { token: bob.access_token });
    expect(members.status).toBe(200);
    expect(Object.keys(members.json.joined)).not.toContain(mallory);
    // Clients no longer read mallory's message in the room's history; alice's and bob's stay.
    const page = await b.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=50`, { token: bob.access_token });
    expect(page.status).toBe(200);
    const bodies = (page.json.chunk as { type: string; content: { body?: string } }[]).filter((e) => e.type === "m.room.message").map((e) => e.content.body);
    expect(bodies).toContain("from A");
    expect(bodies).toContain("from B");
    expect(bodies).not.toContain("banned but talking");

    // Mallory, banned, cannot send anything more either.
    const later = await onB({ type: "m.room.message", sender: mallory!, content: { msgtype: "m.text", body: "again" } });
    const sent = await sendTransaction(f, b, [later.pdu]);
    expect(sent.status).toBe(200);
    expect((await b.hs.services.rooms.events.get(later.eventId))?.rejectedReason ?? "not stored").not.toBeNull();
  }, 180_000);
});
