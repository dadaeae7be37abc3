// Identifier grammar: server names, user ids, room ids (with and without a server part), room aliases,
// event ids, and the random strings the server mints for ids and devices.
// Spec: Appendices, "Identifier Grammar" (Server Name, User Identifiers, Room IDs, Room Aliases, Event IDs).
import { randomBytes } from "node:crypto";
import { isIPv6 } from "node:net";
import { MatrixError } from "./errors.js";
/** User ids, room ids, room aliases and event ids are at most 255 bytes of UTF-8, sigil and domain included. */
export const MAX_ID_BYTES = 255;
const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPERCASE = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DNS_NAME = /^[A-Za-z0-9.-]{1,255}$/;
const DOTTED_QUAD = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const IPV6_CHARS = /^[0-9A-Fa-f:.]{2,45}$/;
const PORT = /^\d{1,5}$/;
/** The user id localpart grammar (spec v1.8+), required of every new user. */
const LOCALPART = /^[a-z0-9._=\-/+]+$/;
/** Lone UTF-16 surrogates: text that is not valid Unicode, so has no UTF-8 form. */
const LONE_SURROGATE = /\p{Cs}/u;
/** Room version 12 room ids: `!` and the URL-safe unpadded base64 of a sha256 (43 characters). */
const ROOM_ID_V12 = /^![A-Za-z0-9_-]{43}$/;
const EVENT_ID_V3 = /^\$[A-Za-z0-9+/]{43}$/;
const EVENT_ID_V4 = /^\$[A-Za-z0-9_-]{43}$/;
export function byteLength(s) {
    return Buffer.byteLength(s, "utf8");
}
// ---------------------------------------------------------------------------------------------------
// Server names
/** Parses a server name into host, optional port and kind, or returns undefined when it is not one. */
export function tryParseServerName(s) {
    if (typeof s !== "string" || s.length === 0)
        return undefined;
    let host;
    let portText;
    if (s.startsWith("[")) {
        const close = s.indexOf("]");
        if (close < 0)
            return undefined;
        host = s.slice(0, close + 1);
        const rest = s.slice(close + 1);
        if (rest !== "") {
            if (!rest.startsWith(":"))
                return undefined;
            portText = rest.slice(1);
        }
    }
    else {
        const colon = s.indexOf(":");
        if (colon >= 0) {
            host = s.slice(0, colon);
            portText = s.slice(colon + 1);
        }
        else {
            host = s;
        }
    }
    let port;
    if (portText !== undefined) {
        if (!PORT.test(portText))
            return undefined;
        port = Number(portText);
        if (port < 1 || port > 65535)
            return undefined;
    }
    let kind;
    if (host.startsWith("[")) {
        const inner = host.slice(1, -1);
        if (!IPV6_CHARS.test(inner) || !isIPv6(inner))
            return undefined;
        kind = "ipv6";
    }
    else {
        const quad = DOTTED_QUAD.exec(host);
        if (quad) {
            if (quad.slice(1).some((octet) => Number(octet) > 255))
                return undefined;
            kind = "ipv4";
        }
        else {
            if (!DNS_NAME.test(host))
                return undefined;
            kind = "dns";
        }
    }
    return port === undefined ? { host, kind } : { host, port, kind };
}
/** Whether `s` is a server name: a DNS name, IPv4 literal or [IPv6] literal, with an optional port 1–65535. */
export function isValidServerName(s) {
    return tryParseServerName(s) !== undefined;
}
/** Parses a server name; throws M_INVALID_PARAM when it is not one. */
export function parseServerName(s) {
    const parsed = tryParseServerName(s);
    if (!parsed)
        throw new MatrixError("M_INVALID_PARAM", `Invalid server name: ${JSON.stringify(s)}`);
    return parsed;
}
// ---------------------------------------------------------------------------------------------------
// Shared shape: sigil, localpart, ':', server name
function splitSigilled(s, sigil) {
    if (typeof s !== "string" || !s.startsWith(sigil))
        return undefined;
    if (byteLength(s) > MAX_ID_BYTES || LONE_SURROGATE.test(s) || s.includes("\u0000"))
        return undefined;
    const colon = s.indexOf(":");
    if (colon < 0)
        return undefined;
    const serverName = s.slice(colon + 1);
    if (!isValidServerName(serverName))
        return undefined;
    return { localpart: s.slice(sigil.length, colon), serverName };
}
// ---------------------------------------------------------------------------------------------------
// User ids
/**
 * Whether a localpart is acceptable under the historical rules every server must still accept: any
 * Unicode except `:` and NUL, the empty string included.
 */
export function isValidHistoricalLocalpart(localpart) {
    return !localpart.includes(":") && !localpart.includes("\u0000") && !LONE_SURROGATE.test(localpart);
}
/** Whether a localpart meets today's grammar (`[a-z0-9._=\-/+]+`), which new registrations must. */
export function isValidLocalpartForRegistration(localpart, serverName) {
    if (typeof localpart !== "string" || !LOCALPART.test(localpart))
        return false;
    return serverName === undefined || byteLength(`@${localpart}:${serverName}`) <= MAX_ID_BYTES;
}
/**
 * Parses `@localpart:server`. By default accepts historical localparts (as servers must for existing
 * users); with `strict` requires today's grammar. Throws M_INVALID_PARAM.
 */
