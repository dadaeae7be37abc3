// The streams whose positions several processes share, and where each one's position lives on this
// process: a StreamIdTracker (persisted-up-to, multi-writer: store/ids.ts) or, for receipts and presence,
// the highest position written (WrittenMax). Each maps to the `stream_writers` entry that names its
// writers (sticky events are written with the room events). Typing is in memory per process: it is not
// replicated (its writer, `stream_writers.typing`, answers typing).
import type { Services } from "../services.ts";
import type { StreamIdTracker } from "../store/ids.ts";
import type { WriterStream } from "../../config/workers.ts";

export type ReplicatedStream = "events" | "account_data" | "receipts" | "presence" | "to_device" | "device_lists" | "push_rules" | "sticky_events";

export interface StreamEntry {
  name: ReplicatedStream;
  /** Whose positions bound this stream's (`stream_writers`). */
  writers: WriterStream;
  /** The multi-writer tracker, for streams read up to their persisted position. */
  tracker?: (s: Services) => StreamIdTracker;
  /** The highest stored position (streams kept as a written maximum: the catch-up reads it). */
  maxSql?: string;
}

export const REPLICATED_STREAMS: readonly StreamEntry[] = [
  { name: "events", writers: "events", tracker: (s) => s.rooms.events.streamIds },
  { name: "account_data", writers: "account_data", tracker: (s) => s.accountData.streamIds },
  { name: "push_rules", writers: "push_rules", tracker: (s) => s.push.rules.store.streamIds },
  { name: "to_device", writers: "to_device", tracker: (s) => s.e2ee.toDeviceIds },
  { name: "device_lists", writers: "device_lists", tracker: (s) => s.e2ee.deviceListIds },
  { name: "sticky_events", writers: "events", tracker: (s) => s.sticky.streamIds },
  { name: "receipts", writers: "receipts", maxSql: "SELECT MAX(stream_id) AS m FROM receipts" },
  { name: "presence", writers: "presence", maxSql: "SELECT MAX(stream_id) AS m FROM presence" },
];

export function streamEntry(name: string): StreamEntry | undefined {
  return REPLICATED_STREAMS.find((e) => e.name === name);
}
