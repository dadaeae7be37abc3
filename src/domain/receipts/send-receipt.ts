// POST /rooms/{roomId}/receipt/{receiptType}/{eventId} (spec: Client-Server API "Receipts", threaded
// read receipts): a joined member marks an event read — `m.read` (seen by the room), `m.read.private`
// (seen by the user only) or `m.fully_read` (the read marker, read-markers.ts). A receipt is per room,
// type, user and thread (`thread_id`: absent = unthreaded, "main", or a thread root): a newer one replaces
// the older one of the same key; one for an earlier event than the stored one is ignored, as Synapse does.
// Receipts for events unknown in the room are accepted and dropped (Synapse, since 1.93).
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { requireJoined } from "../typing/set-typing.ts";
import { filterVisible } from "../rooms/visibility.ts";
import type { StoredEvent } from "../store/events.ts";
import { setFullyRead } from "./read-markers.ts";

export const RECEIPT_TYPES = ["m.read", "m.read.private"] as const;
export type ReceiptType = (typeof RECEIPT_TYPES)[number];

/** The event if it exists in `roomId` and `userId` (a joined member) may see it. */
export async function eventInRoom(s: Services, userId: string, roomId: string, eventId: string): Promise<StoredEvent | undefined> {
  const e = await s.rooms.events.get(eventId);
  if (!e || e.roomId !== roomId || e.outlier || e.rejectedReason) return undefined;
  return (await filterVisible(s, userId, [e], "join", { keepIgnored: true })).length > 0 ? e : undefined;
}

export function checkEventId(eventId: string): void {
  if (!eventId.startsWith("$") || eventId.length > 255) throw new MatrixError("M_INVALID_PARAM", `${eventId} is not a valid event ID`, 400);
}

/** Validates `thread_id` from a receipt body: undefined (unthreaded) or a non-empty string. */
export function parseThreadId(body: Record<string, unknown>): string | undefined {
  const t = body.thread_id;
  if (t === undefined) return undefined;
  if (typeof t !== "string" || t === "") throw new MatrixError("M_INVALID_PARAM", "thread_id field must be a non-empty string", 400);
  if (t !== "main" && !t.startsWith("$")) throw new MatrixError("M_INVALID_PARAM", "thread_id must be main or a thread root's event ID", 400);
  return t;
}

/** Refuses a thread_id the event cannot belong to: a reply of another thread, or a thread reply marked "main". */
async function checkThread(s: Services, event: StoredEvent, threadId: string): Promise<void> {
  const rel = (await s.relations.ofEvents(s.storage.sql, [event.eventId])).get(event.eventId);
  const inThread = rel?.relType === "m.thread" ? rel.relatesToId : (rel?.threadId ?? null);
  if (threadId === "main" && rel?.relType === "m.thread") throw new MatrixError("M_INVALID_PARAM", "thread_id main given for an event in a thread", 400);
  if (threadId !== "main" && inThread !== null && inThread !== threadId) throw new MatrixError("M_INVALID_PARAM", "The event is not in the thread given by thread_id", 400);
}

/** Stores a receipt of `r` (already checked to be joined); returns whether it was written. */
export async function putReceipt(s: Services, r: Requester, roomId: string, type: ReceiptType, eventId: string, threadId: string | undefined): Promise<boolean> {
  const event = await eventInRoom(s, r.userId, roomId, eventId);
  if (!event) return false;
  if (threadId !== undefined) await checkThread(s, event, threadId);
  const pos = await s.receipts.put(
    { roomId, receiptType: type, userId: r.userId, threadId: threadId ?? "", eventId, ts: s.clock.now() },
    async (existing) => {
      if (existing.eventId === eventId) return true;
      const old = await s.rooms.events.get(existing.eventId);
      return old !== undefined && old.streamOrdering > event.streamOrdering;
    },
  );
  if (pos === undefined) return false;
  s.push.receiptMoved(r.userId, roomId);
  s.rooms.notifier.notify(type === "m.read" ? { stream: "receipts", position: pos, roomIds: [roomId] } : { stream: "receipts", position: pos, userIds: [r.userId] });
  return true;
}

export async function sendReceipt(s: Services, r: Requester, roomId: string, receiptType: string, eventId: string, body: Record<string, unknown>): Promise<void> {
  if (receiptType !== "m.read" && receiptType !== "m.read.private" && receiptType !== "m.fully_read")
    throw new MatrixError("M_INVALID_PARAM", "Receipt type must be m.read, m.read.private or m.fully_read", 400);
  checkEventId(eventId);
  const threadId = parseThreadId(body);
  if (receiptType === "m.fully_read" && threadId !== undefined) throw new MatrixError("M_INVALID_PARAM", "thread_id is not compatible with m.fully_read", 400);
  await requireJoined(s, r.userId, roomId);
  if (receiptType === "m.fully_read") await setFullyRead(s, r, roomId, eventId);
  else await putReceipt(s, r, roomId, receiptType, eventId, threadId);
}
