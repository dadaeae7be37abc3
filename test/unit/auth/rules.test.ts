// The remaining rules: `@` state keys, redactions (v1–2 in the auth rules, v3+ when applied), and the
// error shape.
import { describe, expect, it } from "vitest";
import { AuthError, checkAuth, shouldApplyRedaction } from "../../../src/domain/auth/index.ts";
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
    expect(shouldApplyRedaction(bobRedactsAlice, aliceMsg, room.state, v)).toBe(false);
    expect(shouldApplyRedaction(daveRedactsBob, bobMsg, room.state, v)).toBe(false);
    expect(shouldApplyRedaction(bobRedactsOwn, bobMsg, room.state, v)).toBe(true);
    expect(shouldApplyRedaction(aliceRedactsBob, bobMsg, room.state, v)).toBe(true);
    // A redaction only applies to the event it names.
    expect(shouldApplyRedaction(aliceRedactsBob, aliceMsg, room.state, v)).toBe(false);
  });

  it("v3+: a user on the original sender's server may redact (same server, different user)", () => {
    const room = new RoomBuilder("11");
    room.join(DAVE); // a.example, like ALICE
    room.join(BOB);
    const bobMsg = room.send(room.event("m.room.message", undefined, BOB, { body: "x" }));
    const carolServerUser = "@other:b.example";
    room.join(carolServerUser);
    const r = room.event("m.room.redaction", undefined, carolServerUser, { redacts: room.id(bobMsg) });
    expect(shouldApplyRedaction(r, bobMsg, room.state, "11")).toBe(true);
  });

  it.each(ALL_VERSIONS)("v%s: redaction events are still subject to events / events_default", (v) => {
    const { room, bobMsg, redaction } = setup(v);
    room.setPowerLevels({ users: room.adminUsers(), events: { "m.room.redaction": 10 } });
    expectRule(() => room.check(redaction(BOB, bobMsg)), "power.event_level");
  });

  it("the redact level is read from the state the redaction was authorised against", () => {
    const { room, aliceMsg, redaction } = setup("10");
    room.setPowerLevels({ users: room.adminUsers(), redact: 0 });
    expect(shouldApplyRedaction(redaction(BOB, aliceMsg), aliceMsg, room.state, "10")).toBe(true);
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
