// The remaining rules: `@` state keys (and MSC3757's owned state in its unstable versions), redactions (v1–2 in the auth rules; in every version the one rule of
// whether a redaction takes effect), and the error shape.
import { describe, expect, it } from "vitest";
import { AuthError, checkAuth, redactionFacts, redactionTakesEffect, stateMapKey, type AuthState } from "../../../src/domain/auth/index.ts";
import { eventIdOf, roomIdOf } from "../../../src/domain/events/hashes.ts";
import type { Pdu } from "../../../src/domain/events/types.ts";
import { MatrixError } from "../../../src/domain/errors.ts";
import { getRoomVersion } from "../../../src/domain/rooms/room-versions.ts";
import { expectAllowed, expectRule } from "./expect.ts";
import { ALICE, ALL_VERSIONS, BOB, CAROL, DAVE, RoomBuilder } from "./room-builder.ts";

describe("state keys starting with @", () => {
  it.each(ALL_VERSIONS)("v%s: must be the sender's own user id", (v) => {
    const room = new RoomBuilder(v);
    room.join(BOB);
    room.setPowerLevels({ users: room.adminUsers(), events: { "m.custom.owned": 0 } });
    expectAllowed(() => room.check(room.event("m.custom.owned", BOB, BOB, {})));
    expectRule(() => room.check(room.event("m.custom.owned", ALICE, BOB, {})), "state_key.user");
    expectRule(() => room.check(room.event("m.custom.owned", `${BOB}_suffix`, BOB, {})), "state_key.user");
    // Even the most powerful user cannot write another user's @-keyed state.
    expectRule(() => room.check(room.event("m.custom.owned", BOB, ALICE, {})), "state_key.user");
    expectAllowed(() => room.check(room.event("m.custom.owned", "not-a-user", BOB, {})));
  });
});

