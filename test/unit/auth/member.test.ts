// The m.room.member rule across room versions: join (public, invite, knock, restricted, knock_restricted,
// first join), invite (power, default invite level, third-party invites), leave/kick/unban, ban, knock.
import { describe, expect, it } from "vitest";
import type { AuthOptions } from "../../../src/domain/auth/index.ts";
import { getRoomVersion } from "../../../src/domain/rooms/room-versions.ts";
import { expectAllowed, expectRule } from "./expect.ts";
import { ALICE, ALL_VERSIONS, BOB, CAROL, DAVE, RoomBuilder, versionsWhere } from "./room-builder.ts";

const SIGNED_BY_ANYONE: AuthOptions = { verifyServerSignature: () => true };

describe("membership basics", () => {
  it.each(ALL_VERSIONS)("v%s: state_key and content.membership are required; unknown memberships are refused", (v) => {
    const room = new RoomBuilder(v);
    expectRule(() => room.check(room.event("m.room.member", undefined, BOB, { membership: "join" })), "member.state_key");
    expectRule(() => room.check(room.event("m.room.member", BOB, BOB, {})), "member.membership");
    expectRule(() => room.check(room.member(BOB, BOB, "dance")), "member.unknown_membership");
  });

  it.each(ALL_VERSIONS)("v%s: the creator's first join directly after the create event", (v) => {
    const room = new RoomBuilder(v, ALICE, { bare: true });
    expectRule(() => room.check(room.member(BOB, BOB, "join")), "member.join.join_rule"); // not the creator, no join rule
    expectAllowed(() => room.send(room.member(ALICE, ALICE, "join")));
  });

  it("v12: an additional creator does not get the first-join shortcut", () => {
    const room = new RoomBuilder("12", ALICE, { bare: true, createContent: { additional_creators: [BOB] } });
    expectRule(() => room.check(room.member(BOB, BOB, "join")), "member.join.join_rule");
  });
});

describe("join", () => {
  it.each(ALL_VERSIONS)("v%s: public rooms admit anyone; a user joins only themselves; banned users cannot", (v) => {
    const room = new RoomBuilder(v);
    expectRule(() => room.check(room.member(ALICE, BOB, "join")), "member.join.sender_not_target");
    expectAllowed(() => room.join(BOB));
    room.send(room.member(ALICE, CAROL, "ban"));
    expectRule(() => room.check(room.member(CAROL, CAROL, "join")), "member.join.banned");
  });

  it.each(ALL_VERSIONS)("v%s: invite-only rooms need an invite", (v) => {
    const room = new RoomBuilder(v, ALICE, { joinRule: "invite" });
    expectRule(() => room.check(room.member(BOB, BOB, "join")), "member.join.not_invited");
    room.send(room.member(ALICE, BOB, "invite"));
    expectAllowed(() => room.join(BOB));
  });

  it.each(ALL_VERSIONS)("v%s: the knock join rule exists from v7", (v) => {
    const room = new RoomBuilder(v, ALICE, { joinRule: "knock" });
    if (getRoomVersion(v)!.knock) {
      expectRule(() => room.check(room.member(BOB, BOB, "join")), "member.join.not_invited");
      room.send(room.member(ALICE, BOB, "invite"));
      expectAllowed(() => room.join(BOB));
    } else {
      expectRule(() => room.check(room.member(BOB, BOB, "join")), "member.join.join_rule");
      room.send(room.member(ALICE, BOB, "invite"));
      expectRule(() => room.check(room.member(BOB, BOB, "join")), "member.join.join_rule");
    }
  });

  it.each(ALL_VERSIONS)("v%s: unknown join rules and rooms without join rules refuse joins", (v) => {
    const room = new RoomBuilder(v, ALICE, { joinRule: "private" });
    expectRule(() => room.check(room.member(BOB, BOB, "join")), "member.join.join_rule");
  });
});

