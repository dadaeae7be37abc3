// A sticky event pushed to us that cannot be placed in the room's DAG (MSC4354 "Federation behaviour":
// old but unexpired sticky events — sent to a server that just joined, or after an outage — have
// prev_events from before what the receiving server holds). Such a PDU is otherwise refused
// (federation/ingest.ts); a sticky one sent by a user of its origin server is instead kept as an outlier
// (checked against its auth events, not a forward extremity, not in the timeline) and, while its sender
// is joined to the room in current state, becomes a sticky event of the room: /sync's sticky section and
// the sliding-sync extension then deliver it (the MSC's "deliver" property; "Only state event level
// checks are applied to them"). Synapse, which never pushes to new servers, keeps no outlier sticky events.
import type { Services } from "../services.ts";
import type { RoomSnapshot } from "../rooms/room-cache.ts";
import type { ParsedPdu, RemoteRoomFetcher } from "../federation/fetch-events.ts";
import { authIdsOf } from "../federation/dag-walk.ts";
import { serverOfUser } from "../federation/room-servers.ts";
import { currentStateEvent } from "../rooms/room-cache.ts";
import { stickyExpiry } from "./sticky.ts";

/** Keeps `p` as a sticky outlier if it qualifies; returns whether it did. */
export async function keepStickyOutlier(s: Services, fetcher: RemoteRoomFetcher, origin: string, room: RoomSnapshot, p: ParsedPdu): Promise<boolean> {
  if (!s.config.experimental_features.msc4354_enabled) return false;
  const now = s.clock.now();
  const expiresAt = stickyExpiry(p.pdu, now);
  if (expiresAt === undefined || expiresAt <= now || serverOfUser(p.pdu.sender) !== origin) return false;
  const member = await currentStateEvent(s, room, "m.room.member", p.pdu.sender);
  if ((member?.content as { membership?: unknown } | undefined)?.membership !== "join") return false;
  let stored = await s.rooms.events.get(p.eventId);
  if (!stored) {
    const auth = await s.rooms.events.getMany(authIdsOf(p.pdu, room));
    if (authIdsOf(p.pdu, room).some((id) => !auth.has(id))) await fetcher.tryFetchAuthChain(p.eventId);
    await fetcher.storeOutliers([p]);
    stored = await s.rooms.events.get(p.eventId);
  }
  if (!stored || stored.rejectedReason !== null || stored.softFailed) return false;
  const top = await s.storage.sql.transaction((tx) =>
    s.sticky.insert(tx, [{ eventId: stored.eventId, roomId: room.roomId, eventStreamOrdering: stored.streamOrdering, sender: stored.pdu.sender, expiresAt }]),
  );
  if (top !== undefined) s.rooms.notifier.notify({ stream: "sticky_events", position: top, roomIds: [room.roomId] });
  return true;
}