export function parseUserId(s, opts = {}) {
    const parts = splitSigilled(s, "@");
    const ok = parts !== undefined &&
        (opts.strict ? LOCALPART.test(parts.localpart) : isValidHistoricalLocalpart(parts.localpart));
    if (!ok)
        throw new MatrixError("M_INVALID_PARAM", `Invalid user id: ${JSON.stringify(s)}`);
    return parts;
}
/** Whether `s` is a user id (historical localparts accepted unless `strict`). */
export function isValidUserId(s, opts = {}) {
    try {
        parseUserId(s, opts);
        return true;
    }
    catch {
        return false;
    }
}
/** `@localpart:serverName`; throws M_INVALID_PARAM when the result is not a valid user id. */
export function makeUserId(localpart, serverName) {
    if (localpart.includes(":"))
        throw new MatrixError("M_INVALID_PARAM", `Invalid user id localpart: ${JSON.stringify(localpart)}`);
    const id = `@${localpart}:${serverName}`;
    parseUserId(id);
    return id;
}
// ---------------------------------------------------------------------------------------------------
// Room ids, aliases, event ids
/** Whether `s` is a room id in room version 12's form: `!` and 43 URL-safe base64 characters, no server. */
export function isRoomIdV12(s) {
    return typeof s === "string" && ROOM_ID_V12.test(s);
}
/**
 * Parses a room id: `!opaque:server` (room versions 1–11; opaque is any Unicode but `:` and NUL) or
 * the server-less v12 form. Returns undefined when it is neither.
 */
export function tryParseRoomId(s) {
    if (isRoomIdV12(s))
        return { opaque: s.slice(1) };
    const parts = splitSigilled(s, "!");
    if (!parts || parts.localpart === "" || parts.localpart.includes("\u0000"))
        return undefined;
    return { opaque: parts.localpart, serverName: parts.serverName };
}
/** Parses a room id; throws M_INVALID_PARAM when it is not one. */
export function parseRoomId(s) {
    const parsed = tryParseRoomId(s);
    if (!parsed)
        throw new MatrixError("M_INVALID_PARAM", `Invalid room id: ${JSON.stringify(s)}`);
    return parsed;
}
/** Whether `s` is a room id of either form. */
export function isValidRoomId(s) {
    return tryParseRoomId(s) !== undefined;
}
/** Parses `#alias:server` (any Unicode but `:` in the localpart); throws M_INVALID_PARAM. */
export function parseRoomAlias(s) {
    const parts = splitSigilled(s, "#");
    if (!parts || parts.localpart === "")
        throw new MatrixError("M_INVALID_PARAM", `Invalid room alias: ${JSON.stringify(s)}`);
    return parts;
}
/** Whether `s` is a room alias. */
export function isValidRoomAlias(s) {
    try {
        parseRoomAlias(s);
        return true;
    }
    catch {
        return false;
    }
}
/**
 * Whether `s` is an event id. `format` picks a room version family: "v1" `$opaque:server` (versions 1–2),
 * "v3" `$` + 43 standard base64 characters, "v4" `$` + 43 URL-safe base64 characters (versions 4+).
 * Without `format`, any of these (and any other `$opaque` without NUL) within 255 bytes.
 */
export function isValidEventId(s, format) {
    if (typeof s !== "string" || !s.startsWith("$") || s.length < 2)
        return false;
    if (byteLength(s) > MAX_ID_BYTES || LONE_SURROGATE.test(s) || s.includes("\u0000"))
        return false;
    switch (format) {
        case "v3":
            return EVENT_ID_V3.test(s);
        case "v4":
            return EVENT_ID_V4.test(s);
        case "v1": {
            const parts = splitSigilled(s, "$");
            return parts !== undefined && parts.localpart !== "";
        }
        default: {
            const colon = s.indexOf(":");
            if (colon < 0)
                return true;
            return colon > 1 && isValidServerName(s.slice(colon + 1));
        }
    }
}
// ---------------------------------------------------------------------------------------------------
// Random strings
/** A random string of `length` characters drawn uniformly from an ASCII `alphabet` (default A–Z a–z 0–9). */
export function randomString(length, alphabet = ALPHANUMERIC) {
    if (!Number.isInteger(length) || length < 0)
        throw new RangeError("randomString: length must be a non-negative integer");
    const n = alphabet.length;
    if (n < 1 || n > 256)
        throw new RangeError("randomString: the alphabet must have 1 to 256 characters");
    // Rejection sampling: only bytes below the largest multiple of n, so every character is equally likely.
    const limit = 256 - (256 % n);
    let out = "";
    while (out.length < length) {
        const bytes = randomBytes(Math.ceil((length - out.length) * 1.25) + 4);
        for (let i = 0; i < bytes.length && out.length < length; i++) {
            const b = bytes[i];
            if (b < limit)
                out += alphabet[b % n];
        }
    }
    return out;
}
/** A new device id: 10 random uppercase letters, as Synapse makes them. */
export function generateDeviceId() {
    return randomString(10, UPPERCASE);
}
