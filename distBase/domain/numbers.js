// Integers from outside — query parameters, tokens, JSON fields — checked against a range before they
// reach storage or a timer: by default Matrix's integer range (canonical JSON, ±(2^53 − 1)), which
// PostgreSQL's bigint holds and JavaScript represents exactly. Text like "99999999999999999999999" is
// refused here, not by the database. Spec: Appendices "Canonical JSON" (integer range).
import { MatrixError } from "./errors.js";
export const MAX_SAFE_INT = Number.MAX_SAFE_INTEGER;
/** The largest value of a 32-bit integer column (PostgreSQL `integer`). */
export const MAX_INT32 = 2 ** 31 - 1;
/** The longest delay a Node timer takes (about 24.8 days); longer ones fire at once. */
export const MAX_TIMER_MS = MAX_INT32;
const DECIMAL = /^-?\d{1,16}$/;
/** Parses a decimal integer given as text (a query parameter): M_INVALID_PARAM unless it is one within range. */
export function parseIntText(raw, name, range = {}) {
    const n = DECIMAL.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(n))
        throw new MatrixError("M_INVALID_PARAM", `${name} must be an integer`, 400);
    return checkRange(n, name, range, "M_INVALID_PARAM");
}
/** Checks a JSON value is an integer within range: M_BAD_JSON unless it is. */
export function checkIntValue(value, name, range = {}) {
    if (typeof value !== "number" || !Number.isSafeInteger(value))
        throw new MatrixError("M_BAD_JSON", `${name} must be an integer`, 400);
    return checkRange(value, name, range, "M_BAD_JSON");
}
function checkRange(n, name, range, errcode) {
    const min = range.min ?? -MAX_SAFE_INT;
    const max = range.max ?? MAX_SAFE_INT;
    if (n < min || n > max)
        throw new MatrixError(errcode === "M_BAD_JSON" ? "M_BAD_JSON" : "M_INVALID_PARAM", `${name} must be between ${min} and ${max}`, 400);
    return n;
}
/** A stream position written in a token: a non-negative safe integer, else undefined. */
export function tokenPosition(digits) {
    const n = /^\d{1,16}$/.test(digits) ? Number(digits) : NaN;
    return Number.isSafeInteger(n) ? n : undefined;
}
