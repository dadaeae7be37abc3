// Auth rules 1–4: the create event, the v12 room id, auth events selection and the auth_events list,
// m.federate, and v1–5's m.room.aliases rule.
import { describe, expect, it } from "vitest";
import {
  authStateFromEvents,
  authTypesForEvent,
  checkAuth,
  checkAuthEventsList,
  roomCreators,
  stateMapKey,
} from "../../../src/domain/auth/index.ts";
import { eventIdOf } from "../../../src/domain/events/hashes.ts";
import type { Pdu } from "../../../src/domain/events/types.ts";
import { getRoomVersion } from "../../../src/domain/rooms/room-versions.ts";
import { expectAllowed, expectRule } from "./expect.ts";
import { ALICE, ALL_VERSIONS, BOB, CAROL, DAVE, RoomBuilder, versionsWhere } from "./room-builder.ts";

const noState = new Map<string, Pdu>();

describe("rule 1: m.room.create", () => {
  it.each(ALL_VERSIONS)("v%s: a well-formed create event is allowed", (v) => {
    const room = new RoomBuilder(v, ALICE, { bare: true });
    expectAllowed(() => checkAuth(room.create, noState, v));
  });

  it.each(ALL_VERSIONS)("v%s: a create event with prev_events is refused", (v) => {
    const room = new RoomBuilder(v, ALICE, { bare: true });
    const bad = { ...room.create, prev_events: [room.ref(room.create)] as Pdu["prev_events"] };
    expectRule(() => checkAuth(bad, noState, v), "create.prev_events");
  });

  it.each(versionsWhere((f) => !f.roomIdIsCreateEventHash))("v%s: the room id's domain must be the sender's", (v) => {
    const room = new RoomBuilder(v, ALICE, { bare: true });
    expectRule(() => checkAuth({ ...room.create, room_id: "!x:elsewhere.example" }, noState, v), "create.room_id_domain");
  });

  it("v12: the create event must not have a room_id", () => {
    const room = new RoomBuilder("12", ALICE, { bare: true });
    expectRule(() => checkAuth({ ...room.create, room_id: room.roomId }, noState, "12"), "create.room_id");
  });

  it.each(ALL_VERSIONS)("v%s: an unknown content.room_version is refused", (v) => {
    const room = new RoomBuilder(v, ALICE, { bare: true });
    expectRule(() => checkAuth({ ...room.create, content: { ...room.create.content, room_version: "99" } }, noState, v), "create.room_version");
    expectRule(() => checkAuth({ ...room.create, content: { ...room.create.content, room_version: 5 } }, noState, v), "create.room_version");
  });

  it.each(ALL_VERSIONS)("v%s: content.creator is required only before v11", (v) => {
    const room = new RoomBuilder(v, ALICE, { bare: true });
    const { creator: _c, ...content } = room.create.content;
    const without = { ...room.create, content };
    if (getRoomVersion(v)!.createHasCreator) expectRule(() => checkAuth(without, noState, v), "create.creator");
    else expectAllowed(() => checkAuth(without, noState, v));
  });

  it("v12: additional_creators must be an array of valid user ids; v11 does not check it", () => {
    for (const bad of ["@bob:b.example", ["not-a-user"], [42], ["@bob:"]]) {
      const room12 = new RoomBuilder("12", ALICE, { bare: true });
      expectRule(
        () => checkAuth({ ...room12.create, content: { room_version: "12", additional_creators: bad } }, noState, "12"),
        "create.additional_creators",
        400,
      );
      const room11 = new RoomBuilder("11", ALICE, { bare: true });
      expectAllowed(() => checkAuth({ ...room11.create, content: { room_version: "11", additional_creators: bad } }, noState, "11"));
    }
    const ok = new RoomBuilder("12", ALICE, { bare: true, createContent: { additional_creators: [BOB, "@weird name:c.example"] } });
    expectAllowed(() => checkAuth(ok.create, noState, "12"));
  });

  it("room creators per version", () => {
    const r10 = new RoomBuilder("10", ALICE, { bare: true, createContent: { additional_creators: [BOB] } });
    expect([...roomCreators(r10.create, r10.v)]).toEqual([ALICE]);
    const r11 = new RoomBuilder("11", ALICE, { bare: true, createContent: { additional_creators: [BOB] } });
    expect([...roomCreators(r11.create, r11.v)]).toEqual([ALICE]);
    const r12 = new RoomBuilder("12", ALICE, { bare: true, createContent: { additional_creators: [BOB] } });
    expect([...roomCreators(r12.create, r12.v)]).toEqual([ALICE, BOB]);
  });
});

