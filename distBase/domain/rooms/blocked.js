// The block a server admin puts on a room (admin API "Block Room", src/domain/admin/room-deletion.ts):
// local users may not join, knock on or be invited to a blocked room. Leaving and bans still work.
import { MatrixError } from "../errors.js";
import { RoomAdminStore } from "../store/room-admin.js";
/** 403 M_FORBIDDEN when the room is blocked on this server (Synapse's wording). */
export async function requireRoomNotBlocked(s, roomId) {
    if (await new RoomAdminStore(s.storage.sql).isBlocked(roomId))
        throw new MatrixError("M_FORBIDDEN", "This room has been blocked on this server", 403);
}
