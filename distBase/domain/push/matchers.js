// The matching primitives of push rule conditions: dot-separated property paths with `\.` and `\\`
// escapes (spec appendix "Dot-separated property paths"), glob patterns (`*`, `?`; appendix "Glob-style
// matching") matched case-insensitively against a whole value or, for content.body, a substring bounded
// by word boundaries (non-[A-Za-z0-9_] characters or the ends), and literal display names likewise.
// Compiled regexes are kept in a small bounded cache.
/** Splits a dotted path: `content.m\.relates_to.rel_type` → ["content", "m.relates_to", "rel_type"]. */
export function splitDottedPath(path) {
    const out = [];
    let cur = "";
    for (let i = 0; i < path.length; i++) {
        const ch = path[i];
        if (ch === "\\" && (path[i + 1] === "." || path[i + 1] === "\\")) {
            cur += path[i + 1];
            i++;
        }
        else if (ch === ".") {
            out.push(cur);
            cur = "";
        }
        else
            cur += ch;
    }
    out.push(cur);
    return out;
}
/** The value at a dotted path of a JSON object, or `undefined` with found=false when absent. */
export function valueAtPath(root, segments) {
    let node = root;
    for (const seg of segments) {
        if (node === null || typeof node !== "object" || Array.isArray(node) || !Object.prototype.hasOwnProperty.call(node, seg))
            return { found: false, value: undefined };
        node = node[seg];
    }
    return { found: true, value: node };
}
const escapeRegex = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
/** A glob as a regex body; runs of wildcards collapse (`?**?` → `.{2,}`), so no pattern backtracks badly. */
function globBody(glob) {
    let out = "";
    for (const m of glob.matchAll(/([^?*]*)([?*]*)/g)) {
        if (m[1])
            out += escapeRegex(m[1]);
        const wild = m[2] ?? "";
        if (wild === "")
            continue;
        const q = [...wild].filter((c) => c === "?").length;
        out += wild.includes("*") ? `[\\s\\S]{${q},}` : `[\\s\\S]{${q}}`;
    }
    return out;
}
const WORD_START = "(?:^|\\b|\\W)";
const WORD_END = "(?:\\b|\\W|$)";
const cache = new Map();
const CACHE_MAX = 5000;
function cached(key, make) {
    let re = cache.get(key);
    if (!re) {
        if (cache.size >= CACHE_MAX)
            cache.delete(cache.keys().next().value);
        cache.set(key, (re = make()));
    }
    return re;
}
const hasWildcard = (glob) => glob.includes("*") || glob.includes("?");
/** Does `glob` match the whole of `value` (case-insensitively)? */
export function globMatchesWhole(glob, value) {
    if (!hasWildcard(glob))
        return value.toLowerCase() === glob.toLowerCase();
    return cached(`w\u0000${glob}`, () => new RegExp(`^${globBody(glob)}$`, "i")).test(value);
}
/** Does `glob` match a substring of `text` starting and ending at word boundaries (case-insensitively)? */
export function globMatchesWords(glob, text, textLower = text.toLowerCase()) {
    if (!hasWildcard(glob) && !textLower.includes(glob.toLowerCase()))
        return false;
    return cached(`b\u0000${glob}`, () => new RegExp(`${WORD_START}${globBody(glob)}${WORD_END}`, "i")).test(text);
}
/** Does `text` contain `literal` (a display name: no wildcards) as a whole word sequence? */
export function containsWords(literal, text, textLower = text.toLowerCase()) {
    if (literal === "" || !textLower.includes(literal.toLowerCase()))
        return false;
    return cached(`l\u0000${literal}`, () => new RegExp(`${WORD_START}${escapeRegex(literal)}${WORD_END}`, "i")).test(text);
}
