// Ignoring users (spec: Client-Server API "Ignoring Users"): the `m.ignored_user_list` account data names
// users whose events and invites this user should not be served. Applied wherever events are served to
// a client (history visibility's filter, the sync timeline, invites in /sync), as Synapse: state events
// stay (the room's state must stay whole), message-like events from ignored senders go. The list is read
// once per user and cached until that user writes it again.
import type { Services } from "../services.ts";
import type { Invalidation } from "../cache/invalidation.ts";
import type { StoredEvent } from "../store/events.ts";
import { isPlainObject } from "../events/types.ts";

export const IGNORED_USER_LIST = "m.ignored_user_list";

const cache = (s: Services) => s.caches.get<string, ReadonlySet<string>>("ignored_users", 10_000);

/** The users `userId` ignores (an empty set when none). */
export async function ignoredUsers(s: Services, userId: string): Promise<ReadonlySet<string>> {
  const c = cache(s);
  let set = c.get(userId);
  if (!set) {
    const content = await s.accountData.get(userId, "", IGNORED_USER_LIST);
    const users = isPlainObject(content?.ignored_users) ? Object.keys(content.ignored_users) : [];
    set = new Set(users);
    c.set(userId, set);
  }
  return set;
}

/** Drops the events of ignored senders that are not state (as Synapse: state stays to keep the room whole). */
export async function withoutIgnored(s: Services, userId: string, events: StoredEvent[]): Promise<StoredEvent[]> {
  if (events.length === 0) return events;
  const ignored = await ignoredUsers(s, userId);
  if (ignored.size === 0) return events;
  return events.filter((e) => e.pdu.state_key !== undefined || !ignored.has(e.pdu.sender));
}

/** Drops the cached list when its owner wrote it (an invalidation listener, declared in src/main.ts). */
export function invalidateIgnoredUsers(s: Services, m: Invalidation): void {
  if (m.kind === "ignored_users") cache(s).delete(m.userId);
}