describe("room binding (v12 rule 2) and the create event in the auth state", () => {
  it.each(ALL_VERSIONS)("v%s: an event without a create event in its auth state is refused", (v) => {
    const room = new RoomBuilder(v);
    const msg = room.event("m.room.message", undefined, ALICE, { body: "hi" });
    const state = new Map(room.state);
    state.delete(stateMapKey("m.room.create", ""));
    expectRule(() => checkAuth(msg, state, v), "auth_events.create");
  });

  it.each(ALL_VERSIONS)("v%s: an event whose room is not the create event's room is refused", (v) => {
    const room = new RoomBuilder(v);
    const other = new RoomBuilder(v);
    const msg = room.event("m.room.message", undefined, ALICE, { body: "hi" });
    const state = new Map(room.state);
    state.set(stateMapKey("m.room.create", ""), other.create);
    expectRule(() => checkAuth(msg, state, v), getRoomVersion(v)!.roomIdIsCreateEventHash ? "room_id.create_event" : "auth_events.room_id");
  });

  it("v12: the room id must be `!` + the create event's id", () => {
    const room = new RoomBuilder("12");
    expect(room.roomId).toBe("!" + eventIdOf(room.create, "12").slice(1));
    const msg = room.event("m.room.message", undefined, ALICE, { body: "hi" });
    expectAllowed(() => room.check(msg));
    expectRule(() => room.check({ ...msg, room_id: "!somethingElse" }), "room_id.create_event");
  });
});

describe("m.federate", () => {
  it.each(ALL_VERSIONS)("v%s: m.federate false refuses other servers' events, joins included", (v) => {
    const room = new RoomBuilder(v, ALICE, { createContent: { "m.federate": false } });
    expectRule(() => room.join(BOB), "federate");
    expectAllowed(() => room.join(DAVE)); // same server as the creator
    const remote = new RoomBuilder(v, ALICE, { createContent: { "m.federate": true } });
    expectAllowed(() => remote.join(BOB));
  });
});

describe("m.room.aliases (v1–5 special rule)", () => {
  it.each(ALL_VERSIONS)("v%s", (v) => {
    const room = new RoomBuilder(v);
    // BOB is not even joined: v1–5 only check the state_key against the sender's server.
    const own = room.event("m.room.aliases", "b.example", BOB, { aliases: ["#x:b.example"] });
    const foreign = room.event("m.room.aliases", "a.example", BOB, { aliases: ["#x:a.example"] });
    if (getRoomVersion(v)!.specialCaseAliasesAuth) {
      expectAllowed(() => room.check(own));
      expectRule(() => room.check(foreign), "aliases.domain");
      expectRule(() => room.check(room.event("m.room.aliases", undefined, BOB, {})), "aliases.state_key");
    } else {
      expectRule(() => room.check(own), "sender_not_joined");
      room.join(BOB);
      // Now an ordinary state event: state_default 50 applies.
      expectRule(() => room.check(room.event("m.room.aliases", "b.example", BOB, { aliases: [] })), "power.event_level");
    }
  });
});

describe("auth events selection", () => {
  it.each(ALL_VERSIONS)("v%s: the selected (type, state_key) pairs", (v) => {
    const f = getRoomVersion(v)!;
    const create = f.createInAuthEvents ? [["m.room.create", ""]] : [];
    expect(authTypesForEvent(v, "m.room.create", "", ALICE, {})).toEqual([]);
    expect(authTypesForEvent(v, "m.room.message", undefined, BOB, { body: "x" })).toEqual([
      ...create,
      ["m.room.power_levels", ""],
      ["m.room.member", BOB],
    ]);
    expect(authTypesForEvent(v, "m.room.member", BOB, ALICE, { membership: "invite" })).toEqual([
      ...create,
      ["m.room.power_levels", ""],
      ["m.room.member", ALICE],
      ["m.room.member", BOB],
      ["m.room.join_rules", ""],
    ]);
    expect(authTypesForEvent(v, "m.room.member", BOB, BOB, { membership: "leave" })).toEqual([
      ...create,
      ["m.room.power_levels", ""],
      ["m.room.member", BOB],
    ]);
    expect(
      authTypesForEvent(v, "m.room.member", BOB, ALICE, {
        membership: "invite",
        third_party_invite: { signed: { mxid: BOB, token: "tok", signatures: {} } },
      }),
    ).toContainEqual(["m.room.third_party_invite", "tok"]);
    const restrictedJoin = authTypesForEvent(v, "m.room.member", BOB, BOB, { membership: "join", join_authorised_via_users_server: CAROL });
    if (f.restricted) expect(restrictedJoin).toContainEqual(["m.room.member", CAROL]);
    else expect(restrictedJoin).not.toContainEqual(["m.room.member", CAROL]);
  });
});

