// Lazy-loaded members of rooms joined with partial state: a timeline sender whose membership the partial
// state lacks is given the member event its own events cite as auth events (as Synapse's
// `_find_missing_partial_state_memberships`), so clients still learn who spoke.
// Spec: Client-Server API "Lazy-loading room members"; MSC3902 (partial state).
import type { Services } from "../services.ts";
import type { StoredEvent } from "../store/events.ts";
import { stateKeyOf, type StateMap } from "../store/state-groups.ts";
import { authEventIds } from "../events/types.ts";

const MEMBER = "m.room.member";

/** Per room: sender → the member event their timeline events cite, for senders `state` lacks. One read. */
export async function membersFromAuthEvents(s: Services, rooms: readonly { roomId: string; state: StateMap; events: readonly StoredEvent[] }[]): Promise<Map<string, Map<string, string>>> {
  const wanted = new Map<string, { roomId: string; sender: string }[]>();
  for (const { roomId, state, events } of rooms)
    for (const e of events) {
      const sender = e.pdu.sender;
      if (state.has(stateKeyOf(MEMBER, sender))) continue;
      for (const id of authEventIds(e.pdu)) {
        const list = wanted.get(id) ?? [];
        list.push({ roomId, sender });
        wanted.set(id, list);
      }
    }
  const out = new Map<string, Map<string, string>>();
  if (wanted.size === 0) return out;
  for (const [id, e] of await s.rooms.events.getMany(wanted.keys())) {
    if (e.pdu.type !== MEMBER || e.rejectedReason !== null) continue;
    for (const { roomId, sender } of wanted.get(id)!) {
      if (e.pdu.state_key !== sender || e.roomId !== roomId) continue;
      let m = out.get(roomId);
      if (!m) out.set(roomId, (m = new Map()));
      if (!m.has(sender)) m.set(sender, id);
    }
  }
  return out;
}
