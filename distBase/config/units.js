// Parses Synapse-style durations ("5m", "1h", "7d", "500ms", or milliseconds as a number) and sizes
// ("50M", "10K", or bytes as a number), as homeserver.yaml writes them.
const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w|y)?$/;
const DURATION_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000, y: 31_536_000_000 };
/** Milliseconds, or undefined if the text is not a duration. A bare number is milliseconds (Synapse). */
export function parseDuration(v) {
    if (typeof v === "number" && Number.isFinite(v) && v >= 0)
        return v;
    if (typeof v !== "string")
        return undefined;
    const m = DURATION.exec(v.trim());
    if (!m)
        return undefined;
    return Math.round(Number(m[1]) * DURATION_MS[m[2] ?? "ms"]);
}
const SIZE = /^(\d+(?:\.\d+)?)\s*([KMGT]?)B?$/i;
const SIZE_BYTES = { "": 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 };
/** Bytes (or a count: Synapse writes cache sizes the same way), or undefined if not a size. */
export function parseSize(v) {
    if (typeof v === "number" && Number.isFinite(v) && v >= 0)
        return v;
    if (typeof v !== "string")
        return undefined;
    const m = SIZE.exec(v.trim());
    if (!m)
        return undefined;
    return Math.round(Number(m[1]) * SIZE_BYTES[m[2].toUpperCase()]);
}
