import { stateKeyOf } from "../store/state-groups.js";
import { RoomBatchReads } from "../store/rooms.js";
export { roomNotVisible } from "./read-access.js";
/** Largest page of rooms one call returns. */
export const MAX_ROOM_PAGE = 1000;
const SUMMARY_TYPES = ["m.room.name", "m.room.topic", "m.room.avatar", "m.room.history_visibility", "m.room.canonical_alias"];
function stringField(content, field) {
    const v = content?.[field];
    return typeof v === "string" ? v : undefined;
}
/**
 * Summaries of `roomIds` as `r` may see them; rooms that do not exist or that `r` may not read are absent.
 * Queries: one for the rooms and `r`'s memberships, one for the current state entries of the summary
 * types, at most one for those state events (none when they are cached). Rooms the requester left add
 * one batch read of their leave events, a state-group read each (cached), and one batch read of the
 * older state events.
 */
export async function roomSummaries(s, r, roomIds) {
    const ids = [...new Set(roomIds)];
    const out = new Map();
    if (ids.length === 0)
        return out;
    const reads = new RoomBatchReads(s.storage.sql);
    const rooms = await reads.roomsWithMembership(r.userId, ids);
    if (rooms.length === 0)
        return out;
    const current = await reads.currentStateOfTypes(rooms.map((x) => x.roomId), SUMMARY_TYPES);
    // The current state events of every room in one read (most are cached).
    const events = await s.rooms.events.getMany([...current.values()].flatMap((m) => [...m.values()]));
    const worldReadable = (roomId) => {
        const id = current.get(roomId)?.get("m.room.history_visibility");
        return stringField(id ? events.get(id)?.pdu.content : undefined, "history_visibility") === "world_readable";
    };
    // Which state each visible room shows: the current one, or (former members) the state at their leave.
    const shown = new Map();
    const formerMembers = [];
    for (const row of rooms) {
        const m = row.membership;
        if (m === "join" || m === "invite" || m === "knock" || worldReadable(row.roomId))
            shown.set(row.roomId, current.get(row.roomId) ?? new Map());
        else if ((m === "leave" || m === "ban") && row.membershipEventId)
            formerMembers.push({ roomId: row.roomId, leaveEventId: row.membershipEventId });
    }
    if (formerMembers.length > 0) {
        const leaves = await s.rooms.events.getMany(formerMembers.map((f) => f.leaveEventId));
        const groups = await s.rooms.stateGroups.getMany([...leaves.values()].map((e) => e.stateGroup).filter((g) => g !== null));
        for (const f of formerMembers) {
            const group = leaves.get(f.leaveEventId)?.stateGroup;
            const state = group !== undefined && group !== null ? groups.get(group) : undefined;
            if (!state)
                continue;
            const picked = new Map();
            for (const type of SUMMARY_TYPES) {
                const id = state.get(stateKeyOf(type, ""));
                if (id)
                    picked.set(type, id);
            }
            shown.set(f.roomId, picked);
        }
        const missing = formerMembers.flatMap((f) => [...(shown.get(f.roomId)?.values() ?? [])]).filter((id) => !events.has(id));
        for (const [id, e] of await s.rooms.events.getMany(missing))
            events.set(id, e);
    }
    const contentOf = (state, type) => {
        const id = state.get(type);
        return id ? events.get(id)?.pdu.content : undefined;
    };
    for (const row of rooms) {
        const state = shown.get(row.roomId);
        if (!state)
            continue;
        out.set(row.roomId, {
            roomId: row.roomId,
            roomVersion: row.roomVersion,
            membership: row.membership,
            name: stringField(contentOf(state, "m.room.name"), "name"),
            topic: stringField(contentOf(state, "m.room.topic"), "topic"),
            avatarUrl: stringField(contentOf(state, "m.room.avatar"), "url"),
            canonicalAlias: stringField(contentOf(state, "m.room.canonical_alias"), "alias"),
            worldReadable: worldReadable(row.roomId),
        });
    }
    return out;
}
/**
 * One page of the rooms where `userId` has one of `memberships` (forgotten rooms left out), newest
 * membership change first, starting below stream position `before` when given. One query.
 */
export async function userRoomsPage(s, userId, opts) {
    const limit = Math.min(Math.max(Math.floor(opts.limit), 0), MAX_ROOM_PAGE);
    if (opts.memberships.length === 0)
        return { rooms: [], more: false };
    const rows = await new RoomBatchReads(s.storage.sql).membershipPage(userId, opts.memberships, opts.before, limit);
    return {
        rooms: rows.slice(0, limit),
        more: rows.length > limit,
    };
}
/** Stream positions of events (e.g. a page /messages returned, to give each one a cursor). One query at most. */
export async function eventStreamPositions(s, eventIds) {
    const events = await s.rooms.events.getMany(eventIds);
    return new Map([...events].map(([id, e]) => [id, e.streamOrdering]));
}
