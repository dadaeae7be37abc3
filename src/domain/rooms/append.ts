// Appends locally built events to an existing room inside the room's lane. A draft function sees the room
// as it is now (to check or shape the event) and runs alone; plain message drafts waiting on the same
// room are group-committed: built and authorized one by one, written in one transaction. This is the
// common path of every local write (messages, state, membership, redactions). In a room using a Policy
// Server the group's messages are committed one by one (each waits on the policy server's answer). A room
// another instance writes gets the draft appended by its writer (cluster/remote-append.ts).
import type { Services } from "../services.ts";
import type { StoredEvent } from "../store/events.ts";
import type { EventDraft } from "./build-event.ts";
import { persistDrafts, persistEach, type PersistOptions } from "./persist.ts";
import { requireRoom, type RoomSnapshot } from "./room-cache.ts";
import { MatrixError } from "../errors.ts";
import { mayUsePolicyServer } from "./policy-server.ts";
import type { QueuedMessage as Waiting } from "../process-state.ts";
import { appendElsewhere } from "../cluster/remote-append.ts";

/** A draft function returns this to say the change is already in place (an idempotent no-op). */
export interface AlreadyDone {
  alreadyDone: StoredEvent;
}

type DraftFn = (room: RoomSnapshot) => Promise<EventDraft | AlreadyDone> | EventDraft | AlreadyDone;

/** Most messages committed in one transaction. */
const MAX_GROUP = 64;

export function appendEvent(s: Services, roomId: string, draft: EventDraft | DraftFn, opts: PersistOptions = {}): Promise<StoredEvent> {
  // A room another instance writes: its writer appends the draft (cluster/remote-append.ts).
  if (s.topology.distributed && !s.topology.writesRoom(roomId)) return appendElsewhere(s, roomId, draft, opts);
  if (typeof draft !== "function" && draft.stateKey === undefined && !opts.alsoWrite) return enqueueMessage(s, roomId, { draft, txn: opts.txn, admit: opts.admit });
  return s.rooms.lanes.run(roomId, async () => {
    opts.admit?.();
    const room = await requireRoom(s, roomId);
    const d = typeof draft === "function" ? await draft(room) : draft;
    if ("alreadyDone" in d) return d.alreadyDone;
    const [stored] = await persistDrafts(s, room, [d], opts);
    return stored!;
  });
}

function enqueueMessage(s: Services, roomId: string, message: Pick<Waiting, "draft" | "txn" | "admit">): Promise<StoredEvent> {
  const rooms = s.processState.roomMessages;
  const queue = rooms.get(roomId);
  return new Promise<StoredEvent>((resolve, reject) => {
    const item: Waiting = { draft: message.draft, txn: message.txn, admit: message.admit, resolve, reject };
    if (queue) {
      queue.push(item); // a drain is already scheduled on the lane and will take this one
      return;
    }
    rooms.set(roomId, [item]);
    // Start the group after the requests already read from the network this turn have joined it.
    setImmediate(() => void s.rooms.lanes.run(roomId, () => drain(s, roomId)));
  });
}

/** The answer to a message whose transaction id is already recorded: its event, whatever the body (as Synapse). */
async function answerRecorded(s: Services, rec: { eventId: string }): Promise<StoredEvent | Error> {
  return (await s.rooms.events.get(rec.eventId)) ?? new MatrixError("M_NOT_FOUND", "The event this transaction id was answered with is gone", 404);
}

/** Answers the messages whose transaction id is recorded (`recorded[i]` is `withTxn[i]`'s record); returns them. */
async function answerRecordedTxns(s: Services, withTxn: Waiting[], recorded: ({ eventId: string } | null | undefined)[], outcome: Map<Waiting, StoredEvent | Error>): Promise<Set<Waiting>> {
  const done = new Set<Waiting>();
  for (const [i, rec] of recorded.entries()) {
    if (!rec) continue;
    const w = withTxn[i]!;
    done.add(w);
    outcome.set(w, await answerRecorded(s, rec));
  }
  return done;
}

/**
 * The messages of a group in a room using a Policy Server: the policy server signs each one before it is
 * stored (an HTTP request, up to 30 s: policy-check.ts), which must not hold a transaction open — on
 * SQLite that would stall every write of the server. So the recorded transaction ids are looked up first
 * (a retransmission is answered as recorded, never rate-limited), then each fresh message is built,
 * signed and committed on its own; one refused fails alone. A concurrent retry committed meanwhile fails
 * the insert of its id, and send.ts answers it from the record.
 */
async function commitOneByOne(s: Services, roomId: string, unique: Waiting[], outcome: Map<Waiting, StoredEvent | Error>, admit: (w: Waiting) => boolean): Promise<void> {
  const withTxn = unique.filter((w) => w.txn);
  const recorded = withTxn.length > 0 ? await s.rooms.events.findTxns(withTxn.map((w) => w.txn!)) : [];
  const done = await answerRecordedTxns(s, withTxn, recorded, outcome);
  for (const w of unique) {
    if (done.has(w) || !admit(w)) continue;
    try {
      const [stored] = await persistDrafts(s, await requireRoom(s, roomId), [w.draft], { txn: w.txn });
      outcome.set(w, stored!);
    } catch (err) {
      outcome.set(w, err as Error);
    }
  }
}

