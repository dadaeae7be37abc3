// The sync token: the tuple of every stream's position, as one opaque string
// `s<events>_<account_data>_<receipts>_<typing>_<presence>_<to_device>_<device_lists>_<push_rules>`.
// It starts like the room-events tokens of /messages (`s<pos>`), which read only the first number: a
// sync `prev_batch`/`next_batch` is accepted by /messages, and a bare `s<pos>` is accepted here (the
// other streams then start from 0). ARCHITECTURE "Streams, tokens and live updates".
import { MatrixError } from "../errors.js";
import { tokenPosition } from "../numbers.js";
/** Every stream, in token order. A new stream is appended at the end (older tokens then read it as 0). */
export const STREAMS = ["events", "account_data", "receipts", "typing", "presence", "to_device", "device_lists", "push_rules"];
export function zeroToken() {
    const t = {};
    for (const s of STREAMS)
        t[s] = 0;
    return t;
}
export function formatSyncToken(t) {
    return "s" + STREAMS.map((s) => t[s]).join("_");
}
export function parseSyncToken(text, name = "since") {
    const m = /^s(\d+(?:_\d+)*)$/.exec(text);
    if (!m)
        throw new MatrixError("M_INVALID_PARAM", `Invalid ${name} token`, 400);
    const parts = m[1].split("_");
    const t = zeroToken();
    for (let i = 0; i < STREAMS.length && i < parts.length; i++) {
        const n = tokenPosition(parts[i]);
        if (n === undefined)
            throw new MatrixError("M_INVALID_PARAM", `Invalid ${name} token`, 400);
        t[STREAMS[i]] = n;
    }
    return t;
}