describe("restricted and knock_restricted joins", () => {
  it.each(ALL_VERSIONS)("v%s: restricted", (v) => {
    const room = new RoomBuilder(v, ALICE, { joinRule: "restricted" });
    room.options = SIGNED_BY_ANYONE;
    const viaAlice = room.member(BOB, BOB, "join", { join_authorised_via_users_server: ALICE });
    if (!getRoomVersion(v)!.restricted) {
      expectRule(() => room.check(viaAlice), "member.join.join_rule");
      return;
    }
    expectAllowed(() => room.check(viaAlice));
    // Without a signature check from the caller, the authorising server's signature cannot be trusted.
    expectRule(() => room.check(viaAlice, {}), "member.join_authorised_via.signature");
    expectRule(() => room.check(viaAlice, { verifyServerSignature: (_e, server) => server === "b.example" }), "member.join_authorised_via.signature");
    expectAllowed(() => room.check(viaAlice, { verifyServerSignature: (_e, server) => server === "a.example" }));
    // No authoriser, an authoriser who is not joined, an authoriser who cannot invite.
    expectRule(() => room.check(room.member(BOB, BOB, "join")), "member.join.restricted_authoriser_not_joined");
    expectRule(
      () => room.check(room.member(BOB, BOB, "join", { join_authorised_via_users_server: CAROL })),
      "member.join.restricted_authoriser_not_joined",
    );
    room.send(room.member(ALICE, DAVE, "invite"));
    room.join(DAVE);
    room.setPowerLevels({ users: room.adminUsers(), invite: 50 });
    expectRule(
      () => room.check(room.member(BOB, BOB, "join", { join_authorised_via_users_server: DAVE })),
      "member.join.restricted_authoriser_cannot_invite",
    );
    // Invited users join without an authoriser.
    room.send(room.member(ALICE, CAROL, "invite"));
    expectAllowed(() => room.join(CAROL));
  });

  it.each(ALL_VERSIONS)("v%s: knock_restricted admits both restricted joins and knocks from v10", (v) => {
    const room = new RoomBuilder(v, ALICE, { joinRule: "knock_restricted" });
    room.options = SIGNED_BY_ANYONE;
    const join = room.member(BOB, BOB, "join", { join_authorised_via_users_server: ALICE });
    const knock = room.member(CAROL, CAROL, "knock");
    const f = getRoomVersion(v)!;
    if (f.knockRestricted) {
      expectAllowed(() => room.check(join));
      expectAllowed(() => room.check(knock));
    } else {
      expectRule(() => room.check(join), "member.join.join_rule");
      expectRule(() => room.check(knock), f.knock ? "member.knock.join_rule" : "member.unknown_membership");
    }
  });
});

describe("knock", () => {
  it.each(ALL_VERSIONS)("v%s: knocking is refused before v7", (v) => {
    const room = new RoomBuilder(v, ALICE, { joinRule: "knock" });
    const knock = room.member(BOB, BOB, "knock", { reason: "let me in" });
    if (getRoomVersion(v)!.knock) expectAllowed(() => room.check(knock));
    else expectRule(() => room.check(knock), "member.unknown_membership");
  });

  it.each(versionsWhere((f) => f.knock))("v%s: knock edge cases", (v) => {
    const room = new RoomBuilder(v, ALICE, { joinRule: "knock" });
    expectRule(() => room.check(room.member(ALICE, BOB, "knock")), "member.knock.sender_not_target");
    // knock → knock again is allowed; knock → leave by oneself (rescinding) is allowed.
    room.send(room.member(BOB, BOB, "knock"));
    expectAllowed(() => room.check(room.member(BOB, BOB, "knock")));
    expectAllowed(() => room.check(room.member(BOB, BOB, "leave")));
    // knock → join needs an invite; knock → invite is allowed.
    expectRule(() => room.check(room.member(BOB, BOB, "join")), "member.join.not_invited");
    room.send(room.member(ALICE, BOB, "invite"));
    // invite → knock is refused; invite → join allowed.
    expectRule(() => room.check(room.member(BOB, BOB, "knock")), "member.knock.membership");
    room.join(BOB);
    expectRule(() => room.check(room.member(BOB, BOB, "knock")), "member.knock.membership");
    // banned users cannot knock; public rooms cannot be knocked on.
    room.send(room.member(ALICE, CAROL, "ban"));
    expectRule(() => room.check(room.member(CAROL, CAROL, "knock")), "member.knock.membership");
    room.setJoinRule("public");
    expectRule(() => room.check(room.member(DAVE, DAVE, "knock")), "member.knock.join_rule");
  });

  it("v6: a user whose membership is knock cannot rescind it (no knock before v7)", () => {
    const room = new RoomBuilder("6");
    room.apply(room.member(BOB, BOB, "knock"));
    expectRule(() => room.check(room.member(BOB, BOB, "leave")), "member.leave.self_not_member");
    const r7 = new RoomBuilder("7");
    r7.apply(r7.member(BOB, BOB, "knock"));
    expectAllowed(() => r7.check(r7.member(BOB, BOB, "leave")));
  });
});

