import { resolveRoomVersion } from "./room-versions.js";
import { MatrixError } from "../errors.js";
import { stateKeyOf } from "../store/state-groups.js";
/**
 * The room's snapshot, or undefined when this server holds no state of it: no row, or only the row of an
 * out-of-band membership (an invite received over federation, its rejection) — a room it is not in.
 */
export async function loadRoom(s, roomId) {
    const cached = s.rooms.cache.get(roomId);
    if (cached)
        return cached;
    const room = await s.rooms.store.getRoom(roomId);
    if (!room)
        return undefined;
    const state = await s.rooms.store.currentState(roomId);
    if (state.size === 0)
        return undefined;
    const extremities = await s.rooms.events.extremities(roomId);
    const ext = await s.rooms.events.getMany(extremities);
    const createId = state.get(stateKeyOf("m.room.create", ""));
    const create = createId ? await s.rooms.events.get(createId) : undefined;
    if (!create)
        throw new MatrixError("M_UNKNOWN", `Room ${roomId} has no create event`, 500);
    const snap = {
        roomId,
        version: resolveRoomVersion(room.roomVersion),
        state,
        stateGroup: extremities.length === 1 ? (ext.get(extremities[0])?.stateGroup ?? undefined) : undefined,
        extremities,
        maxDepth: Math.max(0, ...[...ext.values()].map((e) => e.pdu.depth)),
        createEvent: create.pdu,
        createEventId: create.eventId,
    };
    s.rooms.cache.set(roomId, snap);
    return snap;
}
export async function requireRoom(s, roomId) {
    const room = await loadRoom(s, roomId);
    if (!room)
        throw new MatrixError("M_NOT_FOUND", "Unknown room", 404);
    return room;
}
/** The current state event of a room for (type, stateKey), if any. */
export async function currentStateEvent(s, room, type, stateKey = "") {
    const id = room.state.get(stateKeyOf(type, stateKey));
    return id ? (await s.rooms.events.get(id))?.pdu : undefined;
}
