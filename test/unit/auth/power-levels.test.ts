// The power levels rule and power level reading across room versions: string values (v1–9), floats
// (v1–5), integers only (v10+), defaults, what a sender may change, notifications (v6+), v12 creators.
import { describe, expect, it } from "vitest";
import { AuthContext, parsePowerLevel, stateLevel, userPowerLevel } from "../../../src/domain/auth/index.ts";
import { getRoomVersion } from "../../../src/domain/rooms/room-versions.ts";
import { expectAllowed, expectRule } from "./expect.ts";
import { ALICE, ALL_VERSIONS, BOB, CAROL, DAVE, RoomBuilder, versionsWhere } from "./room-builder.ts";

const v = (id: string) => getRoomVersion(id)!;

describe("parsePowerLevel", () => {
  it("reads strings in v1–9 only, in the spec's integer-string grammar", () => {
    for (const id of ALL_VERSIONS) {
      const strings = v(id).stringPowerLevels;
      expect(parsePowerLevel(50, v(id))).toBe(50);
      expect(parsePowerLevel("50", v(id))).toBe(strings ? 50 : undefined);
      expect(parsePowerLevel(" +0100 ", v(id))).toBe(strings ? 100 : undefined);
      expect(parsePowerLevel("-5", v(id))).toBe(strings ? -5 : undefined);
    }
    for (const bad of ["5.0", "1e3", "abc", "", "+-1", "0x10", null, true, {}, []]) expect(parsePowerLevel(bad, v("1"))).toBeUndefined();
  });

  it("truncates floats in v1–5 and refuses them from v6", () => {
    expect(parsePowerLevel(50.57, v("5"))).toBe(50);
    expect(parsePowerLevel(-3.9, v("1"))).toBe(-3);
    expect(parsePowerLevel(Infinity, v("1"))).toBeUndefined();
    expect(parsePowerLevel(NaN, v("1"))).toBeUndefined();
    expect(parsePowerLevel(50.57, v("6"))).toBeUndefined();
  });
});

describe("levels and defaults", () => {
  it.each(ALL_VERSIONS)("v%s: defaults without a power levels event: creator 100 (v12: infinite), others 0", (id) => {
    const room = new RoomBuilder(id, ALICE, { bare: true });
    room.send(room.member(ALICE, ALICE, "join"));
    const ctx = new AuthContext(room.create, room.state, room.v, {});
    expect(userPowerLevel(ctx, ALICE)).toBe(room.v.privilegedCreators ? Infinity : 100);
    expect(userPowerLevel(ctx, BOB)).toBe(0);
    expect(stateLevel(ctx, "invite")).toBe(0);
    expect(stateLevel(ctx, "kick")).toBe(50);
    expect(stateLevel(ctx, "ban")).toBe(50);
    expect(stateLevel(ctx, "redact")).toBe(50);
    expect(stateLevel(ctx, "state_default")).toBe(50);
    expect(stateLevel(ctx, "events_default")).toBe(0);
    // state_default 50 applies without a power levels event: a joined level-0 user cannot send state.
    room.setJoinRule("public");
    room.join(BOB);
    expectRule(() => room.check(room.event("m.room.name", "", BOB, { name: "x" })), "power.event_level");
    expectAllowed(() => room.check(room.event("m.room.message", undefined, BOB, { body: "x" })));
  });

  it.each(ALL_VERSIONS)("v%s: users_default, events_default, state_default and events[type]", (id) => {
    const room = new RoomBuilder(id);
    room.join(BOB);
    room.setPowerLevels({ users: room.adminUsers(), users_default: 10, events_default: 20, state_default: 5, events: { "m.room.topic": 10 } });
    expectRule(() => room.check(room.event("m.room.message", undefined, BOB, { body: "x" })), "power.event_level");
    expectAllowed(() => room.check(room.event("m.custom.state", "", BOB, {})));
    expectAllowed(() => room.check(room.event("m.room.topic", "", BOB, { topic: "x" })));
    room.setPowerLevels({ users: room.adminUsers(), users_default: 10, events_default: 10, events: { "m.room.topic": 11 } });
    expectAllowed(() => room.check(room.event("m.room.message", undefined, BOB, { body: "x" })));
    expectRule(() => room.check(room.event("m.room.topic", "", BOB, { topic: "x" })), "power.event_level");
  });
});