describe("invite", () => {
  it.each(ALL_VERSIONS)("v%s: the invite level defaults to 0", (v) => {
    const room = new RoomBuilder(v);
    room.join(BOB); // level 0
    expectAllowed(() => room.check(room.member(BOB, CAROL, "invite")));
    room.setPowerLevels({ users: room.adminUsers(), invite: 50 });
    expectRule(() => room.check(room.member(BOB, CAROL, "invite")), "member.invite.power");
    expectAllowed(() => room.check(room.member(ALICE, CAROL, "invite")));
  });

  it.each(ALL_VERSIONS)("v%s: the inviter must be joined; joined or banned users cannot be invited", (v) => {
    const room = new RoomBuilder(v);
    expectRule(() => room.check(room.member(BOB, CAROL, "invite")), "member.invite.sender_not_joined");
    room.join(BOB);
    expectRule(() => room.check(room.member(ALICE, BOB, "invite")), "member.invite.target_joined_or_banned");
    room.send(room.member(ALICE, CAROL, "ban"));
    expectRule(() => room.check(room.member(ALICE, CAROL, "invite")), "member.invite.target_joined_or_banned");
  });
});

describe("leave, kick, unban and ban", () => {
  it.each(ALL_VERSIONS)("v%s", (v) => {
    const room = new RoomBuilder(v);
    room.join(BOB);
    room.join(DAVE);
    // Leaving oneself needs to be invited or joined.
    expectAllowed(() => room.check(room.member(BOB, BOB, "leave")));
    expectRule(() => room.check(room.member(CAROL, CAROL, "leave")), "member.leave.self_not_member");
    // Kick: the kicker must be joined, have the kick level and outrank the target.
    expectRule(() => room.check(room.member(CAROL, BOB, "leave")), "member.leave.sender_not_joined");
    expectRule(() => room.check(room.member(BOB, DAVE, "leave")), "member.leave.kick_power");
    expectRule(() => room.check(room.member(BOB, ALICE, "leave")), "member.leave.kick_power");
    expectAllowed(() => room.check(room.member(ALICE, BOB, "leave")));
    // Equal levels cannot kick or ban each other.
    room.setPowerLevels({ users: room.adminUsers({ [BOB]: 50, [DAVE]: 50 }) });
    expectRule(() => room.check(room.member(BOB, DAVE, "leave")), "member.leave.kick_power");
    expectRule(() => room.check(room.member(BOB, DAVE, "ban")), "member.ban.power");
    // Ban and unban.
    expectRule(() => room.check(room.member(CAROL, BOB, "ban")), "member.ban.sender_not_joined");
    room.send(room.member(ALICE, CAROL, "ban"));
    expectRule(() => room.check(room.member(CAROL, CAROL, "leave")), "member.leave.self_not_member");
    room.setPowerLevels({ users: room.adminUsers({ [BOB]: 50 }), kick: 50, ban: 60 });
    expectRule(() => room.check(room.member(BOB, CAROL, "leave")), "member.leave.unban_power");
    expectAllowed(() => room.check(room.member(ALICE, CAROL, "leave")));
  });
});

