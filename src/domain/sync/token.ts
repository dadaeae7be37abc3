// The sync token: the tuple of every stream's position, as one opaque string
// `s<events>_<account_data>_<receipts>_<typing>_<presence>_<to_device>_<device_lists>_<push_rules>[_<sticky_events>]`.
// Streams after the first eight are optional (a feature that may be off: MSC4354's sticky events): left out
// while they and those after them are at 0, so a server without them hands out the tokens it always did.
// It starts like the room-events tokens of /messages (`s<pos>`), which read only the first number: a
// sync `prev_batch`/`next_batch` is accepted by /messages, and a bare `s<pos>` is accepted here (the
// other streams then start from 0). ARCHITECTURE "Streams, tokens and live updates".
import { MatrixError } from "../errors.ts";
import type { StreamName } from "../rooms/notifier.ts";
import { tokenPosition } from "../numbers.ts";

/** Every stream, in token order. A new stream is appended at the end (older tokens then read it as 0). */
export const STREAMS: readonly StreamName[] = ["events", "account_data", "receipts", "typing", "presence", "to_device", "device_lists", "push_rules", "sticky_events"];

/** How many streams every token writes; the later ones only when not 0. */
const ALWAYS_WRITTEN = 8;

export type SyncToken = Record<StreamName, number>;

export function zeroToken(): SyncToken {
  const t = {} as SyncToken;
  for (const s of STREAMS) t[s] = 0;
  return t;
}

export function formatSyncToken(t: SyncToken): string {
  let n = STREAMS.length;
  while (n > ALWAYS_WRITTEN && t[STREAMS[n - 1]!] === 0) n--;
  return "s" + STREAMS.slice(0, n).map((s) => t[s]).join("_");
}

export function parseSyncToken(text: string, name = "since"): SyncToken {
  const m = /^s(\d+(?:_\d+)*)$/.exec(text);
  if (!m) throw new MatrixError("M_INVALID_PARAM", `Invalid ${name} token`, 400);
  const parts = m[1]!.split("_");
  const t = zeroToken();
  for (let i = 0; i < STREAMS.length && i < parts.length; i++) {
    const n = tokenPosition(parts[i]!);
    if (n === undefined) throw new MatrixError("M_INVALID_PARAM", `Invalid ${name} token`, 400);
    t[STREAMS[i]!] = n;
  }
  return t;
}