describe("string and integer power levels", () => {
  it.each(ALL_VERSIONS)("v%s: string values are accepted in v1–9 and refused from v10", (id) => {
    const room = new RoomBuilder(id);
    room.join(BOB);
    const stringy = room.event("m.room.power_levels", "", ALICE, {
      ban: "50",
      events: { "m.room.name": "60" },
      events_default: "0",
      state_default: " 50 ",
      users: { ...room.adminUsers(), [BOB]: "+40" },
      users_default: "0",
    });
    if (v(id).stringPowerLevels) {
      room.send(stringy);
      // The string values are read as integers afterwards.
      const ctx = new AuthContext(stringy, room.state, room.v, {});
      expect(userPowerLevel(ctx, BOB)).toBe(40);
      expectRule(() => room.check(room.event("m.room.topic", "", BOB, { topic: "x" })), "power.event_level");
    } else {
      expectRule(() => room.check(stringy), "power_levels.invalid_level");
    }
  });

  it.each(ALL_VERSIONS)("v%s: a string user level alone", (id) => {
    const room = new RoomBuilder(id);
    const e = room.event("m.room.power_levels", "", ALICE, { users: room.adminUsers({ [BOB]: "10" }) });
    if (v(id).stringPowerLevels) expectAllowed(() => room.check(e));
    else expectRule(() => room.check(e), "power_levels.invalid_users");
  });

  it.each(versionsWhere((f) => f.integerOnlyPowerLevels))("v%s: events and notifications must map to integers", (id) => {
    const room = new RoomBuilder(id);
    expectRule(() => room.check(room.event("m.room.power_levels", "", ALICE, { events: { x: "1" } })), "power_levels.invalid_map");
    expectRule(() => room.check(room.event("m.room.power_levels", "", ALICE, { events: [] })), "power_levels.invalid_map");
    expectRule(() => room.check(room.event("m.room.power_levels", "", ALICE, { notifications: { room: "1" } })), "power_levels.invalid_map");
    expectRule(() => room.check(room.event("m.room.power_levels", "", ALICE, { users: [] })), "power_levels.invalid_users");
  });

  it.each(ALL_VERSIONS)("v%s: users keys must be user ids; invalid levels are refused", (id) => {
    const room = new RoomBuilder(id);
    expectRule(() => room.check(room.event("m.room.power_levels", "", ALICE, { users: { "not-a-user": 1 } })), "power_levels.invalid_users");
    expectRule(() => room.check(room.event("m.room.power_levels", "", ALICE, { users: { [BOB]: "high" } })), "power_levels.invalid_users");
    expectRule(() => room.check(room.event("m.room.power_levels", "", ALICE, { kick: "lots" })), "power_levels.invalid_level");
  });
});

