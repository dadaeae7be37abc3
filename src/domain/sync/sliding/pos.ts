// The `pos` of simplified sliding sync: `<connection position>/<sync token>_<thread subscriptions>` —
// the connection's version (connections.ts), the /sync token of every stream this answer read up to
// (token.ts), and the thread-subscriptions position (MSC4308's extension). As Synapse's
// `<connection>/<stream token>`; opaque to clients.
import { MatrixError } from "../../errors.ts";
import { formatSyncToken, parseSyncToken, STREAMS, type SyncToken } from "../token.ts";

export interface SlidingPos {
  connection: number;
  token: SyncToken;
  threadSubscriptions: number;
}

export function formatSlidingPos(p: SlidingPos): string {
  return `${p.connection}/${formatSyncToken(p.token)}_${p.threadSubscriptions}`;
}

/** The parts of a pos, or undefined when it is not one. */
export function readSlidingPos(text: string): SlidingPos | undefined {
  const m = /^(0|[1-9][0-9]{0,15})\/(s[0-9_]+)$/.exec(text);
  if (!m) return undefined;
  const parts = m[2]!.slice(1).split("_");
  if (parts.length !== STREAMS.length + 1) return undefined;
  try {
    return { connection: Number(m[1]), token: parseSyncToken(m[2]!, "pos"), threadSubscriptions: parseSyncToken(`s${parts[STREAMS.length]}`, "pos").events };
  } catch {
    return undefined;
  }
}

export function parseSlidingPos(text: string): SlidingPos {
  const p = readSlidingPos(text);
  if (!p) throw new MatrixError("M_INVALID_PARAM", "Invalid pos", 400);
  return p;
}
