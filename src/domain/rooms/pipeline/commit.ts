// The one commit of the event pipeline, whatever planned the events (ARCHITECTURE "Events: one way in",
// step 5): in one transaction the event JSON as signed, DAG edges, state groups, redactions, the client's
// transaction id, then the room — forward extremities, current state, memberships — and the in-transaction
// indexers. The room's snapshot and the commit notice are published when the transaction settles, so a
// failure leaves nothing behind, in storage or in memory.
import type { Services } from "../../services.ts";
import type { StoredEvent } from "../../store/events.ts";
import { inTimeline } from "../../store/events.ts";
import type { StateMap } from "../../store/state-groups.ts";
import type { SqlExecutor } from "../../../storage/sql.ts";
import { movedRoom, type RoomSnapshot } from "../room-cache.ts";
import type { CommitPlan, GroupBasis, PlannedEvent } from "./plan.ts";
import { redactionsToRecord } from "../redactions.ts";
import type { Commit, CommitNotice } from "../../consumers/commit-feed.ts";

/** What the in-transaction indexers see of a commit. */
export interface CommittedBatch {
  /** The room (as before the commit: id and version). */
  room: RoomSnapshot;
  /** The commit's events that entered the timeline (not outliers, rejected or soft-failed), in stream order. */
  events: readonly StoredEvent[];
  /** Every event the commit stored, in stream order. */
  stored: readonly StoredEvent[];
  /** The redactions that take effect: redaction event id → redacted event id (pipeline/plan.ts decides). */
  redactions: ReadonlyMap<string, string>;
  /** How current state changed: key → new event id, or null when the key left the state. */
  stateChanges: ReadonlyMap<string, string | null>;
  /** Older history fetched from another server (negative positions): not notified, not pushed. */
  backfilled: boolean;
}

/**
 * An in-transaction indexer (search, relations, directory stats, push actions ...): it writes through `tx`
 * in the commit's transaction, and fails the whole commit if it throws. Declared in src/main.ts.
 */
export type EventIndexer = (tx: SqlExecutor, s: Services, batch: CommittedBatch) => Promise<void>;

type Group = { id: number; state: StateMap };

function groupOf(basis: GroupBasis | undefined, made: Map<string, Group>): Group | undefined {
  if (!basis) return undefined;
  if ("event" in basis) return made.get(basis.event);
  return { id: basis.group, state: basis.state };
}

/** The state group of the state after `p`: its basis when the state is the same map, else a new one. */
async function stateGroupFor(s: Services, tx: SqlExecutor, roomId: string, p: PlannedEvent, made: Map<string, Group>): Promise<number | null> {
  if (p.outlier) return null;
  const state = p.stateAfter!;
  const basis = groupOf(p.basis, made);
  const id = basis && basis.state === state ? basis.id : await s.rooms.stateGroups.create(tx, roomId, p.eventId, state, basis);
  made.set(p.eventId, { id, state });
  return id;
}

/**
 * Runs the in-transaction indexers over a change of current state made without new events (a partial-state
 * room completed, its events placed again): what they keep from current state (directory stats, room
 * publicity) follows.
 */
export async function indexStateChanges(s: Services, tx: SqlExecutor, room: RoomSnapshot, stateChanges: ReadonlyMap<string, string | null>): Promise<void> {
  if (stateChanges.size === 0) return;
  const batch: CommittedBatch = { room, events: [], stored: [], redactions: new Map(), stateChanges, backfilled: false };
  for (const index of s.extensions.indexers) await index(tx, s, batch);
}

/** Membership rows follow current state: each member key that changed gets its new event. */
export async function writeMemberships(s: Services, tx: SqlExecutor, roomId: string, changes: ReadonlyMap<string, string | null>, batch: Map<string, StoredEvent>): Promise<void> {
  const ids = [...changes].filter(([k, id]) => id !== null && k.startsWith("m.room.member\u0000")).map(([, id]) => id!);
  if (ids.length === 0) return;
  const older = ids.some((id) => !batch.has(id)) ? await s.rooms.events.getMany(ids.filter((id) => !batch.has(id))) : new Map<string, StoredEvent>();
  for (const id of ids) {
    const e = batch.get(id) ?? older.get(id);
    if (!e) continue;
    const c = e.pdu.content as { membership?: string; displayname?: unknown; avatar_url?: unknown };
    await s.rooms.store.upsertMembership(tx, {
      roomId,
      userId: e.pdu.state_key!,
      membership: String(c.membership),
      eventId: e.eventId,
      sender: e.pdu.sender,
      displayname: typeof c.displayname === "string" ? c.displayname : null,
      avatarUrl: typeof c.avatar_url === "string" ? c.avatar_url : null,
      streamOrdering: e.streamOrdering,
    });
  }
}

/** What a writer announces of its commit: the notice (less what `announceCommit` fills in) and what it hands over. */
export interface Announcement extends Omit<Commit, "notice"> {
  notice: Omit<CommitNotice, "stream" | "writer">;
}

/**
 * The one way a write to a room's events, state or memberships is announced: when `tx` settles, a commit
 * notice (stream "events", this process as its writer) goes to the CommitFeed — the caches, the sync
 * stream cache, the notifier and the durable consumers here, and whatever replicates the feed to other
 * processes. Every writer of the event pipeline calls it: `commit()` below, the out-of-band memberships
 * (out-of-band.ts) and the completion of a partial-state room (federation/partial-state/resync.ts).
 * `rolledBack` runs instead when the transaction fails.
 */
