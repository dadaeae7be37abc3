// Text Weft stores in database columns: no U+0000. PostgreSQL refuses NUL in text and SQLite accepts it,
// so the rule is applied here, the same for both, before storage: text a client gives for a column
// (identifiers in paths, display names, device names, status messages, reasons ...) is refused with
// M_INVALID_PARAM; text derived from event content (which is JSON, and may carry any string) is left
// out of the column (null) or has NUL replaced by a space for full-text search, as Synapse does; and
// the storage layers refuse any parameter that still carries one (checkStorableParams), so a path this
// module missed answers 400 on both databases rather than 500 on one. Event JSON itself is stored as
// text with NUL escaped (\u0000), whole. Spec: Appendices "Identifier Grammar" (no NUL in ids).
import { MatrixError } from "./errors.js";
export function hasNul(s) {
    return s.includes("\u0000");
}
/** Refuses free text a client gives for a column when it carries NUL: 400 M_INVALID_PARAM. */
export function checkStorableText(value, name) {
    if (hasNul(value))
        throw new MatrixError("M_INVALID_PARAM", `${name} may not contain NUL (U+0000) characters`, 400);
    return value;
}
/** A string from event content for a derived column: null when it is not a string or carries NUL. */
export function indexableText(value) {
    return typeof value === "string" && !hasNul(value) ? value : null;
}
/** Text from event content for the full-text index: NUL read as a space. */
export function searchIndexText(value) {
    return hasNul(value) ? value.replaceAll("\u0000", " ") : value;
}
/**
 * The storage layers' guard (src/storage/sql.ts, the Prisma client): refuses a statement whose
 * parameters carry NUL in a string, nested values included, before it runs.
 */
export function checkStorableParams(params) {
    if (typeof params === "string") {
        if (hasNul(params))
            throw nulParam();
        return;
    }
    if (typeof params !== "object" || params === null || Buffer.isBuffer(params) || params instanceof Uint8Array || params instanceof Date)
        return;
    const stack = [params];
    while (stack.length > 0) {
        const node = stack.pop();
        for (const v of Array.isArray(node) ? node : Object.values(node)) {
            if (typeof v === "string") {
                if (hasNul(v))
                    throw nulParam();
            }
            else if (typeof v === "object" && v !== null && !Buffer.isBuffer(v) && !(v instanceof Uint8Array) && !(v instanceof Date))
                stack.push(v);
        }
    }
}
/**
 * The longest search term accepted (user directory, /search, the room directory's filter): far longer
 * than any name or message a person looks for, short enough that no database's pattern or full-text
 * query limit is reached (SQLite refuses LIKE patterns over 50,000 bytes).
 */
export const MAX_SEARCH_TERM_LENGTH = 1000;
/** Refuses a search term over MAX_SEARCH_TERM_LENGTH characters (400 M_INVALID_PARAM). */
export function checkSearchTerm(term, name) {
    if (term.length > MAX_SEARCH_TERM_LENGTH)
        throw new MatrixError("M_INVALID_PARAM", `${name} is longer than ${MAX_SEARCH_TERM_LENGTH} characters`, 400);
    return term;
}
const nulParam = () => new MatrixError("M_INVALID_PARAM", "Text may not contain NUL (U+0000) characters", 400);