describe("the auth_events list", () => {
  function authEventsOf(room: RoomBuilder, e: Pdu): Pdu[] {
    const byId = new Map([...room.state.values()].map((s) => [room.id(s), s]));
    return (e.auth_events as unknown[]).map((r) => byId.get(Array.isArray(r) ? (r[0] as string) : (r as string))!);
  }

  it.each(ALL_VERSIONS)("v%s: the builder's selection passes; duplicates, extras and foreign rooms are refused", (v) => {
    const room = new RoomBuilder(v);
    room.join(BOB);
    const msg = room.event("m.room.message", undefined, BOB, { body: "hi" });
    const auth = authEventsOf(room, msg);
    expectAllowed(() => checkAuthEventsList(msg, auth, v));
    // v12 auth events never hold the create event: the caller passes it (the room id names it).
    expectAllowed(() => checkAuth(msg, authStateFromEvents(auth), v, { createEvent: room.create }));
    if (getRoomVersion(v)!.createInAuthEvents) expectAllowed(() => checkAuth(msg, authStateFromEvents(auth), v));
    else expectRule(() => checkAuth(msg, authStateFromEvents(auth), v), "auth_events.create");

    const joinRules = room.state.get(stateMapKey("m.room.join_rules", ""))!;
    const extra = { ...msg, auth_events: [...msg.auth_events, room.ref(joinRules)] as Pdu["auth_events"] };
    expectRule(() => checkAuthEventsList(extra, [...auth, joinRules], v), "auth_events.unexpected");

    const pl = room.state.get(stateMapKey("m.room.power_levels", ""))!;
    const pl2 = room.setPowerLevels({ ...pl.content, events_default: 0 });
    const dup = { ...msg, auth_events: [...msg.auth_events, room.ref(pl2)] as Pdu["auth_events"] };
    expectRule(() => checkAuthEventsList(dup, [...auth, pl2], v), "auth_events.duplicate");

    const other = new RoomBuilder(v);
    const foreignPl = other.state.get(stateMapKey("m.room.power_levels", ""))!;
    const swapped = auth.map((e) => (e.type === "m.room.power_levels" ? foreignPl : e));
    expectRule(() => checkAuthEventsList(msg, swapped, v), "auth_events.room_id");

    expectRule(() => checkAuthEventsList(msg, auth, v, { isRejected: (e) => e.type === "m.room.power_levels" }), "auth_events.rejected");
  });

  it.each(ALL_VERSIONS)("v%s: the create event is required before v12 and refused in v12", (v) => {
    const room = new RoomBuilder(v);
    const msg = room.event("m.room.message", undefined, ALICE, { body: "hi" });
    const auth = authEventsOf(room, msg);
    if (getRoomVersion(v)!.createInAuthEvents) {
      const withoutCreate = auth.filter((e) => e.type !== "m.room.create");
      const m2 = { ...msg, auth_events: withoutCreate.map((e) => room.ref(e)) as Pdu["auth_events"] };
      expectRule(() => checkAuthEventsList(m2, withoutCreate, v), "auth_events.create");
    } else {
      expect(auth.some((e) => e.type === "m.room.create")).toBe(false);
      const withCreate = [room.create, ...auth];
      const m2 = { ...msg, auth_events: withCreate.map((e) => room.ref(e)) as Pdu["auth_events"] };
      expectRule(() => checkAuthEventsList(m2, withCreate, v), "auth_events.unexpected");
    }
  });

  it("the same event id twice is refused", () => {
    const room = new RoomBuilder("11");
    const msg = room.event("m.room.message", undefined, ALICE, { body: "hi" });
    const twice = { ...msg, auth_events: [...(msg.auth_events as string[]), (msg.auth_events as string[])[0]!] };
    expectRule(() => checkAuthEventsList(twice, [], "11"), "auth_events.duplicate");
  });

});