describe("third-party invites", () => {
  const signed = { mxid: BOB, token: "tok", signatures: { "id.example": { "ed25519:0": "sig" } } };
  const verify = (good: string) => ({ verifyThirdPartyInviteSignature: (_s: Record<string, unknown>, key: string) => key === good });

  it.each(ALL_VERSIONS)("v%s", (v) => {
    const room = new RoomBuilder(v);
    room.join(DAVE);
    // Sending m.room.third_party_invite needs the invite level.
    const tpi = room.event("m.room.third_party_invite", "tok", ALICE, {
      display_name: "b...@example.com",
      key_validity_url: "https://id.example/_matrix/identity/v2/pubkey/isvalid",
      public_key: "KEY1",
      public_keys: [{ public_key: "KEY2", key_validity_url: "https://id.example/x" }],
    });
    room.send(tpi);
    const invite = (extra: Record<string, unknown>, sender = ALICE, target = BOB) =>
      room.member(sender, target, "invite", { third_party_invite: { display_name: "b...", ...extra } });

    expectAllowed(() => room.check(invite({ signed }), verify("KEY1")));
    expectAllowed(() => room.check(invite({ signed }), verify("KEY2")));
    expectRule(() => room.check(invite({ signed }), verify("OTHER")), "member.third_party_invite.signature");
    expectRule(() => room.check(invite({ signed }), {}), "member.third_party_invite.signature");
    expectRule(() => room.check(invite({}), verify("KEY1")), "member.third_party_invite.signed");
    expectRule(() => room.check(invite({ signed: { mxid: BOB } }), verify("KEY1")), "member.third_party_invite.mxid_token");
    expectRule(() => room.check(invite({ signed: { ...signed, mxid: CAROL } }), verify("KEY1")), "member.third_party_invite.mxid");
    expectRule(() => room.check(invite({ signed: { ...signed, token: "nope" } }), verify("KEY1")), "member.third_party_invite.no_invite");
    expectRule(() => room.check(invite({ signed }, DAVE), verify("KEY1")), "member.third_party_invite.sender");
    room.send(room.member(ALICE, BOB, "ban"));
    expectRule(() => room.check(invite({ signed }), verify("KEY1")), "member.third_party_invite.target_banned");
  });

  it.each(ALL_VERSIONS)("v%s: m.room.third_party_invite events need the invite level", (v) => {
    const room = new RoomBuilder(v);
    room.join(BOB);
    expectAllowed(() => room.check(room.event("m.room.third_party_invite", "t1", BOB, { public_key: "k" })));
    room.setPowerLevels({ users: room.adminUsers(), invite: 10 });
    expectRule(() => room.check(room.event("m.room.third_party_invite", "t1", BOB, { public_key: "k" })), "third_party_invite.power");
    expectRule(() => room.check(room.event("m.room.third_party_invite", "t1", CAROL, { public_key: "k" })), "sender_not_joined");
  });
});

describe("v12 creators", () => {
  it("creators outrank everyone and cannot be kicked or banned, even by each other", () => {
    const room = new RoomBuilder("12", ALICE, { createContent: { additional_creators: [CAROL] } });
    room.join(CAROL);
    room.join(BOB);
    room.setPowerLevels({ users: { [BOB]: 1000 } });
    expectRule(() => room.check(room.member(BOB, ALICE, "ban")), "member.ban.power");
    expectRule(() => room.check(room.member(BOB, CAROL, "leave")), "member.leave.kick_power");
    expectRule(() => room.check(room.member(ALICE, CAROL, "ban")), "member.ban.power");
    expectAllowed(() => room.check(room.member(CAROL, BOB, "ban")));
  });

  it("v11: the additional_creators key means nothing; the creator is an ordinary 100 once power levels exist", () => {
    const room = new RoomBuilder("11", ALICE, { createContent: { additional_creators: [CAROL] } });
    room.join(CAROL);
    room.join(BOB);
    // Applied without checks: ALICE (100) could not grant 1000 herself.
    room.apply(room.event("m.room.power_levels", "", ALICE, { users: { [ALICE]: 100, [BOB]: 1000 } }));
    expectAllowed(() => room.check(room.member(BOB, ALICE, "ban")));
    expectRule(() => room.check(room.member(CAROL, BOB, "ban")), "member.ban.power");
  });
});

describe("sender must be joined", () => {
  it.each(ALL_VERSIONS)("v%s", (v) => {
    const room = new RoomBuilder(v);
    expectRule(() => room.check(room.event("m.room.message", undefined, BOB, { body: "hi" })), "sender_not_joined");
    room.send(room.member(ALICE, BOB, "invite"));
    expectRule(() => room.check(room.event("m.room.message", undefined, BOB, { body: "hi" })), "sender_not_joined");
    room.join(BOB);
    expectAllowed(() => room.check(room.event("m.room.message", undefined, BOB, { body: "hi" })));
  });
});
