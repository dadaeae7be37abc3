// Erased users (deactivated with `erase`, the contract's local erasure request): their events stay for
// whoever was joined when they were sent, and reach anyone else — members who joined later, readers of
// a world_readable or shared history — only redacted, as Synapse serves them. Spec: Client-Server API
// "Account deactivation" (`erase`).
import type { Services } from "../services.ts";
import type { StoredEvent } from "../store/events.ts";
import { redactEvent } from "../events/redaction.ts";
import { resolveRoomVersion } from "./room-versions.ts";

/**
 * `events` with those of `notJoinedAt` (served to a reader who was not joined when they were sent)
 * redacted when their sender is an erased local user. One query for the senders, none when there are none.
 */
export async function redactErasedSenders(s: Services, events: StoredEvent[], notJoinedAt: ReadonlySet<string>): Promise<StoredEvent[]> {
  if (notJoinedAt.size === 0) return events;
  const suffix = `:${s.config.server_name}`;
  const senders = [...new Set(events.filter((e) => notJoinedAt.has(e.eventId) && e.pdu.sender.endsWith(suffix)).map((e) => e.pdu.sender))];
  if (senders.length === 0) return events;
  const erased = await s.users.erasedAmong(senders);
  if (erased.size === 0) return events;
  const versions = new Map<string, string>();
  const out: StoredEvent[] = [];
  for (const e of events) {
    if (!notJoinedAt.has(e.eventId) || !erased.has(e.pdu.sender)) {
      out.push(e);
      continue;
    }
    let version = versions.get(e.roomId);
    if (version === undefined) versions.set(e.roomId, (version = (await s.rooms.store.getRoom(e.roomId))?.roomVersion ?? "1"));
    out.push({ ...e, pdu: redactEvent(e.pdu, resolveRoomVersion(version)) as typeof e.pdu });
  }
  return out;
}
