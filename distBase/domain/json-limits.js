// The one bound on JSON nesting, and the parsers and serializers that respect it. Every JSON document
// from outside (REST and GraphQL bodies, filters in query strings, soon federation bodies) is parsed with
// `parseJsonText`; every value Weft serializes goes through `stringifyJson` / `cloneJson`, which never
// overflow the stack whatever the depth of something stored before the bound existed.
// Spec: Client-Server API "Standard error response" (M_NOT_JSON, M_BAD_JSON); "Size limits" (65,536-byte PDUs).
import { MatrixError } from "./errors.js";
/**
 * The deepest nesting of objects and arrays accepted in a JSON document from a client (a request body is
 * the event content it sends, so this is also the bound on event content). Legitimate Matrix JSON nests a
 * handful of levels (an encrypted to-device message: 5, a power-levels event: 3); 100 leaves room for any
 * client schema while keeping every document Weft emits — content 100 deep plus the PDU and a federation
 * transaction around it (3 levels) — within serde_json's default limit of 128 levels, so homeservers built
 * on it (Conduit, Tuwunel) can read every event Weft creates. A 65,536-byte PDU could otherwise nest about
 * 32,000 levels, far past what recursive JSON code survives.
 */
export const MAX_JSON_DEPTH = 100;
/**
 * Levels a server-server body adds around content a client could send (transaction → pdus → PDU →
 * content; EDU → content → messages → user → device): a federation body is bounded by
 * MAX_JSON_DEPTH + FEDERATION_ENVELOPE_DEPTH, so every document a Weft server sends is accepted by another.
 */
export const FEDERATION_ENVELOPE_DEPTH = 8;
/** Whether `value` nests objects and arrays more than `limit` levels (`{}` is one level). Iterative. */
export function exceedsJsonDepth(value, limit = MAX_JSON_DEPTH) {
    if (typeof value !== "object" || value === null)
        return false;
    // Depth-first over an explicit stack of (container, depth): no recursion whatever the nesting.
    const stack = [[value, 1]];
    while (stack.length > 0) {
        const [node, depth] = stack.pop();
        if (depth > limit)
            return true;
        const children = Array.isArray(node) ? node : Object.values(node);
        for (const c of children)
            if (typeof c === "object" && c !== null)
                stack.push([c, depth + 1]);
    }
    return false;
}
/** Throws M_BAD_JSON when `value` nests deeper than `limit`. */
export function checkJsonDepth(value, what = "JSON", limit = MAX_JSON_DEPTH) {
    if (exceedsJsonDepth(value, limit))
        throw new MatrixError("M_BAD_JSON", `${what} nests objects and arrays more than ${limit} levels deep`, 400);
}
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/**
 * Whether JSON text nests deeper than `limit`, read from the text without parsing it (so a hostile
 * document is refused before any structure is built). Text with at most `limit` opening brackets cannot
 * be too deep, which settles the usual small body with two indexOf scans.
 */
export function jsonTextExceedsDepth(text, limit = MAX_JSON_DEPTH) {
    let opens = 0;
    for (const ch of ["{", "["]) {
        for (let i = text.indexOf(ch); i >= 0 && opens <= limit; i = text.indexOf(ch, i + 1))
            opens++;
    }
    if (opens <= limit)
        return false;
    let depth = 0;
    let inString = false;
    for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (inString) {
            if (c === BACKSLASH)
                i++;
            else if (c === QUOTE)
                inString = false;
        }
        else if (c === QUOTE)
            inString = true;
        else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
            if (++depth > limit)
                return true;
        }
        else if (c === CLOSE_BRACE || c === CLOSE_BRACKET)
            depth--;
    }
    return false;
}
/**
 * Parses a JSON document from outside: M_NOT_JSON when it is not JSON, M_BAD_JSON when it nests deeper
 * than `maxDepth` (checked on the text first).
 */
