// Appends locally built events to an existing room inside the room's lane: read the room cache, let the
// caller check or shape the draft against the room as it is now, then build, authorize and persist.
// The common path of every local write (messages, state, membership, redactions).
import type { Services } from "../services.ts";
import type { StoredEvent } from "../store/events.ts";
import type { EventDraft } from "./build-event.ts";
import { persistDrafts, type PersistOptions } from "./persist.ts";
import { requireRoom, type RoomSnapshot } from "./room-cache.ts";

/** A draft function returns this to say the change is already in place (an idempotent no-op). */
export interface AlreadyDone {
  alreadyDone: StoredEvent;
}

export function appendEvent(
  s: Services,
  roomId: string,
  draft: EventDraft | ((room: RoomSnapshot) => Promise<EventDraft | AlreadyDone> | EventDraft | AlreadyDone),
  opts: PersistOptions = {},
): Promise<StoredEvent> {
  return s.rooms.lanes.run(roomId, async () => {
    const room = await requireRoom(s, roomId);
    const d = typeof draft === "function" ? await draft(room) : draft;
    if ("alreadyDone" in d) return d.alreadyDone;
    const [stored] = await persistDrafts(s, room, [d], opts);
    return stored!;
  });
}