describe("what a sender may change", () => {
  function roomWithModerator(id: string): RoomBuilder {
    const room = new RoomBuilder(id);
    room.join(BOB);
    room.join(DAVE);
    room.setPowerLevels({
      users: room.adminUsers({ [BOB]: 50, [DAVE]: 50, [CAROL]: 10 }),
      events: { "m.room.power_levels": 50, "m.room.tombstone": 100 },
      notifications: { room: 75 },
      ban: 100,
    });
    return room;
  }
  const pl = (room: RoomBuilder) => room.state.get("m.room.power_levels\u0000")!.content;
  const change = (room: RoomBuilder, patch: Record<string, unknown>) =>
    room.event("m.room.power_levels", "", BOB, { ...pl(room), ...patch });

  it.each(ALL_VERSIONS)("v%s: a sender cannot raise anyone above their own level", (id) => {
    const room = roomWithModerator(id);
    expectRule(() => room.check(change(room, { users: { ...(pl(room)["users"] as object), [CAROL]: 60 } })), "power_levels.users_new_too_high");
    expectAllowed(() => room.check(change(room, { users: { ...(pl(room)["users"] as object), [CAROL]: 50 } })));
    expectRule(() => room.check(change(room, { users: { ...(pl(room)["users"] as object), [BOB]: 51 } })), "power_levels.users_new_too_high");
  });

  it.each(ALL_VERSIONS)("v%s: a sender cannot demote or remove a user of equal or higher level, except themselves", (id) => {
    const room = roomWithModerator(id);
    const users = pl(room)["users"] as Record<string, number>;
    expectRule(() => room.check(change(room, { users: { ...users, [DAVE]: 0 } })), "power_levels.users_current_too_high");
    const { [DAVE]: _d, ...withoutDave } = users;
    expectRule(() => room.check(change(room, { users: withoutDave })), "power_levels.users_current_too_high");
    expectAllowed(() => room.check(change(room, { users: { ...users, [CAROL]: 0 } })));
    expectAllowed(() => room.check(change(room, { users: { ...users, [BOB]: 0 } })));
    if (!room.v.privilegedCreators) {
      expectRule(() => room.check(change(room, { users: { ...users, [ALICE]: 0 } })), "power_levels.users_current_too_high");
    }
  });

  it.each(ALL_VERSIONS)("v%s: named levels (ban, kick, invite, ...)", (id) => {
    const room = roomWithModerator(id);
    expectAllowed(() => room.check(change(room, { kick: 40 })));
    expectAllowed(() => room.check(change(room, { invite: 50 })));
    expectRule(() => room.check(change(room, { invite: 51 })), "power_levels.named_new_too_high");
    expectRule(() => room.check(change(room, { ban: 50 })), "power_levels.named_current_too_high");
    const { ban: _b, ...withoutBan } = pl(room);
    expectRule(() => room.check(room.event("m.room.power_levels", "", BOB, withoutBan)), "power_levels.named_current_too_high");
  });

  it.each(ALL_VERSIONS)("v%s: events entries", (id) => {
    const room = roomWithModerator(id);
    const events = pl(room)["events"] as Record<string, number>;
    expectRule(() => room.check(change(room, { events: { ...events, "m.room.tombstone": 50 } })), "power_levels.events_current_too_high");
    expectRule(() => room.check(change(room, { events: { ...events, "m.custom": 60 } })), "power_levels.events_new_too_high");
    expectAllowed(() => room.check(change(room, { events: { ...events, "m.custom": 40 } })));
  });

  it.each(ALL_VERSIONS)("v%s: notifications entries are checked from v6", (id) => {
    const room = roomWithModerator(id);
    const lower = change(room, { notifications: { room: 10 } });
    const higher = change(room, { notifications: { room: 75, other: 90 } });
    if (v(id).notificationsPowerLevels) {
      expectRule(() => room.check(lower), "power_levels.notifications_current_too_high");
      expectRule(() => room.check(higher), "power_levels.notifications_new_too_high");
    } else {
      expectAllowed(() => room.check(lower));
      expectAllowed(() => room.check(higher));
    }
  });

  it.each(ALL_VERSIONS)("v%s: the first power levels event is not limited by the sender's level", (id) => {
    const room = new RoomBuilder(id, ALICE, { bare: true });
    room.send(room.member(ALICE, ALICE, "join"));
    expectAllowed(() => room.check(room.event("m.room.power_levels", "", ALICE, { users: room.adminUsers({ [BOB]: 1_000_000 }), ban: 9000 })));
  });

  it.each(ALL_VERSIONS)("v%s: only senders with the power levels event's level may send one", (id) => {
    const room = roomWithModerator(id);
    expectRule(() => room.check(room.event("m.room.power_levels", "", CAROL, pl(room))), "sender_not_joined");
    room.join(CAROL);
    expectRule(() => room.check(room.event("m.room.power_levels", "", CAROL, pl(room))), "power.event_level");
  });
});

describe("v12 creators in power levels", () => {
  it("creators may not be listed in users; other versions may list them", () => {
    const room = new RoomBuilder("12", ALICE, { createContent: { additional_creators: [CAROL] } });
    expectRule(() => room.check(room.event("m.room.power_levels", "", ALICE, { users: { [ALICE]: 100 } })), "power_levels.creator_listed", 400);
    expectRule(() => room.check(room.event("m.room.power_levels", "", ALICE, { users: { [CAROL]: 100 } })), "power_levels.creator_listed", 400);
    expectAllowed(() => room.check(room.event("m.room.power_levels", "", ALICE, { users: { [BOB]: 100 } })));
    const r11 = new RoomBuilder("11", ALICE, { createContent: { additional_creators: [CAROL] } });
    expectAllowed(() => r11.check(r11.event("m.room.power_levels", "", ALICE, { users: { [ALICE]: 100, [CAROL]: 100 } })));
  });

  it("creators have unlimited power: any level can be granted, any user changed", () => {
    const room = new RoomBuilder("12", ALICE, { createContent: { additional_creators: [CAROL] } });
    room.join(CAROL);
    room.join(BOB);
    expectAllowed(() => room.setPowerLevels({ users: { [BOB]: Number.MAX_SAFE_INTEGER }, ban: Number.MAX_SAFE_INTEGER }, CAROL));
    expectAllowed(() => room.setPowerLevels({ users: { [BOB]: 0 }, ban: 50 }, CAROL));
    // A non-creator with a huge level still cannot touch the creators.
    room.setPowerLevels({ users: { [BOB]: 1_000_000 } });
    expectRule(() => room.check(room.member(BOB, CAROL, "ban")), "member.ban.power");
  });
});
