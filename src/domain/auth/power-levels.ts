// Power levels: reading values under each version's number rules (strings v1–9, floats v1–5, integers only
// v10+), users' levels (v12 creators infinite), the named levels with their defaults, and the auth rule for
// `m.room.power_levels` events (validation, then what a sender may add, change or remove).
// Spec: Room Versions "Authorisation rules" (power levels rule, "Definitions"); m.room.power_levels.
import type { Pdu } from "../events/types.ts";
import type { RoomVersion } from "../rooms/room-versions.ts";
import { roomCreators } from "./create.ts";
import { forbid, isPlainObject, isValidUserId, type AuthContext } from "./context.ts";

/** The named levels of the auth rules with the defaults that apply when the property is absent. */
export const NAMED_LEVEL_DEFAULTS = {
  users_default: 0,
  events_default: 0,
  state_default: 50,
  ban: 50,
  kick: 50,
  redact: 50,
  invite: 0,
} as const;

export type NamedLevel = keyof typeof NAMED_LEVEL_DEFAULTS;
const NAMED_LEVELS = Object.keys(NAMED_LEVEL_DEFAULTS) as NamedLevel[];

/** The power level of the creator when the room has no power levels event (v1–11). */
export const CREATOR_DEFAULT_LEVEL = 100;

// v1–9 strings: optional whitespace, optional single sign, base-10 digits, optional whitespace.
const INTEGER_STRING = /^\s*[+-]?[0-9]+\s*$/;

/**
 * A power level value as the room version reads it, or undefined when it is not a valid level:
 * integers always; strings holding an integer in v1–9; finite floats truncated in v1–5.
 */
export function parsePowerLevel(value: unknown, v: RoomVersion): number | undefined {
  if (typeof value === "number") {
    if (Number.isInteger(value)) return value;
    if (v.floatPowerLevels && Number.isFinite(value)) return Math.trunc(value);
    return undefined;
  }
  if (typeof value === "string" && v.stringPowerLevels && INTEGER_STRING.test(value)) {
    const n = Number.parseInt(value.trim(), 10);
    return Number.isSafeInteger(n) ? n : undefined;
  }
  return undefined;
}

/** Is `value` acceptable in a new power levels event under this version? */
function validLevel(value: unknown, v: RoomVersion): boolean {
  if (v.integerOnlyPowerLevels) return typeof value === "number" && Number.isInteger(value);
  return parsePowerLevel(value, v) !== undefined;
}

/** A level map (`users`, `events`, `notifications`) read leniently: invalid entries are skipped. */
function levelMap(value: unknown, v: RoomVersion): Map<string, number> {
  const out = new Map<string, number>();
  if (!isPlainObject(value)) return out;
  for (const [k, raw] of Object.entries(value)) {
    const n = parsePowerLevel(raw, v);
    if (n !== undefined) out.set(k, n);
  }
  return out;
}

/** The named level from a power levels content (or its default when absent or invalid). */
export function namedLevel(content: Record<string, unknown> | undefined, name: NamedLevel, v: RoomVersion): number {
  if (!content) return NAMED_LEVEL_DEFAULTS[name];
  return parsePowerLevel(content[name], v) ?? NAMED_LEVEL_DEFAULTS[name];
}

/** The current level of `userId` (v12 creators: Infinity; no power levels event: creator 100, others 0). */
export function userPowerLevel(ctx: AuthContext, userId: string): number {
  const v = ctx.version;
  if (v.privilegedCreators && roomCreators(ctx.create, v).has(userId)) return Infinity;
  const pl = ctx.powerLevelsEvent;
  if (pl) {
    const users = pl.content["users"];
    if (isPlainObject(users) && Object.hasOwn(users, userId)) {
      const n = parsePowerLevel(users[userId], v);
      if (n !== undefined) return n;
    }
    return namedLevel(pl.content, "users_default", v);
  }
  if (!v.privilegedCreators && roomCreators(ctx.create, v).has(userId)) return CREATOR_DEFAULT_LEVEL;
  return 0;
}

/** The invite / kick / ban / redact level (or any named level) in the current state. */
export function stateLevel(ctx: AuthContext, name: NamedLevel): number {
  return namedLevel(ctx.powerLevelsEvent?.content, name, ctx.version);
}

/** The level needed to send an event of `type` (`events[type]`, else state_default / events_default). */
export function requiredEventLevel(ctx: AuthContext, type: string, isState: boolean): number {
  const content = ctx.powerLevelsEvent?.content;
  const events = content?.["events"];
  if (isPlainObject(events) && Object.hasOwn(events, type)) {
    const n = parsePowerLevel(events[type], ctx.version);
    if (n !== undefined) return n;
  }
  return namedLevel(content, isState ? "state_default" : "events_default", ctx.version);
}

