// POST /rooms/{roomId}/read_markers (spec: Client-Server API "Fully read markers"): moves the user's read
// marker — the `m.fully_read` room account data ({event_id}), which only moves forward, as in Synapse —
// and optionally their `m.read` / `m.read.private` receipts (unthreaded) in the same call. The marker's
// event must belong to the room (M_NOT_FOUND otherwise).
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { writeAccountData } from "../account-data/account-data.ts";
import { requireJoined } from "../typing/set-typing.ts";
import { checkEventId, eventInRoom, parseThreadId, putReceipt } from "./send-receipt.ts";
import { runOnWriter, writerElsewhere } from "../cluster/stream-ops.ts";

/** Sets `m.fully_read` in `roomId` to `eventId` unless the current marker is on a later event. */
export async function setFullyRead(s: Services, r: Requester, roomId: string, eventId: string): Promise<void> {
  const event = await eventInRoom(s, r.userId, roomId, eventId);
  if (!event) throw new MatrixError("M_NOT_FOUND", "Event not found in this room", 404);
  await s.rooms.lanes.run(`m.fully_read ${r.userId}`, async () => {
    const current = await s.accountData.get(r.userId, roomId, "m.fully_read");
    const currentId = typeof current?.event_id === "string" ? current.event_id : undefined;
    if (currentId === eventId) return;
    if (currentId) {
      const old = await s.rooms.events.get(currentId);
      if (old && old.roomId === roomId && old.streamOrdering > event.streamOrdering) return;
    }
    await writeAccountData(s, r.userId, roomId, "m.fully_read", { event_id: eventId });
  });
}

export interface ReadMarkers {
  fullyRead?: string;
  read?: string;
  readPrivate?: string;
}

export function parseReadMarkers(body: Record<string, unknown>): ReadMarkers {
  const pick = (k: string) => {
    const v = body[k];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "string") throw new MatrixError("M_BAD_JSON", `${k} must be an event ID`, 400);
    checkEventId(v);
    return v;
  };
  return { fullyRead: pick("m.fully_read"), read: pick("m.read"), readPrivate: pick("m.read.private") };
}

export async function setReadMarkers(s: Services, r: Requester, roomId: string, m: ReadMarkers): Promise<void> {
  await requireJoined(s, r.userId, roomId);
  if (m.fullyRead) await setFullyRead(s, r, roomId, m.fullyRead);
  if (m.read) await putReceipt(s, r, roomId, "m.read", m.read, undefined);
  if (m.readPrivate) await putReceipt(s, r, roomId, "m.read.private", m.readPrivate, undefined);
}

/**
 * Marks `eventId` read for `r` (GraphQL markRead): an m.read receipt, or m.read.private; in a thread
 * (`main` or a thread root) or unthreaded; with `fullyRead` the read marker moves there too. Returns
 * whether a receipt was stored.
 */
export async function markRead(
  s: Services,
  r: Requester,
  roomId: string,
  eventId: string,
  opts: { threadId?: string | null; private?: boolean | null; fullyRead?: boolean | null },
): Promise<boolean> {
  const writer = writerElsewhere(s, "markRead"); // receipts are written by their writer (cluster/stream-ops.ts)
  if (writer) return runOnWriter(s, writer, "markRead", r, [roomId, eventId, opts]);
  checkEventId(eventId);
  const thread = parseThreadId(opts.threadId == null ? {} : { thread_id: opts.threadId });
  await requireJoined(s, r.userId, roomId);
  if (opts.fullyRead) await setFullyRead(s, r, roomId, eventId);
  return putReceipt(s, r, roomId, opts.private ? "m.read.private" : "m.read", eventId, thread);
}
