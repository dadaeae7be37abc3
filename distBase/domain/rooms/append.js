import { persistDrafts, persistEach } from "./persist.js";
import { requireRoom } from "./room-cache.js";
import { MatrixError } from "../errors.js";
/** Most messages committed in one transaction. */
const MAX_GROUP = 64;
const waiting = new WeakMap();
export function appendEvent(s, roomId, draft, opts = {}) {
    if (typeof draft !== "function" && draft.stateKey === undefined && !opts.alsoWrite)
        return enqueueMessage(s, roomId, { draft, txn: opts.txn, admit: opts.admit });
    return s.rooms.lanes.run(roomId, async () => {
        opts.admit?.();
        const room = await requireRoom(s, roomId);
        const d = typeof draft === "function" ? await draft(room) : draft;
        if ("alreadyDone" in d)
            return d.alreadyDone;
        const [stored] = await persistDrafts(s, room, [d], opts);
        return stored;
    });
}
function enqueueMessage(s, roomId, message) {
    let rooms = waiting.get(s);
    if (!rooms)
        waiting.set(s, (rooms = new Map()));
    const queue = rooms.get(roomId);
    return new Promise((resolve, reject) => {
        const item = { ...message, resolve, reject };
        if (queue) {
            queue.push(item); // a drain is already scheduled on the lane and will take this one
            return;
        }
        rooms.set(roomId, [item]);
        // Start the group after the requests already read from the network this turn have joined it.
        setImmediate(() => void s.rooms.lanes.run(roomId, () => drain(s, roomId)));
    });
}
async function drain(s, roomId) {
    const rooms = waiting.get(s);
    const all = rooms.get(roomId) ?? [];
    const group = all.splice(0, MAX_GROUP);
    if (all.length === 0)
        rooms.delete(roomId);
    else
        void s.rooms.lanes.run(roomId, () => drain(s, roomId));
    // The same transaction id twice in one group (a client retrying concurrently): the later ones share
    // the first one's outcome, or are refused when their request differs.
    const firstByTxn = new Map();
    const unique = [];
    const followers = [];
    for (const w of group) {
        const key = w.txn ? `${w.txn.userId}\u0000${w.txn.deviceKey}\u0000${w.txn.scope ?? ""}\u0000${w.txn.txnId}` : undefined;
        const first = key ? firstByTxn.get(key) : undefined;
        if (first)
            followers.push([w, first]);
        else {
            if (key)
                firstByTxn.set(key, w);
            unique.push(w);
        }
    }
    const outcome = new Map();
    try {
        const room = await requireRoom(s, roomId);
        // One transaction for the group. Its first round trip (on PostgreSQL: BEGIN, the lookup and the
        // positions, pipelined) finds the transaction ids already recorded — a concurrent retry committed by
        // an earlier group after this request was read: answered from the record instead of inserted twice,
        // which would fail the whole group — and allocates a position for every other message.
        await s.storage.sql.transaction(async (tx) => {
            const withTxn = unique.filter((w) => w.txn);
            const [recorded, positions] = await Promise.all([
                withTxn.length > 0 ? s.rooms.events.findTxns(withTxn.map((w) => w.txn), tx) : [],
                s.rooms.events.streamIds.nextMany(tx, unique.length),
            ]);
            const done = new Set();
            for (const [i, rec] of recorded.entries()) {
                if (!rec)
                    continue;
                const w = withTxn[i];
                done.add(w);
                const stored = rec.requestHash === w.txn.requestHash ? await s.rooms.events.get(rec.eventId) : undefined;
                outcome.set(w, stored ?? new MatrixError("M_INVALID_PARAM", "This transaction id was already used for a different request", 400));
            }
            const fresh = unique.filter((w) => {
                if (done.has(w))
                    return false;
                try {
                    w.admit?.();
                    return true;
                }
                catch (err) {
                    outcome.set(w, err);
                    return false;
                }
            });
            if (fresh.length === 0)
                return;
            // Settled only once the transaction has: a failed commit fails every message it carried.
            const results = await persistEach(s, room, fresh.map((w) => ({ draft: w.draft, txn: w.txn })), { tx, positions });
            tx.onSettled((committed) => {
                if (committed)
                    results.forEach((r, i) => outcome.set(fresh[i], r));
            });
            // A message refused on its own (the auth rules) is answered whatever becomes of the others.
            results.forEach((r, i) => r instanceof Error && outcome.set(fresh[i], r));
        });
    }
    catch (err) {
        for (const w of unique)
            if (!outcome.has(w))
                outcome.set(w, err);
    }
    for (const [w, r] of outcome)
        (r instanceof Error ? w.reject(r) : w.resolve(r));
    for (const [w, first] of followers) {
        const r = outcome.get(first);
        if (w.txn.requestHash !== first.txn.requestHash)
            w.reject(new MatrixError("M_INVALID_PARAM", "This transaction id was already used for a different request", 400));
        else if (r instanceof Error)
            w.reject(r);
        else
            w.resolve(r);
    }
}
