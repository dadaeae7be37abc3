// Persisting the events this server creates (ARCHITECTURE "Events: one way in"): drafts are planned by
// the local planner (built in order against the room as it evolves, each authorized against its auth
// events, its state after computed) and written by the one commit(), all or nothing. Remote events take
// the same commit through the remote planner (receive.ts). The steps live in ./pipeline/.
// Spec: Client-Server API "Room events"; Server-Server API "Checks performed on receipt of a PDU".
import type { Services } from "../services.ts";
import type { StoredEvent } from "../store/events.ts";
import type { SqlExecutor } from "../../storage/sql.ts";
import type { BuiltEvent, EventDraft } from "./build-event.ts";
import type { RoomSnapshot } from "./room-cache.ts";
import { LocalPlanner } from "./pipeline/plan-local.ts";
import { otherServerInRoom } from "../federation/room-servers.ts";
import { commit, type OpenCommit } from "./pipeline/commit.ts";
import type { PlannedTxn } from "./pipeline/plan.ts";

export { authorizeEvent } from "./pipeline/checks.ts";

export interface PersistOptions {
  /** Records the client's transaction id (for the last event of the batch) in the same transaction. */
  txn?: PlannedTxn;
  /** Extra writes that must commit with the events (e.g. the rooms row of a new room). */
  alsoWrite?: (tx: SqlExecutor) => Promise<void>;
  /**
   * Called once the client's transaction id is known to be fresh, just before the event is built (a
   * rate limit: a retransmission is answered from the record without counting). Throwing refuses it.
   */
  admit?: () => void;
}

/**
 * Builds, authorizes and persists `drafts` in order on top of `room` (the caller holds the room's lane),
 * all or nothing. `room` may be a room being created: then its first item is the (already built) create event.
 */
export async function persistDrafts(
  s: Services,
  room: RoomSnapshot,
  drafts: (EventDraft | BuiltEvent)[],
  opts: PersistOptions = {},
): Promise<StoredEvent[]> {
  const planner = new LocalPlanner(s, room);
  for (const [i, d] of drafts.entries()) await planner.add(d, i === drafts.length - 1 ? opts.txn : undefined);
  return commit(s, planner.plan(opts.alsoWrite));
}

/**
 * Group commit: builds and authorizes each item on its own (a refused item fails alone), then commits
 * every accepted one in a single transaction (`open`: one the caller opened, with positions allocated).
 * Returns, per item, its stored event or its error.
 */
export async function persistEach(
  s: Services,
  room: RoomSnapshot,
  items: { draft: EventDraft; txn?: PlannedTxn }[],
  open?: OpenCommit,
): Promise<(StoredEvent | Error)[]> {
  // In a room no other server is in, the events are signed when they first leave the server (own-signature.ts).
  const planner = new LocalPlanner(s, room, { signLater: !(await otherServerInRoom(s, room.roomId, room.state)) });
  const results: (number | Error)[] = [];
  for (const item of items) {
    try {
      await planner.add(item.draft, item.txn);
      results.push(planner.events.length - 1);
    } catch (err) {
      results.push(err as Error);
    }
  }
  if (planner.events.length === 0) return results as Error[];
  const stored = await commit(s, planner.plan(), open);
  return results.map((r) => (typeof r === "number" ? stored[r]! : r));
}