/** Validates the content of a new power levels event (rules 10.1–10.4 in v12 numbering). */
function validatePowerLevelsContent(ctx: AuthContext, content: Record<string, unknown>): void {
  const v = ctx.version;
  for (const name of NAMED_LEVELS) {
    if (Object.hasOwn(content, name) && !validLevel(content[name], v)) {
      forbid("power_levels.invalid_level", `${name} is not a valid power level`);
    }
  }
  const maps = v.notificationsPowerLevels ? (["events", "notifications"] as const) : (["events"] as const);
  for (const name of maps) {
    if (!Object.hasOwn(content, name)) continue;
    const m = content[name];
    if (!isPlainObject(m) || !Object.values(m).every((x) => validLevel(x, v))) {
      forbid("power_levels.invalid_map", `${name} must be an object of power levels`);
    }
  }
  if (Object.hasOwn(content, "users")) {
    const users = content["users"];
    if (!isPlainObject(users)) forbid("power_levels.invalid_users", "users must be an object");
    for (const [user, level] of Object.entries(users)) {
      if (!isValidUserId(user)) forbid("power_levels.invalid_users", `${JSON.stringify(user)} is not a valid user id`);
      if (!validLevel(level, v)) forbid("power_levels.invalid_users", `the level of ${user} is not a valid power level`);
    }
    // A malformed request to a local client, not a lack of power: 400 (Synapse's SynapseError(400)).
    if (v.privilegedCreators) {
      for (const creator of roomCreators(ctx.create, v)) {
        if (Object.hasOwn(users, creator)) forbid("power_levels.creator_listed", `room creator ${creator} may not be listed in users`, 400);
      }
    }
  }
}

/** Rule "If type is m.room.power_levels" (rule 10 in v1–5 and v12, rule 9 in v6–11). */
export function checkPowerLevelsEvent(ctx: AuthContext): void {
  const { event, version: v } = ctx;
  const content = isPlainObject(event.content) ? event.content : {};
  validatePowerLevelsContent(ctx, content);

  const previous = ctx.powerLevelsEvent;
  if (!previous) return; // no previous power levels event: allow
  const old = previous.content;
  const senderLevel = userPowerLevel(ctx, event.sender);

  for (const name of NAMED_LEVELS) {
    const before = Object.hasOwn(old, name) ? parsePowerLevel(old[name], v) : undefined;
    const after = Object.hasOwn(content, name) ? parsePowerLevel(content[name], v) : undefined;
    if (before === after) continue;
    if (before !== undefined && before > senderLevel) {
      forbid("power_levels.named_current_too_high", `cannot change ${name} from ${before}: above the sender's level ${senderLevel}`);
    }
    if (after !== undefined && after > senderLevel) {
      forbid("power_levels.named_new_too_high", `cannot set ${name} to ${after}: above the sender's level ${senderLevel}`);
    }
  }

  const maps = v.notificationsPowerLevels ? (["events", "notifications"] as const) : (["events"] as const);
  for (const name of maps) {
    const before = levelMap(old[name], v);
    const after = levelMap(content[name], v);
    for (const key of new Set([...before.keys(), ...after.keys()])) {
      const b = before.get(key);
      const a = after.get(key);
      if (a === b) continue;
      if (b !== undefined && b > senderLevel) {
        forbid(`power_levels.${name}_current_too_high`, `cannot change ${name}.${key} from ${b}: above the sender's level ${senderLevel}`);
      }
      if (a !== undefined && a > senderLevel) {
        forbid(`power_levels.${name}_new_too_high`, `cannot set ${name}.${key} to ${a}: above the sender's level ${senderLevel}`);
      }
    }
  }

  const beforeUsers = levelMap(old["users"], v);
  const afterUsers = levelMap(content["users"], v);
  for (const user of new Set([...beforeUsers.keys(), ...afterUsers.keys()])) {
    const b = beforeUsers.get(user);
    const a = afterUsers.get(user);
    if (a === b) continue;
    if (b !== undefined && user !== event.sender && b >= senderLevel) {
      forbid("power_levels.users_current_too_high", `cannot change the level of ${user} (${b}): not below the sender's level ${senderLevel}`);
    }
    if (a !== undefined && a > senderLevel) {
      forbid("power_levels.users_new_too_high", `cannot set the level of ${user} to ${a}: above the sender's level ${senderLevel}`);
    }
  }
}

/** The named level of a power levels event on its own (for callers outside the auth rules). */
export function powerLevelsEventLevel(pl: Pdu | undefined, name: NamedLevel, v: RoomVersion): number {
  return namedLevel(pl?.content, name, v);
}
