// Out-of-band memberships (Synapse's name): a local user's membership of a room whose state this server
// does not hold — an invite received over federation (PUT /invite), its rejection through the inviting
// server, or a leave made up locally when that server cannot be reached. The member event is stored as an
// outlier (the state around it is unknown here) and the user's membership row follows it, with the room's
// row if there is none, in one transaction; the commit notice (announced as every commit's is: commit.ts
// `announceCommit`) names the user, whose /sync then shows the invite (with the stripped state it came
// with) or the rejection. A room this server later joins takes its state from the join
// (rooms/receive.ts), which replaces the row.
// Spec: Server-Server API "Inviting to a room", "Leaving Rooms (Rejecting Invites)".
import type { Services } from "../../services.ts";
import type { Pdu } from "../../events/types.ts";
import type { StoredEvent } from "../../store/events.ts";
import type { RoomVersion } from "../room-versions.ts";
import { announceCommit } from "./commit.ts";

export interface OutOfBandMembership {
  roomId: string;
  version: RoomVersion;
  eventId: string;
  /** The m.room.member event about a local user, as it is to be stored (signed; `unsigned` as kept). */
  pdu: Pdu;
}

/**
 * Stores an out-of-band member event and moves its target's membership to it. An event already stored is
 * left as it is (a retried invite): its stored form is returned.
 */
export function commitOutOfBandMembership(s: Services, m: OutOfBandMembership): Promise<StoredEvent> {
  const { roomId, pdu, eventId } = m;
  return s.rooms.lanes.run(roomId, async () => {
    const existing = await s.rooms.events.get(eventId);
    if (existing) return existing;
    const userId = pdu.state_key!;
    const json = JSON.stringify(pdu);
    const content = pdu.content as { membership?: unknown; displayname?: unknown; avatar_url?: unknown };
    return s.storage.sql.transaction(async (tx) => {
      await s.rooms.store.insertRoomIfAbsent(tx, { roomId, roomVersion: m.version.id, creator: pdu.sender, isPublic: false }, s.clock.now());
      const marks = { outlier: true, rejectedReason: null, softFailed: false };
      const streamOrdering = await s.rooms.events.insert(tx, { eventId, roomId, pdu, json, stateGroup: null, replacesState: null, prevsOutsideDag: [], ...marks });
      await s.rooms.store.upsertMembership(tx, {
        roomId,
        userId,
        membership: String(content.membership),
        eventId,
        sender: pdu.sender,
        displayname: typeof content.displayname === "string" ? content.displayname : null,
        avatarUrl: typeof content.avatar_url === "string" ? content.avatar_url : null,
        streamOrdering,
      });
      const stored: StoredEvent = { eventId, roomId, streamOrdering, stateGroup: null, replacesState: null, ...marks, pdu, json };
      announceCommit(s, tx, { notice: { position: streamOrdering, roomId, eventIds: [eventId], outOfBandMembers: [userId] }, events: [stored] });
      return stored;
    });
  });
}
