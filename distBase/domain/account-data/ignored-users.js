import { isPlainObject } from "../events/types.js";
export const IGNORED_USER_LIST = "m.ignored_user_list";
const cache = (s) => s.caches.get("ignored_users", 10_000);
/** The users `userId` ignores (an empty set when none). */
export async function ignoredUsers(s, userId) {
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
export async function withoutIgnored(s, userId, events) {
    if (events.length === 0)
        return events;
    const ignored = await ignoredUsers(s, userId);
    if (ignored.size === 0)
        return events;
    return events.filter((e) => e.pdu.state_key !== undefined || !ignored.has(e.pdu.sender));
}
/** Drops the cached list when its owner wrote it (an invalidation listener, declared in src/main.ts). */
export function invalidateIgnoredUsers(s, m) {
    if (m.kind === "ignored_users")
        cache(s).delete(m.userId);
}