export function announceCommit(s: Services, tx: SqlExecutor, a: Announcement, rolledBack?: () => void): void {
  if (!tx.onSettled) throw new Error("events must be committed through sql.transaction (settle signal needed)");
  tx.onSettled((committed) => {
    if (committed) s.commits.publish({ ...a, notice: { stream: "events", writer: s.instanceName, ...a.notice } });
    else rolledBack?.();
  });
}

/**
 * A transaction the caller opened for the commit, with stream positions it already allocated in it (at
 * least one per planned event, ascending; those left over are abandoned): the group commit asks for its
 * positions in the same round trip as its transaction-id lookup (rooms/append.ts).
 */
export interface OpenCommit {
  tx: SqlExecutor;
  positions: readonly number[];
}

/**
 * Commits a plan (the caller holds the room's lane), in a transaction of its own or in `open`. Returns
 * the stored events, in order.
 */
export async function commit(s: Services, plan: CommitPlan, open?: OpenCommit): Promise<StoredEvent[]> {
  // Who may redact (the one rule, auth/redaction.ts) is decided before the writes: a redaction that
  // fails it is stored as a plain event and never applied.
  const redactsOf = await redactionsToRecord(s, plan.room, plan.events);
  if (open) return writePlan(s, plan, redactsOf, open.tx, open.positions);
  return s.storage.sql.transaction((tx) => writePlan(s, plan, redactsOf, tx));
}

async function writePlan(s: Services, plan: CommitPlan, redactsOf: Map<string, string>, tx: SqlExecutor, allocated?: readonly number[]): Promise<StoredEvent[]> {
  const { room, after } = plan;
  const roomId = room.roomId;
  const now = s.clock.now();
  const backfilled = plan.backfilled === true;
  await plan.alsoWrite?.(tx);
  const made = new Map<string, Group>();
  const out: StoredEvent[] = [];
  const redactions = new Map<string, string>();
  // Backfilled history goes below everything stored, in the plan's (topological) order.
  // Every position of the commit at once (one query on PostgreSQL, whatever the number of events).
  if (allocated && (backfilled || allocated.length < plan.events.length)) throw new Error("commit: positions allocated for a plan they do not fit");
  const positions = allocated ?? (backfilled ? await s.rooms.events.backfillPositions(tx, plan.events.length) : await s.rooms.events.streamIds.nextMany(tx, plan.events.length));
  for (const [i, p] of plan.events.entries()) {
    const { pdu, eventId } = p;
    const stateGroup = await stateGroupFor(s, tx, roomId, p, made);
    const txnHere = p.txn ? { deviceKey: p.txn.deviceKey, txnId: p.txn.txnId } : undefined;
    const marks = { outlier: p.outlier, rejectedReason: p.rejectedReason, softFailed: p.softFailed };
    const redacts = redactsOf.get(eventId);
    const row = { eventId, roomId, pdu, json: p.json, stateGroup, replacesState: p.replacesState, prevsOutsideDag: p.prevsOutsideDag, ...marks, redacts, txn: txnHere };
    const streamOrdering = p.promote ? await s.rooms.events.promote(tx, row, positions?.[i]) : await s.rooms.events.insert(tx, row, positions?.[i]);
    if (redacts) redactions.set(eventId, redacts);
    if (p.txn) await s.rooms.events.insertTxn(tx, p.txn, { eventId, roomId, now });
    // The fields in the order EventStore's rows give them (one hidden class for every stored event).
    out.push({ eventId, roomId, streamOrdering, stateGroup, replacesState: p.replacesState, rejectedReason: p.rejectedReason, outlier: p.outlier, softFailed: p.softFailed, json: p.json, pdu, txn: txnHere });
  }
  const before = new Set(room.extremities);
  const kept = new Set(after.extremities);
  await s.rooms.events.moveExtremities(tx, roomId, room.extremities.filter((id) => !kept.has(id)), after.extremities.filter((id) => !before.has(id)));
  if (after.changes.size > 0) {
    await s.rooms.store.changeCurrentState(tx, roomId, after.changes);
    await writeMemberships(s, tx, roomId, after.changes, new Map(out.map((e) => [e.eventId, e])));
  }
  const batch: CommittedBatch = { room, events: out.filter(inTimeline), stored: out, redactions, stateChanges: after.changes, backfilled };
  for (const index of s.extensions.indexers) await index(tx, s, batch);
  // The room's snapshot moves in the same step as the stream position (at COMMIT, before any other code
  // runs): a reader at that position finds the matching current state in the cache.
  const group = groupOf(after.group, made);
  const snapshot = movedRoom(room, {
    state: after.state,
    stateGroup: group && group.state === after.state ? group.id : undefined,
    extremities: after.extremities,
    maxDepth: after.maxDepth,
    // Backfilled events are older than the state the room is at: its position stays.
    position: backfilled ? room.position : out[out.length - 1]!.streamOrdering,
  });
  const position = Math.max(...out.map((e) => e.streamOrdering));
  announceCommit(s, tx, { notice: { position, roomId, eventIds: out.map((e) => e.eventId) }, events: out, snapshot });
  return out;
}
