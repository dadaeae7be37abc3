import { resolveRoomVersion } from "../rooms/room-versions.js";
import { AuthContext, forbid, serverOf } from "./context.js";
import { checkCreateEvent, checkRoomAndFederation } from "./create.js";
import { checkMemberEvent } from "./member.js";
import { checkPowerLevelsEvent, requiredEventLevel, userPowerLevel } from "./power-levels.js";
import { checkRedactionEventV1 } from "./redaction.js";
import { checkThirdPartyInviteEvent } from "./third-party-invite.js";
export { AuthContext, AuthError, authStateFromEvents, isValidServerName, isValidUserId, parseStateMapKey, stateMapKey, } from "./context.js";
export { checkCreateEvent, roomCreators } from "./create.js";
export { CREATOR_DEFAULT_LEVEL, NAMED_LEVEL_DEFAULTS, namedLevel, parsePowerLevel, powerLevelsEventLevel, requiredEventLevel, stateLevel, userPowerLevel, } from "./power-levels.js";
export { redactionFacts, redactionTakesEffect } from "./redaction.js";
export { authTypesForEvent, checkAuthEventsList } from "./selection.js";
export { thirdPartyInvitePublicKeys, thirdPartyInviteToken, verifyThirdPartyInviteSigned } from "./third-party-invite.js";
/**
 * Throws an `AuthError` (M_FORBIDDEN, with `rule`) unless `event` is allowed by the authorization rules of
 * `roomVersion` against `authState`. The checks on the auth_events list itself (duplicates, unexpected
 * entries, rejected entries) are `checkAuthEventsList`, which the caller runs on the event's own auth events.
 */
export function checkAuth(event, authState, roomVersion, options = {}) {
    const v = resolveRoomVersion(roomVersion);
    // Rule 1: the create event.
    if (event.type === "m.room.create")
        return checkCreateEvent(event, v);
    const ctx = new AuthContext(event, authState, v, options);
    // v12 rule 2 (room id = create event id), the create event present, and the m.federate rule.
    const create = checkRoomAndFederation(ctx);
    // v1–5: m.room.aliases is authorised by the sender's server alone.
    if (v.specialCaseAliasesAuth && event.type === "m.room.aliases") {
        if (typeof event.state_key !== "string")
            forbid("aliases.state_key", "m.room.aliases needs a state_key");
        if (event.state_key !== serverOf(event.sender))
            forbid("aliases.domain", "the state_key is not the sender's server");
        return;
    }
    if (event.type === "m.room.member")
        return checkMemberEvent(ctx, create);
    if (ctx.membershipOf(event.sender) !== "join")
        forbid("sender_not_joined", "the sender is not joined to the room");
    if (event.type === "m.room.third_party_invite")
        return checkThirdPartyInviteEvent(ctx);
    const isState = typeof event.state_key === "string";
    const senderLevel = userPowerLevel(ctx, event.sender);
    const required = requiredEventLevel(ctx, event.type, isState);
    if (required > senderLevel) {
        forbid("power.event_level", `sending ${event.type} needs power level ${required}; the sender has ${senderLevel}`);
    }
    if (isState && event.state_key.startsWith("@") && event.state_key !== event.sender) {
        forbid("state_key.user", "a state_key starting with @ must be the sender's user id");
    }
    if (event.type === "m.room.power_levels")
        return checkPowerLevelsEvent(ctx);
    if (v.redactionAuthInRules && event.type === "m.room.redaction")
        return checkRedactionEventV1(ctx);
}
