// POST /rooms/{roomId}/receipt/{receiptType}/{eventId} (spec: Client-Server API "Receipts", threaded
// read receipts): a joined member marks an event read — `m.read` (seen by the room), `m.read.private`
// (seen by the user only) or `m.fully_read` (the read marker, read-markers.ts). A receipt is per room,
// type, user and thread (`thread_id`: absent = unthreaded, "main", or a thread root): a newer one replaces
// the older one of the same key; one for an earlier event than the stored one is ignored, as Synapse does.
// Receipts for events unknown in the room are accepted and dropped (Synapse, since 1.93).
import { MatrixError } from "../errors.js";
import { requireJoined } from "../typing/set-typing.js";
import { filterVisible } from "../rooms/visibility.js";
import { setFullyRead } from "./read-markers.js";
export const RECEIPT_TYPES = ["m.read", "m.read.private"];
/** The event if it exists in `roomId` and `userId` (a joined member) may see it. */
export async function eventInRoom(s, userId, roomId, eventId) {
    const e = await s.rooms.events.get(eventId);
    if (!e || e.roomId !== roomId || e.outlier || e.rejectedReason)
        return undefined;
    return (await filterVisible(s, userId, [e], "join", { keepIgnored: true })).length > 0 ? e : undefined;
}
export function checkEventId(eventId) {
    if (!eventId.startsWith("$") || eventId.length > 255)
        throw new MatrixError("M_INVALID_PARAM", `${eventId} is not a valid event ID`, 400);
}
/** Validates `thread_id` from a receipt body: undefined (unthreaded) or a non-empty string. */
export function parseThreadId(body) {
    const t = body.thread_id;
    if (t === undefined)
        return undefined;
    if (typeof t !== "string" || t === "")
        throw new MatrixError("M_INVALID_PARAM", "thread_id field must be a non-empty string", 400);
    if (t !== "main" && !t.startsWith("$"))
        throw new MatrixError("M_INVALID_PARAM", "thread_id must be main or a thread root's event ID", 400);
    return t;
}
/** Refuses a thread_id the event cannot belong to: a reply of another thread, or a thread reply marked "main". */
async function checkThread(s, event, threadId) {
    const rel = (await s.relations.ofEvents(s.storage.sql, [event.eventId])).get(event.eventId);
    const inThread = rel?.relType === "m.thread" ? rel.relatesToId : (rel?.threadId ?? null);
    if (threadId === "main" && rel?.relType === "m.thread")
        throw new MatrixError("M_INVALID_PARAM", "thread_id main given for an event in a thread", 400);
    if (threadId !== "main" && inThread !== null && inThread !== threadId)
        throw new MatrixError("M_INVALID_PARAM", "The event is not in the thread given by thread_id", 400);
}
/** Stores a receipt of `r` (already checked to be joined); returns whether it was written. */
export async function putReceipt(s, r, roomId, type, eventId, threadId) {
    const event = await eventInRoom(s, r.userId, roomId, eventId);
    if (!event)
        return false;
    if (threadId !== undefined)
        await checkThread(s, event, threadId);
    const pos = await s.receipts.put({ roomId, receiptType: type, userId: r.userId, threadId: threadId ?? "", eventId, ts: s.clock.now() }, async (existing) => {
        if (existing.eventId === eventId)
            return true;
        const old = await s.rooms.events.get(existing.eventId);
        return old !== undefined && old.streamOrdering > event.streamOrdering;
    });
    if (pos === undefined)
        return false;
    s.push.receiptMoved(r.userId, roomId);
    s.rooms.notifier.notify(type === "m.read" ? { stream: "receipts", position: pos, roomIds: [roomId] } : { stream: "receipts", position: pos, userIds: [r.userId] });
    return true;
}
export async function sendReceipt(s, r, roomId, receiptType, eventId, body) {
    if (receiptType !== "m.read" && receiptType !== "m.read.private" && receiptType !== "m.fully_read")
        throw new MatrixError("M_INVALID_PARAM", "Receipt type must be m.read, m.read.private or m.fully_read", 400);
    checkEventId(eventId);
    const threadId = parseThreadId(body);
    if (receiptType === "m.fully_read" && threadId !== undefined)
        throw new MatrixError("M_INVALID_PARAM", "thread_id is not compatible with m.fully_read", 400);
    await requireJoined(s, r.userId, roomId);
    if (receiptType === "m.fully_read")
        await setFullyRead(s, r, roomId, eventId);
    else
        await putReceipt(s, r, roomId, receiptType, eventId, threadId);
}
