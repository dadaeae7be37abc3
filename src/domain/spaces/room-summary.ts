// GET /room_summary/{roomIdOrAlias} (MSC3266): one room's summary, as a /hierarchy entry without its
// children, with the requester's membership ("leave" when none; absent without an access token). A room
// this server is in is summarised here if the requester may see it (hierarchy.ts's rule); another is asked
// of the `via` servers (or those an alias names) over federation and shown if visible to them.
// Spec: Client-Server API "GET /_matrix/client/v1/room_summary/{roomIdOrAlias}" (v1.15).
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { isValidRoomAlias, isValidRoomId } from "../ids.ts";
import { loadRoom } from "../rooms/room-cache.ts";
import { SpaceReads } from "../store/spaces.ts";
import { hostInRoom } from "../federation/membership/residency.ts";
import { getAlias } from "../directory/aliases.ts";
import { entryOf, RoomFacts, type HierarchyRoom } from "./hierarchy.ts";
import { fetchRemoteSummary, remoteRoomVisible } from "./remote-hierarchy.ts";

export type RoomSummary = Omit<HierarchyRoom, "children_state"> & { membership?: string };

const notFound = () => new MatrixError("M_NOT_FOUND", "Room not found or is not accessible", 404);

export async function getRoomSummary(s: Services, r: Requester | undefined, roomIdOrAlias: string, via: readonly string[]): Promise<RoomSummary> {
  let roomId = roomIdOrAlias;
  let servers = [...via];
  if (isValidRoomAlias(roomIdOrAlias)) {
    const found = await getAlias(s, roomIdOrAlias);
    roomId = found.room_id;
    servers = found.servers;
  } else if (!isValidRoomId(roomIdOrAlias)) {
    throw new MatrixError("M_INVALID_PARAM", `${roomIdOrAlias} was not legal room ID or room alias`, 400);
  }
  const facts = new RoomFacts(s, r?.userId ?? "");
  let entry: HierarchyRoom;
  const room = (await hostInRoom(s, roomId)) ? await loadRoom(s, roomId) : undefined;
  if (room) {
    if (!(await facts.accessible(room))) throw notFound();
    const counts = await new SpaceReads(s.storage.sql).joinedCounts([roomId]);
    entry = await entryOf(s, facts, room, [], counts.get(roomId) ?? 0);
  } else {
    if (servers.length === 0) throw new MatrixError("M_MISSING_PARAM", "Missing via to query remote room", 400);
    const remote = (await fetchRemoteSummary(s, roomId, servers, true))?.room;
    if (!remote) throw notFound();
    const allowed = remote.allowed_room_ids ?? [];
    await facts.membershipsOf([roomId, ...allowed]);
    const joined = new Set<string>();
    for (const id of allowed) if ((await facts.membership(id)) === "join") joined.add(id);
    if (!remoteRoomVisible(remote, r ? await facts.membership(roomId) : undefined, (id) => joined.has(id))) throw notFound();
    entry = remote;
  }
  const { children_state: _c, ...summary } = entry;
  return r ? { ...summary, membership: (await facts.membership(roomId)) ?? "leave" } : summary;
}
