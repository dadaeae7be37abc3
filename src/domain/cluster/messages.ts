// The replication messages Weft processes exchange over Redis pub/sub (one channel per server): plain
// JSON, each naming its sender so a process ignores its own. They only wake and invalidate: PostgreSQL
// holds the truth, and a process that missed messages catches up from it (catch-up.ts).
// Spec: none (process architecture; ARCHITECTURE.md "Growing past one process").
import type { CommitNotice } from "../consumers/commit-feed.ts";
import type { StreamNotice } from "../rooms/notifier.ts";
import type { Invalidation } from "../cache/invalidation.ts";
import type { ReplicatedStream } from "./streams.ts";

export type ReplicationMessage =
  /** Events were committed by `from` (what its CommitFeed published). */
  | { t: "commit"; from: string; notice: CommitNotice }
  /** `from`'s own persisted-up-to positions moved (the streams it writes). */
  | { t: "positions"; from: string; positions: Partial<Record<ReplicatedStream, number>> }
  /** A stream other than room events moved on `from` (what its Notifier released). */
  | { t: "notify"; from: string; notice: StreamNotice }
  /** A cache invalidation published on `from`'s InvalidationBus. */
  | { t: "invalidate"; from: string; m: Invalidation };

/** The channel of one server's processes (Redis may be shared by several servers). */
export function replicationChannel(serverName: string): string {
  return `${serverName}/weft/replication`;
}

/** Parses a message off the wire; undefined for anything that is not one. */
export function parseMessage(text: string): ReplicationMessage | undefined {
  try {
    const m = JSON.parse(text) as ReplicationMessage;
    if (typeof m !== "object" || m === null || typeof m.from !== "string") return undefined;
    if (m.t === "commit" || m.t === "positions" || m.t === "notify" || m.t === "invalidate") return m;
  } catch {
    // not JSON: ignored
  }
  return undefined;
}
