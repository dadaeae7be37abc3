// The auth rule for `m.room.member` events: join (public / invite / knock / restricted / knock_restricted),
// invite (including third-party invites), leave (and kick / unban), ban, knock, per room version.
// Spec: Room Versions v1–v12 "Authorisation rules", the m.room.member rule (rule 5 in v1–5/v12, 4 in v6–11).
import { prevEventIds } from "../events/types.js";
import { createEventIdOf, firstJoinUser } from "./create.js";
import { forbid, serverOf } from "./context.js";
import { stateLevel, userPowerLevel } from "./power-levels.js";
import { checkThirdPartyInviteMembership } from "./third-party-invite.js";
/** Rule "If type is m.room.member". Returns normally when the event is allowed; throws otherwise. */
export function checkMemberEvent(ctx, create) {
    const { event, version: v } = ctx;
    const target = event.state_key;
    const membership = event.content["membership"];
    if (typeof target !== "string")
        forbid("member.state_key", "a member event needs a state_key");
    if (!Object.hasOwn(event.content, "membership"))
        forbid("member.membership", "a member event needs content.membership");
    if (v.restricted && Object.hasOwn(event.content, "join_authorised_via_users_server")) {
        const via = event.content["join_authorised_via_users_server"];
        const verify = ctx.options.verifyServerSignature;
        if (typeof via !== "string" || !verify || !verify(event, serverOf(via))) {
            forbid("member.join_authorised_via.signature", "the event is not signed by the server of join_authorised_via_users_server");
        }
    }
    switch (membership) {
        case "join":
            return checkJoin(ctx, create, target);
        case "invite":
            return checkInvite(ctx, target);
        case "leave":
            return checkLeave(ctx, target);
        case "ban":
            return checkBan(ctx, target);
        case "knock":
            if (v.knock)
                return checkKnock(ctx, target);
            break;
    }
    forbid("member.unknown_membership", `unknown membership ${JSON.stringify(membership)}`);
}
function checkJoin(ctx, create, target) {
    const { event, version: v } = ctx;
    // First join: the only previous event is the create event and the target is the creator.
    const prev = prevEventIds(event);
    if (prev.length === 1 && target === firstJoinUser(create, v) && prev[0] === createEventIdOf(ctx, create))
        return;
    if (event.sender !== target)
        forbid("member.join.sender_not_target", "a user can only join themselves");
    const current = ctx.membershipOf(target);
    if (current === "ban")
        forbid("member.join.banned", "the sender is banned");
    const rule = ctx.joinRule();
    const inviteLike = rule === "invite" || (v.knock && rule === "knock");
    if (inviteLike) {
        if (current === "invite" || current === "join")
            return;
        forbid("member.join.not_invited", `the join rule is ${rule} and the sender is not invited`);
    }
    const restrictedLike = (v.restricted && rule === "restricted") || (v.knockRestricted && rule === "knock_restricted");
    if (restrictedLike) {
        if (current === "invite" || current === "join")
            return;
        const via = event.content["join_authorised_via_users_server"];
        if (typeof via !== "string" || ctx.membershipOf(via) !== "join") {
            forbid("member.join.restricted_authoriser_not_joined", "join_authorised_via_users_server is not a joined member");
        }
        if (userPowerLevel(ctx, via) < stateLevel(ctx, "invite")) {
            forbid("member.join.restricted_authoriser_cannot_invite", "join_authorised_via_users_server cannot invite");
        }
        return;
    }
    if (rule === "public")
        return;
    forbid("member.join.join_rule", `cannot join with join rule ${JSON.stringify(rule ?? null)}`);
}
function checkInvite(ctx, target) {
    const { event } = ctx;
    if (Object.hasOwn(event.content, "third_party_invite"))
        return checkThirdPartyInviteMembership(ctx, target);
    if (ctx.membershipOf(event.sender) !== "join")
        forbid("member.invite.sender_not_joined", "the inviter is not joined");
    const current = ctx.membershipOf(target);
    if (current === "join" || current === "ban")
        forbid("member.invite.target_joined_or_banned", `the target is ${current}`);
    if (userPowerLevel(ctx, event.sender) >= stateLevel(ctx, "invite"))
        return;
    forbid("member.invite.power", "the inviter's power level is below the invite level");
}
function checkLeave(ctx, target) {
    const { event, version: v } = ctx;
    if (event.sender === target) {
        const current = ctx.membershipOf(target);
        if (current === "invite" || current === "join" || (v.knock && current === "knock"))
            return;
        forbid("member.leave.self_not_member", `cannot leave with membership ${JSON.stringify(current ?? null)}`);
    }
    if (ctx.membershipOf(event.sender) !== "join")
        forbid("member.leave.sender_not_joined", "the sender is not joined");
    const senderLevel = userPowerLevel(ctx, event.sender);
    if (ctx.membershipOf(target) === "ban" && senderLevel < stateLevel(ctx, "ban")) {
        forbid("member.leave.unban_power", "the sender's power level is below the ban level");
    }
    if (senderLevel >= stateLevel(ctx, "kick") && userPowerLevel(ctx, target) < senderLevel)
        return;
    forbid("member.leave.kick_power", "the sender cannot kick this user");
}
function checkBan(ctx, target) {
    const { event } = ctx;
    if (ctx.membershipOf(event.sender) !== "join")
        forbid("member.ban.sender_not_joined", "the sender is not joined");
    const senderLevel = userPowerLevel(ctx, event.sender);
    if (senderLevel >= stateLevel(ctx, "ban") && userPowerLevel(ctx, target) < senderLevel)
        return;
    forbid("member.ban.power", "the sender cannot ban this user");
}
function checkKnock(ctx, target) {
    const { event, version: v } = ctx;
    const rule = ctx.joinRule();
    if (!(rule === "knock" || (v.knockRestricted && rule === "knock_restricted"))) {
        forbid("member.knock.join_rule", `cannot knock with join rule ${JSON.stringify(rule ?? null)}`);
    }
    if (event.sender !== target)
        forbid("member.knock.sender_not_target", "a user can only knock for themselves");
    const current = ctx.membershipOf(target);
    if (current === "ban" || current === "invite" || current === "join") {
        forbid("member.knock.membership", `cannot knock with membership ${current}`);
    }
}
