// Local events for a room another instance writes, made by a domain operation that no forwarded request
// brought to that instance (a profile change carried into every room of the user, a delayed event coming
// due, a server notice, an alias's canonical update, dummy events...): the draft is made here — a draft
// function sees the room as this process has it — and appended by the room's writer over the internal
// route, which builds, authorizes and commits it as its own (rooms/append.ts); the caller gets the stored
// event back. A forwarded draft that reaches an instance that does not write the room is refused, never
// sent on. Spec: none (process architecture).
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { StoredEvent } from "../store/events.ts";
import type { EventDraft } from "../rooms/build-event.ts";
import type { PersistOptions } from "../rooms/persist.ts";
import type { PlannedTxn } from "../rooms/pipeline/plan.ts";
import { requireRoom, type RoomSnapshot } from "../rooms/room-cache.ts";
import { isPlainObject } from "../events/types.ts";

/** The internal route that appends a draft to a room this instance writes (compat/cluster.ts). */
export const INTERNAL_APPEND = "/rooms/append";

type DraftFn = (room: RoomSnapshot) => Promise<EventDraft | { alreadyDone: StoredEvent }> | EventDraft | { alreadyDone: StoredEvent };

/** Appends a draft to `roomId` through its writer (another instance). */
export async function appendElsewhere(s: Services, roomId: string, draft: EventDraft | DraftFn, opts: PersistOptions): Promise<StoredEvent> {
  if (opts.alsoWrite) throw new MatrixError("M_UNKNOWN", "Writes beside an event are made by the room's writer only", 500);
  let d: EventDraft;
  if (typeof draft === "function") {
    const made = await draft(await requireRoom(s, roomId));
    if ("alreadyDone" in made) return made.alreadyDone;
    d = made;
  } else d = draft;
  opts.admit?.();
  const answer = await s.internal.call(s.topology.eventWriterFor(roomId), INTERNAL_APPEND, { room_id: roomId, draft: d, ...(opts.txn ? { txn: opts.txn } : {}) });
  const stored = await s.rooms.events.get(String(answer.event_id));
  if (!stored) throw new MatrixError("M_UNKNOWN", `The room's writer answered ${String(answer.event_id)}, which is not stored`, 500);
  return stored;
}

/**
 * The internal route's handler: the draft another instance made, appended here (this instance writes the
 * room). `append` is rooms/append.ts's appendEvent.
 */
export async function appendForwarded(
  s: Services,
  body: Record<string, unknown>,
  append: (s: Services, roomId: string, draft: EventDraft, opts: PersistOptions) => Promise<StoredEvent>,
): Promise<{ event_id: string }> {
  const { room_id: roomId, draft, txn } = body;
  if (typeof roomId !== "string" || !isPlainObject(draft) || typeof draft.type !== "string" || typeof draft.sender !== "string" || !isPlainObject(draft.content))
    throw new MatrixError("M_BAD_JSON", "room_id and a draft (type, sender, content) are required", 400);
  if (!s.topology.writesRoom(roomId))
    throw new MatrixError("M_UNKNOWN", `Instance ${s.topology.instanceName} does not write ${roomId} (it has ${s.topology.eventWriterFor(roomId)} write it): the instances' stream_writers differ`, 500);
  const stored = await append(s, roomId, draft as unknown as EventDraft, txn !== undefined ? { txn: txn as PlannedTxn } : {});
  return { event_id: stored.eventId };
}
