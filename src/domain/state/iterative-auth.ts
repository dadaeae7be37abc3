// Iterative auth checks of state resolution v2: apply sorted state events one by one to a state, each only
// if the authorization rules allow it against that state, falling back to the event's own (non-rejected)
// auth events for the keys the state lacks. Rejected events are never applied.
// Spec: Room Versions v2 "Iterative auth checks", "Rejected events"; Server-Server API "Authorisation rules".
import { authTypesForEvent, checkAuth, stateMapKey, type AuthOptions } from "../auth/index.ts";
import type { Pdu } from "../events/types.ts";
import type { EventGraph } from "./event-graph.ts";

/** Runs the iterative auth checks of `ids` (in order) over `state`, which is updated in place. */
export function iterativeAuthChecks(graph: EventGraph, ids: readonly string[], state: Map<string, string>, options: AuthOptions): Map<string, string> {
  const v = graph.version;
  for (const id of ids) {
    const event = graph.get(id);
    if (!event || typeof event.state_key !== "string" || graph.isRejected(id)) continue;

    const authState = new Map<string, Pdu>();
    let createId: string | undefined;
    const use = (eventId: string): void => {
      const ae = graph.usable(eventId);
      if (!ae || typeof ae.state_key !== "string") return;
      authState.set(stateMapKey(ae.type, ae.state_key), ae);
      if (ae.type === "m.room.create" && ae.state_key === "") createId = eventId;
    };
    for (const a of graph.authIds(id)) use(a);
    for (const [type, stateKey] of authTypesForEvent(v, event.type, event.state_key, event.sender, event.content)) {
      const current = state.get(stateMapKey(type, stateKey));
      if (current !== undefined) use(current);
    }
    const current = state.get(stateMapKey("m.room.create", ""));
    if (current !== undefined) use(current);

    try {
      checkAuth(event, authState, v, { ...options, createEventId: createId });
    } catch {
      continue; // not allowed (or malformed beyond what the rules can read): ignored
    }
    state.set(stateMapKey(event.type, event.state_key), id);
  }
  return state;
}