async function drain(s: Services, roomId: string): Promise<void> {
  const rooms = s.processState.roomMessages;
  const all = rooms.get(roomId) ?? [];
  const group = all.splice(0, MAX_GROUP);
  if (all.length === 0) rooms.delete(roomId);
  else void s.rooms.lanes.run(roomId, () => drain(s, roomId));
  // The same transaction id twice in one group (a client retrying concurrently): the later ones share
  // the first one's outcome, whatever their body.
  const firstByTxn = new Map<string, Waiting>();
  const unique: Waiting[] = [];
  const followers: [Waiting, Waiting][] = [];
  for (const w of group) {
    const key = w.txn ? `${w.txn.userId}\u0000${w.txn.deviceKey}\u0000${w.txn.scope ?? ""}\u0000${w.txn.txnId}` : undefined;
    const first = key ? firstByTxn.get(key) : undefined;
    if (first) followers.push([w, first]);
    else {
      if (key) firstByTxn.set(key, w);
      unique.push(w);
    }
  }
  let outcome = new Map<Waiting, StoredEvent | Error>();
  // Admission (the rate limit) is decided once per message, whichever attempt asks.
  const admitted = new Map<Waiting, unknown>();
  const admit = (w: Waiting): boolean => {
    if (!admitted.has(w)) {
      try {
        w.admit?.();
        admitted.set(w, true);
      } catch (err) {
        admitted.set(w, err);
      }
    }
    const r = admitted.get(w);
    if (r !== true) outcome.set(w, r as Error);
    return r === true;
  };
  const attempt = async (lookUp: boolean): Promise<void> => {
    const room = await requireRoom(s, roomId);
    // A room using a Policy Server: each message waits on its answer, outside any transaction.
    if (mayUsePolicyServer(room.state)) return commitOneByOne(s, roomId, unique, outcome, admit);
    // One transaction for the group. With the lookup, its first round trip (on PostgreSQL: BEGIN, the
    // lookup and the positions, pipelined) finds the transaction ids already recorded — a concurrent retry
    // committed by an earlier group after this request was read: answered from the record instead of
    // inserted twice, which would fail the whole group — and allocates a position for every other message.
    // Without it (the first attempt), the group's statements and COMMIT go out in one round trip on
    // PostgreSQL, and SQLite skips a read per group; a recorded id fails the insert of its row, and the
    // group is then tried again with the lookup.
    await s.storage.sql.transaction(async (tx) => {
      const withTxn = lookUp ? unique.filter((w) => w.txn) : [];
      const [recorded, positions] = await Promise.all([
        withTxn.length > 0 ? s.rooms.events.findTxns(withTxn.map((w) => w.txn!), tx) : [],
        s.rooms.events.streamIds.nextMany(tx, unique.length),
      ]);
      const done = await answerRecordedTxns(s, withTxn, recorded, outcome);
      const fresh = unique.filter((w) => !done.has(w) && admit(w));
      if (fresh.length === 0) return;
      // Settled only once the transaction has: a failed commit fails every message it carried.
      const results = await persistEach(s, room, fresh.map((w) => ({ draft: w.draft, txn: w.txn })), { tx, positions });
      tx.onSettled!((committed) => {
        if (committed) results.forEach((r, i) => outcome.set(fresh[i]!, r));
      });
      // A message refused on its own (the auth rules) is answered whatever becomes of the others.
      results.forEach((r, i) => r instanceof Error && outcome.set(fresh[i]!, r));
    });
  };
  try {
    // A retransmission is rare next to a new message: the first attempt assumes none.
    try {
      await attempt(false);
    } catch (err) {
      if (!s.rooms.events.isTxnConflict(err)) throw err;
      outcome = new Map();
      await attempt(true);
    }
    // Refused admission without the lookup: a retransmission of a recorded id is still answered as
    // recorded (never rate-limited), as the lookup would have answered it.
    const refused = unique.filter((w) => w.txn && admitted.has(w) && admitted.get(w) !== true);
    if (refused.length > 0) {
      const recorded = await s.rooms.events.findTxns(refused.map((w) => w.txn!));
      for (const [i, rec] of recorded.entries()) {
        if (!rec) continue;
        const w = refused[i]!;
        outcome.set(w, await answerRecorded(s, rec));
      }
    }
  } catch (err) {
    for (const w of unique) if (!outcome.has(w)) outcome.set(w, err as Error);
  }
  for (const [w, r] of outcome) (r instanceof Error ? w.reject(r) : w.resolve(r));
  for (const [w, first] of followers) {
    const r = outcome.get(first)!;
    if (r instanceof Error) w.reject(r);
    else w.resolve(r);
  }
}
