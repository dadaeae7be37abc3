import { stateKeyOf } from "../store/state-groups.js";
const cache = (s) => s.caches.get("erased_users", 100_000);
/** Drops a user's cached erasure flag when their account changes (an invalidation listener, src/main.ts). */
export function invalidateErasedUsers(s, m) {
    if (m.kind === "profile")
        cache(s).delete(m.userId);
}
async function erasedAmong(s, senders) {
    const c = cache(s);
    const unknown = senders.filter((u) => c.get(u) === undefined);
    if (unknown.length > 0) {
        const erased = await s.users.erasedAmong(unknown);
        for (const u of unknown)
            c.set(u, erased.has(u));
    }
    return new Set(senders.filter((u) => c.get(u) === true));
}
/** The ids among `events` that `reader` gets redacted: an erased local sender's, unless the reader was joined then. */
export async function erasedForReader(s, reader, events) {
    const suffix = `:${s.config.server_name}`;
    const senders = [...new Set(events.map((e) => e.pdu.sender).filter((u) => u.endsWith(suffix)))];
    const out = new Set();
    if (senders.length === 0)
        return out;
    const erased = await erasedAmong(s, senders);
    if (erased.size === 0)
        return out;
    const candidates = events.filter((e) => erased.has(e.pdu.sender));
    if (!reader) {
        for (const e of candidates)
            out.add(e.eventId);
        return out;
    }
    const groups = await s.rooms.stateGroups.getMany(candidates.map((e) => e.stateGroup).filter((g) => g !== null));
    const key = stateKeyOf("m.room.member", reader.userId);
    const memberIds = candidates.map((e) => (e.stateGroup !== null ? groups.get(e.stateGroup)?.get(key) : undefined));
    const members = await s.rooms.events.getMany(memberIds.filter((x) => x !== undefined));
    candidates.forEach((e, i) => {
        const id = memberIds[i];
        if ((id ? members.get(id)?.pdu.content.membership : undefined) !== "join")
            out.add(e.eventId);
    });
    return out;
}
