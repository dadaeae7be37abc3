import { inTimeline } from "../store/events.js";
import { stateKeyOf } from "../store/state-groups.js";
import { withoutIgnored } from "../account-data/ignored-users.js";
const STRICTNESS = ["world_readable", "shared", "invited", "joined"];
function laxer(a, b) {
    return STRICTNESS.indexOf(a) <= STRICTNESS.indexOf(b) ? a : b;
}
/**
 * The events `userId` may be served. Events of users they ignore are dropped too (state aside), unless
 * `keepIgnored` (acting on an event — a receipt, a report — is not being served it).
 */
export async function filterVisible(s, userId, all, currentMembership, opts = {}) {
    const inTl = all.every(inTimeline) ? all : all.filter(inTimeline);
    const events = opts.keepIgnored ? inTl : await withoutIgnored(s, userId, inTl);
    if (events.length === 0)
        return events;
    const groups = await s.rooms.stateGroups.getMany(events.map((e) => e.stateGroup));
    const wanted = new Set();
    const hvKey = stateKeyOf("m.room.history_visibility", "");
    const memberKey = stateKeyOf("m.room.member", userId);
    for (const g of groups.values()) {
        const hv = g.get(hvKey);
        const m = g.get(memberKey);
        if (hv)
            wanted.add(hv);
        if (m)
            wanted.add(m);
    }
    for (const e of events)
        if (e.pdu.type === "m.room.history_visibility" && e.replacesState)
            wanted.add(e.replacesState);
    const stateEvents = await s.rooms.events.getMany(wanted);
    const contentOf = (id, field) => {
        const v = id ? stateEvents.get(id)?.pdu.content[field] : undefined;
        return typeof v === "string" ? v : undefined;
    };
    return events.filter((e) => {
        const g = groups.get(e.stateGroup);
        let visibility = contentOf(g.get(hvKey), "history_visibility") ?? "shared";
        if (e.pdu.type === "m.room.history_visibility")
            visibility = laxer(visibility, contentOf(e.replacesState ?? undefined, "history_visibility") ?? "shared");
        if (visibility === "world_readable")
            return true;
        const membership = contentOf(g.get(memberKey), "membership");
        if (membership === "join")
            return true;
        // A user always sees the event that changed their own membership.
        if (e.pdu.type === "m.room.member" && e.pdu.state_key === userId)
            return true;
        if (visibility === "shared")
            return currentMembership === "join";
        if (visibility === "invited")
            return membership === "invite";
        return false;
    });
}
