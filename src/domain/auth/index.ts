// The authorization rules of every room version as one entry point: `checkAuth` runs the rules in the
// spec's order against a given state (the auth events, the state before the event, or the current state)
// and throws M_FORBIDDEN naming the failed rule. Rule groups live in the sibling modules.
// Spec: Room Versions v1–v12 "Authorisation rules"; Server-Server API "Checks performed on receipt of a PDU".
import type { Pdu } from "../events/types.ts";
import { resolveRoomVersion, type RoomVersion } from "../rooms/room-versions.ts";
import { AuthContext, forbid, isValidUserId, serverOf, type AuthOptions, type AuthState } from "./context.ts";
import { checkCreateEvent, checkRoomAndFederation } from "./create.ts";
import { checkMemberEvent } from "./member.ts";
import { checkPowerLevelsEvent, requiredEventLevel, userPowerLevel } from "./power-levels.ts";
import { checkRedactionEventV1 } from "./redaction.ts";
import { checkThirdPartyInviteEvent } from "./third-party-invite.ts";

export {
  AuthContext,
  AuthError,
  authStateFromEvents,
  isValidServerName,
  isValidUserId,
  parseStateMapKey,
  stateMapKey,
  type AuthOptions,
  type AuthState,
} from "./context.ts";
export { checkCreateEvent, roomCreators } from "./create.ts";
export {
  CREATOR_DEFAULT_LEVEL,
  NAMED_LEVEL_DEFAULTS,
  namedLevel,
  parsePowerLevel,
  powerLevelsEventLevel,
  requiredEventLevel,
  stateLevel,
  userPowerLevel,
  type NamedLevel,
} from "./power-levels.ts";
export { redactionFacts, redactionTakesEffect, type RedactionCase, type RedactionFacts } from "./redaction.ts";
export { authTypesForEvent, checkAuthEventsList, type AuthEventsCheckOptions } from "./selection.ts";
export { thirdPartyInvitePublicKeys, thirdPartyInviteToken, verifyThirdPartyInviteSigned } from "./third-party-invite.ts";

/**
 * Throws an `AuthError` (M_FORBIDDEN, with `rule`) unless `event` is allowed by the authorization rules of
 * `roomVersion` against `authState`. The checks on the auth_events list itself (duplicates, unexpected
 * entries, rejected entries) are `checkAuthEventsList`, which the caller runs on the event's own auth events.
 */
export function checkAuth(event: Pdu, authState: AuthState, roomVersion: string | RoomVersion, options: AuthOptions = {}): void {
  const v = resolveRoomVersion(roomVersion);

  // Rule 1: the create event.
  if (event.type === "m.room.create") return checkCreateEvent(event, v);

  const ctx = new AuthContext(event, authState, v, options);
  // v12 rule 2 (room id = create event id), the create event present, and the m.federate rule.
  const create = checkRoomAndFederation(ctx);

  // v1–5: m.room.aliases is authorised by the sender's server alone.
  if (v.specialCaseAliasesAuth && event.type === "m.room.aliases") {
    if (typeof event.state_key !== "string") forbid("aliases.state_key", "m.room.aliases needs a state_key");
    if (event.state_key !== serverOf(event.sender)) forbid("aliases.domain", "the state_key is not the sender's server");
    return;
  }

  if (event.type === "m.room.member") return checkMemberEvent(ctx, create);

  if (ctx.membershipOf(event.sender) !== "join") forbid("sender_not_joined", "the sender is not joined to the room");

  if (event.type === "m.room.third_party_invite") return checkThirdPartyInviteEvent(ctx);

  const isState = typeof event.state_key === "string";
  const senderLevel = userPowerLevel(ctx, event.sender);
  const required = requiredEventLevel(ctx, event.type, isState);
  if (required > senderLevel) {
    forbid("power.event_level", `sending ${event.type} needs power level ${required}; the sender has ${senderLevel}`);
  }

  if (isState && event.state_key!.startsWith("@") && event.state_key !== event.sender) {
    if (!v.ownedState || !mayWriteOwnedState(ctx, event.state_key!, senderLevel)) forbid("state_key.user", "a state_key starting with @ must be the sender's user id");
  }

  if (event.type === "m.room.power_levels") return checkPowerLevelsEvent(ctx);

  if (v.redactionAuthInRules && event.type === "m.room.redaction") return checkRedactionEventV1(ctx);
}

/**
 * MSC3757 (owned state): the user a state key `@user:server` or `@user:server_<suffix>` names (the suffix
 * starts at the first `_` after the first `:`), as Synapse reads it; undefined when that is no valid user id.
 */
export function ownerOfStateKey(stateKey: string): string | undefined {
  const colon = stateKey.indexOf(":", 1);
  if (colon < 0) return undefined;
  const suffix = stateKey.indexOf("_", colon + 1);
  const owner = suffix < 0 ? stateKey : stateKey.slice(0, suffix);
  return isValidUserId(owner) ? owner : undefined;
}

/**
 * MSC3757: may the sender set a state key starting with `@` other than their user id? Yes when it is theirs
 * with a suffix, or they have more power than its owner. A key naming no valid user is M_BAD_JSON (400).
 */
function mayWriteOwnedState(ctx: AuthContext, stateKey: string, senderLevel: number): boolean {
  const owner = ownerOfStateKey(stateKey);
  if (owner === undefined) forbid("state_key.owner", "the state key neither equals a valid user ID, nor starts with one plus an underscore", 400, "M_BAD_JSON");
  return owner === ctx.event.sender || senderLevel > userPowerLevel(ctx, owner);
}
