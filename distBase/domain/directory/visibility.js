// A room's visibility in the published room directory: anyone may ask; room admins (power to send
// m.room.canonical_alias) and server admins may publish or unpublish it.
// Spec: Client-Server API "Listing rooms" (GET/PUT /directory/list/room/{roomId}).
import { MatrixError } from "../errors.js";
import { tryParseRoomId } from "../ids.js";
import { canEditDirectoryEntry } from "./aliases.js";
import { backfillDirectoryStats } from "./stats.js";
import { requireNotGuest } from "../accounts/guest-access.js";
export async function knownRoom(s, roomId) {
    if (!tryParseRoomId(roomId))
        throw new MatrixError("M_INVALID_PARAM", `Invalid room id: ${JSON.stringify(roomId)}`, 400);
    const row = await s.rooms.store.getRoom(roomId);
    if (!row)
        throw new MatrixError("M_NOT_FOUND", "Room not found", 404);
    return row;
}
export async function getDirectoryVisibility(s, roomId) {
    return { visibility: (await knownRoom(s, roomId)).isPublic ? "public" : "private" };
}
export async function setDirectoryVisibility(s, r, roomId, body) {
    requireNotGuest(r, "setDirectoryVisibility");
    const visibility = body.visibility ?? "public";
    if (visibility !== "public" && visibility !== "private")
        throw new MatrixError("M_INVALID_PARAM", "visibility must be public or private", 400);
    await knownRoom(s, roomId);
    if (!(await canEditDirectoryEntry(s, r, roomId)))
        throw new MatrixError("M_FORBIDDEN", "You don't have permission to change the room's directory entry", 403);
    await s.rooms.store.setPublic(roomId, visibility === "public");
    // A room older than the directory's stats gets its row now, so the listing shows it.
    if (visibility === "public")
        await backfillDirectoryStats(s, await s.directory.publishedWithoutStats());
}
