// The state before an event from the state after it (what its state group holds): its own entry put
// back to the event it replaced, or removed when it replaced none. Spec: Server-Server API "Room State"
// (the state at an event is the state before it).
import type { StoredEvent } from "../store/events.ts";
import { stateKeyOf, type StateMap } from "../store/state-groups.ts";

export function stateBeforeEvent(e: Pick<StoredEvent, "eventId" | "pdu" | "replacesState">, after: StateMap): StateMap {
  if (e.pdu.state_key === undefined) return after;
  const key = stateKeyOf(e.pdu.type, e.pdu.state_key);
  if (after.get(key) !== e.eventId) return after;
  const before = new Map(after);
  if (e.replacesState) before.set(key, e.replacesState);
  else before.delete(key);
  return before;
}
