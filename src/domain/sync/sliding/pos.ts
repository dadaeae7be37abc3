// The `pos` of simplified sliding sync: `<connection position>/s<8 streams>_<thread subscriptions>[_<sticky events>]`
// — the connection's version (connections.ts), the position of each of the /sync token's first eight
// streams this answer read up to (token.ts), the thread-subscriptions position (MSC4308's extension), and
// the sticky-events stream's (MSC4354) when not 0. As Synapse's `<connection>/<stream token>`; opaque to clients.
import { MatrixError } from "../../errors.ts";
import { formatSyncToken, parseSyncToken, STREAMS, type SyncToken } from "../token.ts";

export interface SlidingPos {
  connection: number;
  token: SyncToken;
  threadSubscriptions: number;
}

/** The streams of the token part, in order; the sticky-events stream follows the thread subscriptions. */
const TOKEN_STREAMS = STREAMS.filter((name) => name !== "sticky_events");

export function formatSlidingPos(p: SlidingPos): string {
  const sticky = p.token.sticky_events ? `_${p.token.sticky_events}` : "";
  return `${p.connection}/${formatSyncToken({ ...p.token, sticky_events: 0 })}_${p.threadSubscriptions}${sticky}`;
}

/** The parts of a pos, or undefined when it is not one. */
export function readSlidingPos(text: string): SlidingPos | undefined {
  const m = /^(0|[1-9][0-9]{0,15})\/(s[0-9_]+)$/.exec(text);
  if (!m) return undefined;
  const parts = m[2]!.slice(1).split("_");
  const n = TOKEN_STREAMS.length;
  if (parts.length !== n + 1 && parts.length !== n + 2) return undefined;
  try {
    const token = parseSyncToken(`s${parts.slice(0, n).join("_")}`, "pos");
    if (parts.length === n + 2) token.sticky_events = parseSyncToken(`s${parts[n + 1]}`, "pos").events;
    return { connection: Number(m[1]), token, threadSubscriptions: parseSyncToken(`s${parts[n]}`, "pos").events };
  } catch {
    return undefined;
  }
}

export function parseSlidingPos(text: string): SlidingPos {
  const p = readSlidingPos(text);
  if (!p) throw new MatrixError("M_INVALID_PARAM", "Invalid pos", 400);
  return p;
}
