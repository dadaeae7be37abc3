// The plan both planners hand to commit(): per event, the state before and after it, where its state
// group comes from, the DAG edges to record for it, its marks (outlier, rejected, soft-failed), the redaction it applies
// and the client's transaction id; and the room after the plan (current state, its changes, forward
// extremities, depth). Also the one step of planning that decides which redactions take effect.
// Spec: Server-Server API "Checks performed on receipt of a PDU", "Rejection", "Soft failure".
import type { Pdu } from "../../events/types.ts";
import { isStateEvent } from "../../events/types.ts";
import { redactsOf } from "../../events/redaction.ts";
import type { StateMap } from "../../store/state-groups.ts";
import type { SqlExecutor } from "../../../storage/sql.ts";
import type { BuiltEvent } from "../build-event.ts";
import type { RoomSnapshot } from "../room-cache.ts";

/** A client's transaction id, recorded with the event it produced (spec "Transaction identifiers"). */
export interface PlannedTxn {
  userId: string;
  deviceKey: string;
  txnId: string;
  requestHash: string;
  /** The endpoint path the id belongs to (a fixed-length hash; see EventStore.findTxn). */
  scope?: string;
}

/**
 * Where an event's state group comes from: an existing group (with its state), or the group of an event
 * planned earlier in the same plan. When the event's state after is that very map object, the event
 * shares the group; otherwise commit() stores a new group as a delta over it.
 */
export type GroupBasis = { group: number; state: StateMap } | { event: string };

export interface PlannedEvent extends BuiltEvent {
  /** The state before the event; undefined for an outlier (unknown). */
  stateBefore: StateMap | undefined;
  /** The state after it: stateBefore plus the event if it is an accepted state event, else stateBefore. */
  stateAfter: StateMap | undefined;
  basis: GroupBasis | undefined;
  /** The event this state event replaced in stateBefore (unsigned.replaces_state, prev_content). */
  replacesState: string | null;
  /**
   * Its prev_events that are not events of the room's DAG when it is planned — unknown to this server, or
   * outliers: the DAG edges recorded for it, so that such an event finds this child when it arrives or is
   * promoted (EventStore.withChildren, which is asked only about those). An edge to an event already in
   * the DAG would never be read: the local planner builds on the room's forward extremities, so its
   * events record none, and a message's commit writes one row fewer per event.
   */
  prevsOutsideDag: readonly string[];
  outlier: boolean;
  /** Why the event was rejected (it is then never part of any state), or null. */
  rejectedReason: string | null;
  softFailed: boolean;
  /** The event this redaction would take effect on (see `redactionTarget`; commit() applies the rule). */
  redacts: string | undefined;
  txn?: PlannedTxn;
  /** Stored before as an outlier: commit() promotes that row instead of inserting one (de-outliering). */
  promote?: boolean;
}

/** The room once the plan is committed. */
export interface RoomAfter {
  /** Current state: the (resolved) state at the forward extremities. */
  state: StateMap;
  /** The group holding `state`, when one does. */
  group: GroupBasis | undefined;
  /** How current state changes: key → new event id, or null when the key leaves the state. */
  changes: ReadonlyMap<string, string | null>;
  extremities: string[];
  maxDepth: number;
}

export interface CommitPlan {
  /** The room as the plan found it. */
  room: RoomSnapshot;
  events: PlannedEvent[];
  after: RoomAfter;
  /** Extra writes that must commit with the events (e.g. the rooms row of a new room). */
  alsoWrite?: (tx: SqlExecutor) => Promise<void>;
  /**
   * Older history fetched from another server (backfill): the events take positions below every other
   * (EventStore.backfillPositions), so /sync, live readers, push and the durable consumers never see them.
   */
  backfilled?: boolean;
}

/** The entries of `after` that differ from `before` (null: gone), for RoomAfter.changes. */
export function stateChanges(before: StateMap, after: StateMap): Map<string, string | null> {
  const out = new Map<string, string | null>();
  if (before === after) return out;
  for (const [k, id] of after) if (before.get(k) !== id) out.set(k, id);
  for (const k of before.keys()) if (!after.has(k)) out.set(k, null);
  return out;
}

/**
 * The redaction step of planning, for events of either planner: the event a planned event would redact.
 * A state-keyed m.room.redaction never redacts anything, nor does an outlier, a rejected or a soft-failed
 * one. Who may redact — the spec's rule, auth/redaction.ts — is then applied by commit() through
 * rooms/redactions.ts `redactionsToRecord`, against the redaction's own auth events: a redaction that
 * fails it is stored but never applied. Indexers read the outcome (CommittedBatch.redactions).
 */
export function redactionTarget(
  pdu: Pdu,
  room: Pick<RoomSnapshot, "version">,
  marks: { outlier: boolean; rejectedReason: string | null; softFailed: boolean },
): string | undefined {
  if (pdu.type !== "m.room.redaction" || isStateEvent(pdu)) return undefined;
  if (marks.outlier || marks.rejectedReason !== null || marks.softFailed) return undefined;
  return redactsOf(pdu, room.version);
}
