// The one way events enter a room (ARCHITECTURE "Events: one way in"). A batch of drafts is built in
// order against the room as it evolves, each authorized against its auth events, its state-after
// computed; then everything — event JSON, DAG edges, state groups, current state, memberships, stream
// positions, transaction id — is written in one transaction. Caches and the notifier are updated only
// after the commit, so a failure leaves nothing behind. Spec: Server-Server API "Checks performed on
// receipt of a PDU"; Client-Server API "Room events".
import type { Services } from "../services.ts";
import type { Pdu } from "../events/types.ts";
import { authEventIds, isStateEvent, prevEventIds } from "../events/types.ts";
import { checkAuth, checkAuthEventsList, stateMapKey } from "../auth/index.ts";
import { MatrixError } from "../errors.ts";
import type { StoredEvent } from "../store/events.ts";
import type { SqlExecutor } from "../../storage/sql.ts";
import { stateKeyOf } from "../store/state-groups.ts";
import { buildEvent, type BuiltEvent, type EventDraft } from "./build-event.ts";
import type { RoomSnapshot } from "./room-cache.ts";
import { redactionsToRecord } from "./redactions.ts";

export interface PersistOptions {
  /** Records the client's transaction id (for the last event of the batch) in the same transaction. */
  txn?: {
    userId: string;
    deviceKey: string;
    txnId: string;
    requestHash: string;
    /** The endpoint path the id belongs to (a fixed-length hash; see EventStore.findTxn). */
    scope?: string;
  };
  /** Extra writes that must commit with the events (e.g. the rooms row of a new room). */
  alsoWrite?: (tx: SqlExecutor) => Promise<void>;
}

type Lookup = (id: string) => Promise<Pdu | undefined>;

/**
 * Writes other capabilities add to every commit, inside its transaction (relations, search index,
 * room directory ...): they see the stored events of the batch, in order, and fail the whole write if
 * they throw. Register once at start-up (see installRoomAccountHooks for the pattern).
 */
export type PersistHook = (tx: SqlExecutor, s: Services, room: RoomSnapshot, events: StoredEvent[]) => Promise<void>;
export const persistHooks: PersistHook[] = [];

/** Checks the event against the room version's authorization rules, using its own auth events. */
export async function authorizeEvent(
  s: Services,
  room: Pick<RoomSnapshot, "version" | "createEvent" | "createEventId">,
  pdu: Pdu,
  lookup: Lookup,
): Promise<void> {
  const ids = authEventIds(pdu);
  const authEvents: Pdu[] = [];
  for (const id of ids) {
    const e = await lookup(id);
    if (!e) throw new MatrixError("M_FORBIDDEN", `Event references unknown auth event ${id}`, 403);
    authEvents.push(e);
  }
  checkAuthEventsList(pdu, authEvents, room.version);
  const authState = new Map<string, Pdu>();
  for (const e of authEvents) authState.set(stateMapKey(e.type, e.state_key ?? ""), e);
  checkAuth(pdu, authState, room.version, {
    createEvent: room.createEvent,
    createEventId: room.createEventId,
    // Local events are signed by this server as they are built.
    verifyServerSignature: (_event, serverName) => serverName === s.config.server_name,
  });
}

interface Planned extends BuiltEvent {
  stateBefore: ReadonlyMap<string, string>;
  stateAfter: ReadonlyMap<string, string>;
  replacesState: string | null;
  prevIds: string[];
  txn?: PersistOptions["txn"];
}

/** A batch being planned: the room as it evolves, and the events built so far (not yet stored). */
class Batch {
  readonly planned: Planned[] = [];
  private readonly pending = new Map<string, Pdu>();
  readonly lookup: Lookup = async (id) => this.pending.get(id) ?? (await this.s.rooms.events.get(id))?.pdu;
  constructor(private readonly s: Services, public cur: RoomSnapshot) {}

  /** Builds (unless built) and authorizes one event on top of the batch; throws without changing it. */
  async add(draft: EventDraft | BuiltEvent, txn?: PersistOptions["txn"]): Promise<void> {
    const cur = this.cur;
    const built =
      "pdu" in draft
        ? draft
        : await buildEvent(this.s, { roomId: cur.roomId, version: cur.version, state: cur.state, extremities: cur.extremities, maxDepth: cur.maxDepth, lookup: this.lookup }, draft);
    await authorizeEvent(this.s, cur, built.pdu, this.lookup);
    const key = isStateEvent(built.pdu) ? stateKeyOf(built.pdu.type, built.pdu.state_key!) : undefined;
    const stateAfter = key ? new Map(cur.state).set(key, built.eventId) : cur.state;
    const prevIds = prevEventIds(built.pdu);
    this.planned.push({ ...built, stateBefore: cur.state, stateAfter, replacesState: key ? (cur.state.get(key) ?? null) : null, prevIds, txn });
    this.pending.set(built.eventId, built.pdu);
    this.cur = {
      ...cur,
      state: stateAfter,
      extremities: [...cur.extremities.filter((id) => !prevIds.includes(id)), built.eventId],
      maxDepth: Math.max(cur.maxDepth, built.pdu.depth),
    };
  }
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
  const batch = new Batch(s, room);
  for (const [i, d] of drafts.entries()) await batch.add(d, i === drafts.length - 1 ? opts.txn : undefined);
  return commit(s, room, batch.planned, opts);
}

