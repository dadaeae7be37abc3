// The EDUs waiting for one destination, in memory: keyed so a newer one replaces an older one of the same
// key (a user's typing in a room, a user's receipt per room, type and thread, a user's presence), and
// bounded, so a destination that is down for long holds the latest of each and nothing more. Taken in
// packed form for a transaction: all pending presence in few m.presence EDUs, receipts packed into as
// few m.receipt EDUs as their keys allow (one receipt per room, type and user in an EDU: threads apart),
// typing as one EDU each (dropped once older than the receiver's timeout). EDUs are not persisted: after
// a restart they are gone, as in Synapse (typing expires, receipts and presence are re-sent on change).
// Spec: Server-Server API "EDUs", "Typing Notifications", "Receipts", "Presence".
/** A typing notification is pointless once older than the receiver's timeout (Synapse: 60 s). */
export const TYPING_STALE_MS = 60_000;
/** Presence updates packed into one m.presence EDU. */
const PRESENCE_PER_EDU = 50;
/** Most entries of each kind held for one destination. */
const MAX_ENTRIES = 10_000;
function bounded(map, key, value) {
    map.delete(key); // re-inserted last: the map's order is the order of the latest updates
    map.set(key, value);
    while (map.size > MAX_ENTRIES)
        map.delete(map.keys().next().value);
}
export class EduBuffer {
    now;
    presence = new Map();
    receipts = new Map();
    typing = new Map();
    other = new Map();
    seq = 0;
    constructor(now) {
        this.now = now;
    }
    get size() {
        return this.presence.size + this.receipts.size + this.typing.size + this.other.size;
    }
    addTyping(roomId, userId, typing) {
        const key = `${roomId}\u0000${userId}`;
        bounded(this.typing, key, { kind: "typing", key, seq: ++this.seq, at: this.now(), edu: { edu_type: "m.typing", content: { room_id: roomId, user_id: userId, typing } } });
    }
    addReceipt(item) {
        const key = `${item.roomId}\u0000${item.receiptType}\u0000${item.userId}\u0000${item.threadId}`;
        bounded(this.receipts, key, { kind: "receipt", key, seq: ++this.seq, at: this.now(), item });
    }
    addPresence(item) {
        bounded(this.presence, item.user_id, { kind: "presence", key: item.user_id, seq: ++this.seq, at: this.now(), item });
    }
    /** Any other EDU, sent as given (never replaced). */
    addOther(edu) {
        const seq = ++this.seq;
        bounded(this.other, String(seq), { kind: "other", key: String(seq), seq, at: this.now(), edu });
    }
    /** Takes up to `max` EDUs for a transaction: presence, then receipts, then typing, then the rest. */
    take(max) {
        const edus = [];
        const entries = [];
        const room = () => max - edus.length;
        // Presence: PRESENCE_PER_EDU updates per EDU.
        while (this.presence.size > 0 && room() > 0) {
            const batch = [...this.presence.values()].slice(0, PRESENCE_PER_EDU);
            for (const e of batch)
                this.presence.delete(e.key);
            entries.push(...batch);
            edus.push({ edu_type: "m.presence", content: { push: batch.map((e) => e.item) } });
        }
        // Receipts: each into the first EDU without a receipt of its room, type and user.
        if (this.receipts.size > 0 && room() > 0) {
            const packed = [];
            for (const e of [...this.receipts.values()]) {
                const r = e.item;
                const slot = `${r.roomId}\u0000${r.receiptType}\u0000${r.userId}`;
                let target = packed.find((p) => !p.keys.has(slot));
                if (!target) {
                    if (packed.length >= room())
                        break;
                    packed.push((target = { content: {}, keys: new Set() }));
                }
                target.keys.add(slot);
                const byType = (target.content[r.roomId] ??= {});
                const byUser = (byType[r.receiptType] ??= {});
                byUser[r.userId] = { event_ids: [r.eventId], data: r.threadId === "" ? { ts: r.ts } : { ts: r.ts, thread_id: r.threadId } };
                this.receipts.delete(e.key);
                entries.push(e);
            }
            for (const p of packed)
                edus.push({ edu_type: "m.receipt", content: p.content });
        }
        // Typing: stale ones dropped.
        const staleBefore = this.now() - TYPING_STALE_MS;
        for (const e of [...this.typing.values()]) {
            if (e.at < staleBefore) {
                this.typing.delete(e.key);
                continue;
            }
            if (room() <= 0)
                break;
            this.typing.delete(e.key);
            entries.push(e);
            edus.push(e.edu);
        }
        for (const e of [...this.other.values()]) {
            if (room() <= 0)
                break;
            this.other.delete(e.key);
            entries.push(e);
            edus.push(e.edu);
        }
        return { edus, entries };
    }
    /** Gives back what a failed transaction took, unless a newer entry of the same key arrived meanwhile. */
    restore(taken) {
        for (const e of taken.entries) {
            const map = e.kind === "typing" ? this.typing : e.kind === "receipt" ? this.receipts : e.kind === "presence" ? this.presence : this.other;
            if (map.has(e.key))
                continue;
            map.set(e.key, e);
        }
        // Older entries went back at the end: put each map in the order they were added again.
        for (const map of [this.typing, this.receipts, this.presence, this.other]) {
            const sorted = [...map.values()].sort((a, b) => a.seq - b.seq);
            map.clear();
            for (const e of sorted.slice(-MAX_ENTRIES))
                map.set(e.key, e);
        }
    }
    /** Drops everything (the destination's queue is being reset). */
    clear() {
        this.presence.clear();
        this.receipts.clear();
        this.typing.clear();
        this.other.clear();
    }
}
