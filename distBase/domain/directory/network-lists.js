// Application services' published room directories, one per network they bridge (spec: Client-Server API
// "Application service room directory": PUT /directory/list/appservice/{networkId}/{roomId}; DELETE as
// Synapse): only a service may list rooms, in its own lists; /publicRooms reads them by the
// third_party_instance_id "<service id>|<network id>" (public-rooms.ts).
import { MatrixError } from "../errors.js";
import { knownRoom } from "./visibility.js";
import { backfillDirectoryStats } from "./stats.js";
export async function setNetworkListing(s, r, networkId, roomId, visibility) {
    if (!r.appserviceId)
        throw new MatrixError("M_FORBIDDEN", "Only application services can edit the appservice published room list", 403);
    if (networkId === "")
        throw new MatrixError("M_INVALID_PARAM", "The network id is empty", 400);
    const v = visibility ?? "public";
    if (v !== "public" && v !== "private")
        throw new MatrixError("M_INVALID_PARAM", "visibility must be public or private", 400);
    await knownRoom(s, roomId);
    await s.directory.setNetworkListing(r.appserviceId, networkId, roomId, v === "public");
    // A room older than the directory's stats gets its row now, so the listing shows it.
    if (v === "public" && !(await s.directory.hasStats(roomId)))
        await backfillDirectoryStats(s, [roomId]);
}
