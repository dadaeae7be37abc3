// Shared pieces of the authorization rules: the auth state map and its key, the error raised when a rule
// fails (named by a stable rule id), the caller-supplied signature callbacks, and state readers.
// Spec: Server-Server API "Authorisation rules" / "Checks performed on receipt of a PDU"; Room Versions.
import { MatrixError } from "../errors.js";
import { isPlainObject } from "../events/types.js";
/** The key of `(type, state_key)` in an `AuthState` map. */
export function stateMapKey(type, stateKey) {
    return `${type}\u0000${stateKey}`;
}
/** Splits a key made by `stateMapKey`. */
export function parseStateMapKey(key) {
    const i = key.indexOf("\u0000");
    return [key.slice(0, i), key.slice(i + 1)];
}
/** An AuthState from a list of state events (later events replace earlier ones with the same key). */
export function authStateFromEvents(events) {
    const map = new Map();
    for (const e of events)
        if (typeof e.state_key === "string")
            map.set(stateMapKey(e.type, e.state_key), e);
    return map;
}
/** An M_FORBIDDEN raised by the auth rules; `rule` is a stable id such as "member.join.banned". */
export class AuthError extends MatrixError {
    rule;
    constructor(rule, reason) {
        super("M_FORBIDDEN", `Auth rule ${rule}: ${reason}`);
        this.rule = rule;
    }
}
export function forbid(rule, reason) {
    throw new AuthError(rule, reason);
}
/** Read access to an AuthState for one event under one room version. */
export class AuthContext {
    event;
    state;
    version;
    options;
    constructor(event, state, version, options) {
        this.event = event;
        this.state = state;
        this.version = version;
        this.options = options;
    }
    get(type, stateKey = "") {
        return this.state.get(stateMapKey(type, stateKey));
    }
    get create() {
        return this.get("m.room.create", "") ?? this.options.createEvent;
    }
    get powerLevelsEvent() {
        return this.get("m.room.power_levels", "");
    }
    /** The user's current membership, or undefined when they have no member event. */
    membershipOf(userId) {
        const m = this.get("m.room.member", userId)?.content["membership"];
        return typeof m === "string" ? m : undefined;
    }
    /** The current join rule, or undefined when there is no (valid) `m.room.join_rules` event. */
    joinRule() {
        const r = this.get("m.room.join_rules", "")?.content["join_rule"];
        return typeof r === "string" ? r : undefined;
    }
}
// --- identifiers -------------------------------------------------------------------------------------
const SERVER_NAME = /^(?:\[[0-9A-Fa-f:.]{2,45}\]|[0-9]{1,3}(?:\.[0-9]{1,3}){3}|[0-9A-Za-z-]{1,63}(?:\.[0-9A-Za-z-]{1,63})*\.?)(?::[0-9]{1,5})?$/;
/** Server name grammar (Appendices "Server Name"): DNS name, IPv4 or [IPv6], optional port. */
export function isValidServerName(s) {
    return s.length > 0 && s.length <= 255 && SERVER_NAME.test(s);
}
/**
 * User id as events may carry it: `@localpart:server_name` where the localpart follows the historical
 * grammar (any code points except `:` and NUL, as servers MUST accept), at most 255 bytes.
 */
export function isValidUserId(s) {
    if (typeof s !== "string" || !s.startsWith("@"))
        return false;
    if (Buffer.byteLength(s, "utf8") > 255)
        return false;
    const colon = s.indexOf(":");
    if (colon < 0)
        return false;
    const localpart = s.slice(1, colon);
    if (localpart.includes("\u0000"))
        return false;
    return isValidServerName(s.slice(colon + 1));
}
/** The server name part of a user id (or any `sigil localpart:domain` id). */
export function serverOf(id) {
    const i = id.indexOf(":");
    return i < 0 ? "" : id.slice(i + 1);
}
export { isPlainObject };
