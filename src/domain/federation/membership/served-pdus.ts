// Stored events as this server hands them to another one: the PDU as signed, without the `unsigned` it
// keeps for itself, in its redacted form when a redaction takes effect on it (the one rule,
// rooms/redactions.ts); and the auth chain of a set of events, read level by level (one query per level).
// Spec: Server-Server API "PDUs", "Joining Rooms" (send_join's state and auth_chain).
// LEAD: fed-ingest serves events too (/event, /state, /event_auth, backfill): dedupe on merge.
import type { Services } from "../../services.ts";
import type { Pdu } from "../../events/types.ts";
import { authEventIds } from "../../events/types.ts";
import { redactEvent } from "../../events/redaction.ts";
import type { StoredEvent } from "../../store/events.ts";
import { effectiveRedactions } from "../../rooms/redactions.ts";
import type { RoomVersion } from "../../rooms/room-versions.ts";

/** The events as PDUs for another server, in the given order. */
export async function pdusForServer(s: Services, v: RoomVersion, events: StoredEvent[]): Promise<Pdu[]> {
  const redacted = await effectiveRedactions(s, events, async () => v.id);
  return events.map((e) => {
    const { unsigned: _u, ...pdu } = e.pdu;
    return redacted.has(e.eventId) ? redactEvent(pdu as Pdu, v) : (pdu as Pdu);
  });
}

/** Every stored event reachable from `ids` through auth_events (`ids` themselves only when reached so). */
export async function authChainOf(s: Services, ids: Iterable<string>): Promise<StoredEvent[]> {
  const chain = new Map<string, StoredEvent>();
  const reached = new Set<string>();
  const authOf = (events: Iterable<StoredEvent>) => {
    const next: string[] = [];
    for (const e of events)
      for (const a of authEventIds(e.pdu))
        if (!reached.has(a)) {
          reached.add(a);
          next.push(a);
        }
    return next;
  };
  let frontier = authOf((await s.rooms.events.getMany(ids)).values());
  while (frontier.length > 0) {
    const found = await s.rooms.events.getMany(frontier);
    for (const [id, e] of found) chain.set(id, e);
    frontier = authOf(found.values());
  }
  return [...chain.values()];
}