describe("MSC3757 owned state", () => {
  it.each(["org.matrix.msc3757.10", "org.matrix.msc3757.11"])("%s: one's own keys with a suffix, others' with more power", (v) => {
    const room = new RoomBuilder(v);
    room.join(BOB);
    room.join(CAROL);
    room.setPowerLevels({ users: room.adminUsers(), events: { "m.custom.owned": 0 } });
    const check = (stateKey: string, sender: string) => () => room.check(room.event("m.custom.owned", stateKey, sender, {}));
    expectAllowed(check(BOB, BOB));
    expectAllowed(check(`${BOB}_suffix:!@#$123`, BOB));
    // Alice (100) may set the keys of Bob (0), and of a user who is not in the room.
    expectAllowed(check(BOB, ALICE));
    expectAllowed(check(`${BOB}_x`, ALICE));
    expectAllowed(check("@nobody:elsewhere.example", ALICE));
    // Bob may not set Carol's (equal power) or Alice's (more power), nor a key whose user id is not his.
    expectRule(check(CAROL, BOB), "state_key.user");
    expectRule(check(`${CAROL}_x`, BOB), "state_key.user");
    expectRule(check(ALICE, BOB), "state_key.user");
    expectRule(check(`${BOB}suffix`, BOB), "state_key.user");
    expectRule(check(`@prefix_${BOB}`, BOB), "state_key.user");
    // A key starting with @ that names no valid user id is bad JSON (400), whoever sends it.
    for (const key of ["@oops", `${ALICE}@_suffix`]) {
      let caught: unknown;
      try {
        check(key, ALICE)();
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(AuthError);
      expect(caught).toMatchObject({ errcode: "M_BAD_JSON", httpStatus: 400, rule: "state_key.owner" });
    }
  });

  it("is not in room version 10 or 11", () => {
    for (const v of ["10", "11"]) expect(getRoomVersion(v)!.ownedState).toBe(false);
    expect(getRoomVersion("org.matrix.msc3757.11")).toMatchObject({ stability: "unstable", updatedRedactionRules: true, ownedState: true });
  });
});

/** Does `redaction` take effect on `target`, judged by a server named `localServer` (none of the test users' by default)? */
function takesEffect(redaction: Pdu, target: Pdu, state: AuthState, version: string, localServer = "elsewhere.example"): boolean {
  const v = getRoomVersion(version)!;
  const roomId = roomIdOf(redaction, v) ?? "";
  const targetId = eventIdOf(target, v);
  return redactionTakesEffect({
    redaction: redactionFacts(redaction, eventIdOf(redaction, v), roomId, v),
    target: { eventId: targetId, roomId: roomIdOf(target, v) ?? "", sender: target.sender },
    authState: state,
    createEvent: state.get(stateMapKey("m.room.create", "")),
    version: v,
    localServer,
  });
}

describe("redactions", () => {
  function setup(v: string) {
    const room = new RoomBuilder(v);
    room.join(BOB);
    room.join(DAVE);
    const aliceMsg = room.send(room.event("m.room.message", undefined, ALICE, { body: "alice" }));
    const bobMsg = room.send(room.event("m.room.message", undefined, BOB, { body: "bob" }));
    const redaction = (sender: string, target: ReturnType<typeof room.event>) => {
      const id = room.id(target);
      return getRoomVersion(v)!.redactsInContent
        ? room.event("m.room.redaction", undefined, sender, { redacts: id })
        : room.event("m.room.redaction", undefined, sender, {}, { redacts: id });
    };
    return { room, aliceMsg, bobMsg, redaction };
  }

  it.each(ALL_VERSIONS)("v%s: who may redact whose events", (v) => {
    const { room, aliceMsg, bobMsg, redaction } = setup(v);
    const f = getRoomVersion(v)!;
    const bobRedactsAlice = redaction(BOB, aliceMsg);
    const bobRedactsOwn = redaction(BOB, bobMsg);
    const daveRedactsBob = redaction(DAVE, bobMsg); // different user, different server, no redact power
    const aliceRedactsBob = redaction(ALICE, bobMsg);
    if (f.redactionAuthInRules) {
      // v1–2: rule 11 decides, by redact level or by the event ids' domains.
      expectRule(() => room.check(bobRedactsAlice), "redaction.power");
      expectRule(() => room.check(daveRedactsBob), "redaction.power");
      expectAllowed(() => room.check(bobRedactsOwn));
      expectAllowed(() => room.check(aliceRedactsBob));
    } else {
      // v3+: the auth rules let them all through; the decision moves to applying the redaction.
      for (const r of [bobRedactsAlice, bobRedactsOwn, daveRedactsBob, aliceRedactsBob]) expectAllowed(() => room.check(r));
    }
    expect(takesEffect(bobRedactsAlice, aliceMsg, room.state, v)).toBe(false);
    expect(takesEffect(daveRedactsBob, bobMsg, room.state, v)).toBe(false);
    expect(takesEffect(bobRedactsOwn, bobMsg, room.state, v)).toBe(true);
    expect(takesEffect(aliceRedactsBob, bobMsg, room.state, v)).toBe(true);
    // A redaction only applies to the event it names.
    expect(takesEffect(aliceRedactsBob, aliceMsg, room.state, v)).toBe(false);
  });

  it("v3+: a user on the original sender's server may redact (same server, different user)", () => {
    const room = new RoomBuilder("11");
    room.join(DAVE); // a.example, like ALICE
    room.join(BOB);
    const bobMsg = room.send(room.event("m.room.message", undefined, BOB, { body: "x" }));
    const carolServerUser = "@other:b.example";
    room.join(carolServerUser);
    const r = room.event("m.room.redaction", undefined, carolServerUser, { redacts: room.id(bobMsg) });
    expect(takesEffect(r, bobMsg, room.state, "11")).toBe(true);
  });

  it.each(ALL_VERSIONS)("v%s: this server's own users redact only their own events without the redact level", (v) => {
    const { room, aliceMsg, bobMsg, redaction } = setup(v);
    // Judged by b.example, bob's own server: he redacts his own message, not alice's.
    expect(takesEffect(redaction(BOB, bobMsg), bobMsg, room.state, v, "b.example")).toBe(true);
    expect(takesEffect(redaction(BOB, aliceMsg), aliceMsg, room.state, v, "b.example")).toBe(false);
    // Judged by a.example: dave (a.example, level 0) may not redact alice's (a.example) message, though a
    // remote server's user in his place would be vouched for by his server.
    expect(takesEffect(redaction(DAVE, aliceMsg), aliceMsg, room.state, v, "a.example")).toBe(false);
    // The redact level is enough wherever the sender is.
    expect(takesEffect(redaction(ALICE, bobMsg), bobMsg, room.state, v, "a.example")).toBe(true);
  });

  it.each(ALL_VERSIONS)("v%s: a state-keyed m.room.redaction never takes effect, whoever sends it", (v) => {
    const { room, bobMsg } = setup(v);
    const id = room.id(bobMsg);
    const f = getRoomVersion(v)!;
    const stateKeyed = f.redactsInContent
      ? room.event("m.room.redaction", "x", ALICE, { redacts: id })
      : room.event("m.room.redaction", "x", ALICE, {}, { redacts: id });
    expect(takesEffect(stateKeyed, bobMsg, room.state, v)).toBe(false);
    expect(takesEffect(stateKeyed, bobMsg, room.state, v, "b.example")).toBe(false);
  });

  it("a redaction takes no effect on an event of another room, nor on an unknown one", () => {
    const { room, bobMsg, redaction } = setup("11");
    const other = new RoomBuilder("11");
    const otherMsg = other.send(other.event("m.room.message", undefined, ALICE, { body: "elsewhere" }));
    const r = room.event("m.room.redaction", undefined, ALICE, { redacts: other.id(otherMsg) });
    expect(takesEffect(r, otherMsg, room.state, "11")).toBe(false);
    const v = getRoomVersion("11")!;
    const known = redaction(ALICE, bobMsg);
    expect(redactionTakesEffect({ redaction: redactionFacts(known, eventIdOf(known, v), room.roomId, v), target: undefined, authState: room.state, version: v, localServer: "x" })).toBe(false);
  });

  it.each(ALL_VERSIONS)("v%s: redaction events are still subject to events / events_default", (v) => {
    const { room, bobMsg, redaction } = setup(v);
    room.setPowerLevels({ users: room.adminUsers(), events: { "m.room.redaction": 10 } });
    expectRule(() => room.check(redaction(BOB, bobMsg)), "power.event_level");
  });

  it("the redact level is read from the state the redaction was authorised against", () => {
    const { room, aliceMsg, redaction } = setup("10");
    room.setPowerLevels({ users: room.adminUsers(), redact: 0 });
    expect(takesEffect(redaction(BOB, aliceMsg), aliceMsg, room.state, "10")).toBe(true);
  });
});

describe("error shape", () => {
  it("auth failures are MatrixError M_FORBIDDEN 403 with a rule id", () => {
    const room = new RoomBuilder("11");
    try {
      checkAuth(room.event("m.room.message", undefined, CAROL, {}), room.state, "11");
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(MatrixError);
      expect(e).toBeInstanceOf(AuthError);
      expect((e as AuthError).toJSON()).toEqual({
        errcode: "M_FORBIDDEN",
        error: "Auth rule sender_not_joined: the sender is not joined to the room",
      });
    }
  });

  it("unknown room versions are M_UNSUPPORTED_ROOM_VERSION", () => {
    const room = new RoomBuilder("11");
    expect(() => checkAuth(room.create, room.state, "99")).toThrow(expect.objectContaining({ errcode: "M_UNSUPPORTED_ROOM_VERSION" }));
  });
});
