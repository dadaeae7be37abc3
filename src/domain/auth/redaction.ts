// Redactions and authority: in v1–2 the auth rules check `m.room.redaction` events (rule 11); from v3 the
// auth rules treat them like any event and the check moves to when the redaction is applied.
// Spec: Room Versions v1 "Authorisation rules" rule 11; v3+ "Handling redactions".
import { eventIdOf, roomIdOf } from "../events/hashes.ts";
import { redactsOf } from "../events/redaction.ts";
import type { Pdu } from "../events/types.ts";
import { resolveRoomVersion, type RoomVersion } from "../rooms/room-versions.ts";
import { AuthContext, forbid, serverOf, type AuthState } from "./context.ts";
import { stateLevel, userPowerLevel } from "./power-levels.ts";

/** v1–2 rule 11: redact level, or the redacted event's id has the redaction's event-id domain. */
export function checkRedactionEventV1(ctx: AuthContext): void {
  const { event, version: v } = ctx;
  if (userPowerLevel(ctx, event.sender) >= stateLevel(ctx, "redact")) return;
  const target = redactsOf(event, v);
  if (typeof target === "string" && typeof event.event_id === "string" && serverOf(target) !== "" && serverOf(target) === serverOf(event.event_id)) {
    return;
  }
  forbid("redaction.power", "the sender's power level is below the redact level and the event is from another server");
}

/**
 * Whether a received, authorised redaction should be applied to `target` (and the redaction shown to
 * clients). `stateAtRedaction` is the room state the redaction was authorised against (at least the
 * create and power levels events). v3+: the sender has the redact level, or the sender's server is the
 * original sender's server. v1–2: the same decision the auth rules made (redact level or event-id domain).
 */
export function shouldApplyRedaction(redaction: Pdu, target: Pdu, stateAtRedaction: AuthState, version: string | RoomVersion): boolean {
  const v = resolveRoomVersion(version);
  if (redaction.type !== "m.room.redaction") return false;
  if (redactsOf(redaction, v) !== eventIdOf(target, v)) return false;
  if (roomIdOf(redaction, v) !== roomIdOf(target, v)) return false;
  const ctx = new AuthContext(redaction, stateAtRedaction, v, {});
  if (userPowerLevel(ctx, redaction.sender) >= stateLevel(ctx, "redact")) return true;
  if (v.redactionAuthInRules) {
    return typeof redaction.event_id === "string" && typeof target.event_id === "string" && serverOf(redaction.event_id) === serverOf(target.event_id);
  }
  return serverOf(redaction.sender) === serverOf(target.sender);
}