export function parseJsonText(text, opts = {}) {
    const limit = opts.maxDepth ?? MAX_JSON_DEPTH;
    const what = opts.what ?? "Content";
    if (jsonTextExceedsDepth(text, limit))
        throw new MatrixError("M_BAD_JSON", `${what} nests objects and arrays more than ${limit} levels deep`, 400);
    try {
        return JSON.parse(text);
    }
    catch {
        throw new MatrixError("M_NOT_JSON", `${what} is not valid JSON`, 400);
    }
}
// ---------------------------------------------------------------------------------------------------
// Serializers that never overflow: the native, recursive ones first (fast, and safe far beyond
// MAX_JSON_DEPTH), an iterative walk when one runs out of stack on something deeper (a value stored
// before the bound existed, or a remote server's).
function isStackOverflow(err) {
    return err instanceof RangeError && /call stack/i.test(err.message);
}
/** JSON.stringify for JSON data (toJSON honoured, undefined and functions dropped), at any depth. */
export function stringifyJson(value) {
    try {
        return JSON.stringify(value);
    }
    catch (err) {
        if (!isStackOverflow(err))
            throw err;
        return stringifyIteratively(value);
    }
}
/** The text of a scalar, undefined for what JSON.stringify leaves out (undefined, functions, symbols). */
function scalarText(v) {
    if (v === null)
        return "null";
    switch (typeof v) {
        case "string":
            return JSON.stringify(v);
        case "number":
            return Number.isFinite(v) ? String(v) : "null";
        case "boolean":
            return v ? "true" : "false";
        case "bigint":
            throw new TypeError("Do not know how to serialize a BigInt");
        default:
            return undefined;
    }
}
function stringifyIteratively(root) {
    /** A frame for a container, else the scalar's text (undefined: left out). */
    const open = (value) => {
        const v = value !== null && typeof value === "object" && typeof value.toJSON === "function"
            ? value.toJSON()
            : value;
        if (typeof v !== "object" || v === null)
            return scalarText(v);
        if (Array.isArray(v))
            return { items: v, keys: undefined, i: 0, parts: [] };
        const keys = Object.keys(v);
        return { items: keys.map((k) => v[k]), keys, i: 0, parts: [] };
    };
    /** Adds a finished member to its container (an object leaves out members with no text). */
    const add = (f, text) => {
        if (f.keys === undefined)
            f.parts.push(text ?? "null");
        else if (text !== undefined)
            f.parts.push(JSON.stringify(f.keys[f.i - 1]) + ":" + text);
    };
    const first = open(root);
    if (typeof first !== "object")
        return first;
    const stack = [first];
    for (;;) {
        const top = stack[stack.length - 1];
        if (top.i < top.items.length) {
            const next = open(top.items[top.i++]);
            if (typeof next === "object")
                stack.push(next);
            else
                add(top, next);
            continue;
        }
        stack.pop();
        const text = top.keys === undefined ? "[" + top.parts.join(",") + "]" : "{" + top.parts.join(",") + "}";
        if (stack.length === 0)
            return text;
        add(stack[stack.length - 1], text);
    }
}
/** A deep copy of JSON data, at any depth. */
export function cloneJson(value) {
    try {
        return structuredClone(value);
    }
    catch (err) {
        if (!isStackOverflow(err))
            throw err;
        return cloneIteratively(value);
    }
}
function cloneIteratively(root) {
    if (typeof root !== "object" || root === null)
        return root;
    const copyOf = (v) => (Array.isArray(v) ? [] : {});
    const out = copyOf(root);
    const stack = [[root, out]];
    while (stack.length > 0) {
        const [src, dst] = stack.pop();
        for (const [k, v] of Object.entries(src)) {
            let copied;
            if (typeof v === "object" && v !== null) {
                const c = copyOf(v);
                stack.push([v, c]);
                copied = c;
            }
            else
                copied = v;
            if (Array.isArray(dst))
                dst.push(copied);
            else
                dst[k] = copied;
        }
    }
    return out;
}
