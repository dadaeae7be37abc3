// Shared pieces of the authorization rules: the auth state map and its key, the error raised when a rule
// fails (named by a stable rule id), the caller-supplied signature callbacks, and state readers.
// Spec: Server-Server API "Authorisation rules" / "Checks performed on receipt of a PDU"; Room Versions.
import { MatrixError, type ErrCode } from "../errors.ts";
import type { RoomVersion } from "../rooms/room-versions.ts";
import { isPlainObject, type Pdu } from "../events/types.ts";

/** The state an event is authorised against: (type, state_key) → event. Build keys with `stateMapKey`. */
export type AuthState = ReadonlyMap<string, Pdu>;

/** The key of `(type, state_key)` in an `AuthState` map. */
export function stateMapKey(type: string, stateKey: string): string {
  return `${type}\u0000${stateKey}`;
}

/** Splits a key made by `stateMapKey`. */
export function parseStateMapKey(key: string): [type: string, stateKey: string] {
  const i = key.indexOf("\u0000");
  return [key.slice(0, i), key.slice(i + 1)];
}

/** An AuthState from a list of state events (later events replace earlier ones with the same key). */
export function authStateFromEvents(events: Iterable<Pdu>): Map<string, Pdu> {
  const map = new Map<string, Pdu>();
  for (const e of events) if (typeof e.state_key === "string") map.set(stateMapKey(e.type, e.state_key), e);
  return map;
}

/**
 * An M_FORBIDDEN raised by the auth rules; `rule` is a stable id such as "member.join.banned". Its status is
 * 403, or 400 for the few rules on the shape of content that Synapse answers a local client with 400 (with
 * M_BAD_JSON where Synapse answers that, e.g. MSC3757's malformed owned state keys).
 */
export class AuthError extends MatrixError {
  readonly rule: string;
  constructor(rule: string, reason: string, httpStatus = 403, errcode: ErrCode = "M_FORBIDDEN") {
    super(errcode, `Auth rule ${rule}: ${reason}`, httpStatus);
    this.rule = rule;
  }
}

export function forbid(rule: string, reason: string, httpStatus?: number, errcode?: ErrCode): never {
  throw new AuthError(rule, reason, httpStatus, errcode);
}

export interface AuthOptions {
  /**
   * Is `event` validly signed by `serverName`? Needed for `join_authorised_via_users_server` (v8+).
   * Without it such events are refused. The pipeline checks signatures; for a local event not yet
   * signed it answers true for its own server name.
   */
  verifyServerSignature?: (event: Pdu, serverName: string) => boolean;
  /**
   * Does any signature in `signed` (the `third_party_invite.signed` object: mxid, token, signatures)
   * verify with `publicKey` (unpadded base64 ed25519 key from the `m.room.third_party_invite` event)?
   * Without it third-party invites are refused.
   */
  verifyThirdPartyInviteSignature?: (signed: Record<string, unknown>, publicKey: string) => boolean;
  /**
   * The room's create event, used when `authState` has none. In v12 the create event is never among an
   * event's auth_events (the room id names it), so a check against the auth events needs it from here.
   */
  createEvent?: Pdu;
  /** The create event's id when the caller already knows it (saves hashing it again). */
  createEventId?: string;
}

export type Membership = "join" | "invite" | "leave" | "ban" | "knock";

/** Read access to an AuthState for one event under one room version. */
export class AuthContext {
  constructor(
    readonly event: Pdu,
    readonly state: AuthState,
    readonly version: RoomVersion,
    readonly options: AuthOptions,
  ) {}

  get(type: string, stateKey = ""): Pdu | undefined {
    return this.state.get(stateMapKey(type, stateKey));
  }

  get create(): Pdu | undefined {
    return this.get("m.room.create", "") ?? this.options.createEvent;
  }

  get powerLevelsEvent(): Pdu | undefined {
    return this.get("m.room.power_levels", "");
  }

  /** The user's current membership, or undefined when they have no member event. */
  membershipOf(userId: string): string | undefined {
    const m = this.get("m.room.member", userId)?.content["membership"];
    return typeof m === "string" ? m : undefined;
  }

  /** The current join rule, or undefined when there is no (valid) `m.room.join_rules` event. */
  joinRule(): string | undefined {
    const r = this.get("m.room.join_rules", "")?.content["join_rule"];
    return typeof r === "string" ? r : undefined;
  }
}

// --- identifiers -------------------------------------------------------------------------------------

const SERVER_NAME =
  /^(?:\[[0-9A-Fa-f:.]{2,45}\]|[0-9]{1,3}(?:\.[0-9]{1,3}){3}|[0-9A-Za-z-]{1,63}(?:\.[0-9A-Za-z-]{1,63})*\.?)(?::[0-9]{1,5})?$/;

/** Server name grammar (Appendices "Server Name"): DNS name, IPv4 or [IPv6], optional port. */
export function isValidServerName(s: string): boolean {
  return s.length > 0 && s.length <= 255 && SERVER_NAME.test(s);
}

/**
 * User id as events may carry it: `@localpart:server_name` where the localpart follows the historical
 * grammar (any code points except `:` and NUL, as servers MUST accept), at most 255 bytes.
 */
export function isValidUserId(s: unknown): s is string {
  if (typeof s !== "string" || !s.startsWith("@")) return false;
  if (Buffer.byteLength(s, "utf8") > 255) return false;
  const colon = s.indexOf(":");
  if (colon < 0) return false;
  const localpart = s.slice(1, colon);
  if (localpart.includes("\u0000")) return false;
  return isValidServerName(s.slice(colon + 1));
}

/** The server name part of a user id (or any `sigil localpart:domain` id). */
export function serverOf(id: string): string {
  const i = id.indexOf(":");
  return i < 0 ? "" : id.slice(i + 1);
}

export { isPlainObject };
