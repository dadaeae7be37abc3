// Erased users (deactivated with `erase`, the contract's local erasure request): their events stay for
// whoever was joined when they were sent, and reach anyone else — members who joined later, readers of
// a world_readable or shared history — only redacted, as Synapse serves them. Applied where events are
// serialized for clients (serialize.ts), so every face and endpoint obeys it. Who is erased is cached
// per sender (invalidated with the user's profile), so the hot paths read nothing once warm.
// Spec: Client-Server API "Account deactivation" (`erase`).
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { StoredEvent } from "../store/events.ts";
import type { Invalidation } from "../cache/invalidation.ts";
import { stateKeyOf } from "../store/state-groups.ts";

const cache = (s: Services) => s.caches.get<string, boolean>("erased_users", 100_000);

/** Drops a user's cached erasure flag when their account changes (an invalidation listener, src/main.ts). */
export function invalidateErasedUsers(s: Services, m: Invalidation): void {
  if (m.kind === "profile") cache(s).delete(m.userId);
}

async function erasedAmong(s: Services, senders: string[]): Promise<Set<string>> {
  const c = cache(s);
  const unknown = senders.filter((u) => c.get(u) === undefined);
  if (unknown.length > 0) {
    const erased = await s.users.erasedAmong(unknown);
    for (const u of unknown) c.set(u, erased.has(u));
  }
  return new Set(senders.filter((u) => c.get(u) === true));
}

/** The ids among `events` that `reader` gets redacted: an erased local sender's, unless the reader was joined then. */
export async function erasedForReader(s: Services, reader: Requester | undefined, events: StoredEvent[]): Promise<Set<string>> {
  const suffix = `:${s.config.server_name}`;
  const senders = [...new Set(events.map((e) => e.pdu.sender).filter((u) => u.endsWith(suffix)))];
  const out = new Set<string>();
  if (senders.length === 0) return out;
  const erased = await erasedAmong(s, senders);
  if (erased.size === 0) return out;
  const candidates = events.filter((e) => erased.has(e.pdu.sender));
  if (!reader) {
    for (const e of candidates) out.add(e.eventId);
    return out;
  }
  const groups = await s.rooms.stateGroups.getMany(candidates.map((e) => e.stateGroup).filter((g): g is number => g !== null));
  const key = stateKeyOf("m.room.member", reader.userId);
  const memberIds = candidates.map((e) => (e.stateGroup !== null ? groups.get(e.stateGroup)?.get(key) : undefined));
  const members = await s.rooms.events.getMany(memberIds.filter((x): x is string => x !== undefined));
  candidates.forEach((e, i) => {
    const id = memberIds[i];
    if ((id ? members.get(id)?.pdu.content.membership : undefined) !== "join") out.add(e.eventId);
  });
  return out;
}