/**
 * Group commit: builds and authorizes each item on its own (a refused item fails alone), then commits
 * every accepted one in a single transaction. Returns, per item, its stored event or its error.
 */
export async function persistEach(
  s: Services,
  room: RoomSnapshot,
  items: { draft: EventDraft; txn?: PersistOptions["txn"] }[],
): Promise<(StoredEvent | Error)[]> {
  const batch = new Batch(s, room);
  const results: (number | Error)[] = [];
  for (const item of items) {
    try {
      await batch.add(item.draft, item.txn);
      results.push(batch.planned.length - 1);
    } catch (err) {
      results.push(err as Error);
    }
  }
  if (batch.planned.length === 0) return results as Error[];
  const stored = await commit(s, room, batch.planned, {});
  return results.map((r) => (typeof r === "number" ? stored[r]! : r));
}

async function commit(s: Services, room: RoomSnapshot, planned: Planned[], opts: PersistOptions): Promise<StoredEvent[]> {
  const now = s.clock.now();
  let group = room.stateGroup;
  let settleLater: (() => void) | undefined;
  // Redactions record their target only when they take effect (the one rule: auth/redaction.ts); a
  // state-keyed or refused m.room.redaction is stored as a plain event. Decided before the transaction.
  const redactionTargets = await redactionsToRecord(s, room, planned);
  const stored = await s.storage.sql.transaction(async (tx) => {
    await opts.alsoWrite?.(tx);
    const out: StoredEvent[] = [];
    for (const p of planned) {
      const { pdu, eventId } = p;
      const isState = isStateEvent(pdu);
      if (isState || group === undefined) {
        const prev = group !== undefined ? { id: group, state: p.stateBefore } : undefined;
        group = await s.rooms.stateGroups.create(tx, room.roomId, eventId, p.stateAfter, prev);
      }
      const redacts = redactionTargets.get(eventId);
      const txnHere = p.txn ? { deviceKey: p.txn.deviceKey, txnId: p.txn.txnId } : undefined;
      const streamOrdering = await s.rooms.events.insert(tx, {
        eventId,
        roomId: room.roomId,
        pdu,
        json: p.json,
        stateGroup: group,
        replacesState: p.replacesState,
        prevEvents: p.prevIds,
        redacts,
        txn: txnHere,
      });
      if (isState) {
        await s.rooms.store.updateCurrentState(tx, room.roomId, p.stateBefore, p.stateAfter);
        if (pdu.type === "m.room.member") {
          const c = pdu.content as { membership?: string; displayname?: unknown; avatar_url?: unknown };
          await s.rooms.store.upsertMembership(tx, {
            roomId: room.roomId,
            userId: pdu.state_key!,
            membership: String(c.membership),
            eventId,
            sender: pdu.sender,
            displayname: typeof c.displayname === "string" ? c.displayname : null,
            avatarUrl: typeof c.avatar_url === "string" ? c.avatar_url : null,
            streamOrdering,
          });
        }
      }
      if (p.txn) await s.rooms.events.insertTxn(tx, { ...p.txn, eventId, roomId: room.roomId, now });
      out.push({ eventId, ...(txnHere ? { txn: txnHere } : {}), ...(redacts ? { redacts } : {}), roomId: room.roomId, streamOrdering, stateGroup: group, replacesState: p.replacesState, rejectedReason: null, outlier: false, pdu, json: p.json });
    }
    for (const hook of persistHooks) await hook(tx, s, room, out);
    // The room's snapshot moves in the same step as the stream position (at COMMIT, before any other
    // code runs): a reader at that position finds the matching current state in the cache.
    const last = planned[planned.length - 1]!;
    const allPrev = new Set(planned.flatMap((p) => p.prevIds));
    const snapshot: RoomSnapshot = {
      ...room,
      state: last.stateAfter,
      stateGroup: group,
      extremities: [...room.extremities.filter((id) => !allPrev.has(id)), last.eventId],
      maxDepth: Math.max(room.maxDepth, ...planned.map((p) => p.pdu.depth)),
      position: out[out.length - 1]!.streamOrdering,
    };
    const publish = () => {
      s.rooms.cache.set(room.roomId, snapshot);
      for (const e of out) s.rooms.events.remember(e);
    };
    if (tx.onSettled) tx.onSettled((committed) => committed && publish());
    else settleLater = publish;
    return out;
  });
  settleLater?.();
  for (const e of stored) {
    s.rooms.notifier.newEvent({ roomId: e.roomId, eventId: e.eventId, streamOrdering: e.streamOrdering, type: e.pdu.type, stateKey: e.pdu.state_key, sender: e.pdu.sender });
  }
  return stored;
}
