// Who may read a room and up to where: members read everything their history visibility allows; a user
// who left (or was kicked or banned) reads up to that moment; anyone reads a world_readable room.
// Spec: Client-Server API "Room membership" reads, "History visibility".
import { MatrixError } from "../errors.js";
import { currentStateEvent, loadRoom } from "./room-cache.js";
/** The refusal of a read of a room the requester may not see (or that does not exist: the same answer). */
export function roomNotVisible() {
    return new MatrixError("M_FORBIDDEN", "You are not in this room (or it does not exist)", 403);
}
/**
 * `known`: the requester's membership when the caller already holds it (a live reader takes it from
 * sync's in-memory memberships, kept current at every commit); otherwise it is read from storage.
 */
export async function readAccess(s, r, roomId, known) {
    const room = await loadRoom(s, roomId);
    if (!room)
        throw roomNotVisible();
    const m = known !== undefined ? (known ?? undefined) : await s.rooms.store.membership(roomId, r.userId);
    if (m?.membership === "join")
        return { room, membership: "join", upTo: undefined, stateGroup: room.stateGroup };
    const hv = await currentStateEvent(s, room, "m.room.history_visibility");
    if (hv?.content.history_visibility === "world_readable")
        return { room, membership: m?.membership, upTo: undefined, stateGroup: room.stateGroup };
    // A forgotten room's history is no longer retrievable (spec: POST /rooms/{roomId}/forget).
    if (m && !m.forgotten && (m.membership === "leave" || m.membership === "ban")) {
        const leave = await s.rooms.events.get(m.eventId);
        return { room, membership: m.membership, upTo: m.streamOrdering, stateGroup: leave?.stateGroup ?? undefined };
    }
    throw new MatrixError("M_FORBIDDEN", "You are not in this room", 403);
}
