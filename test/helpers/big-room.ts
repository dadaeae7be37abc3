// Filling a room with many members fast, on the resident server, for partial-state join tests and the
// benchmark: join events of a stand-in remote server (a fake origin serving its signing key), built and
// signed for real on the room as it grows, then stored through the resident's remote pipeline in large
// batches — the state is real and signed, only the transport is skipped.
import type { Services } from "../../src/domain/services.ts";
import type { EventSigner } from "../../src/domain/rooms/build-event.ts";
import { buildEvent } from "../../src/domain/rooms/build-event.ts";
import { loadRoom } from "../../src/domain/rooms/room-cache.ts";
import { receiveRemoteEvents } from "../../src/domain/rooms/receive.ts";
import { stateKeyOf } from "../../src/domain/store/state-groups.ts";
import type { Pdu } from "../../src/domain/events/types.ts";

/** Joins `count` users of `members` (localparts `prefix0` …) to `roomId` on `resident`. Returns their ids. */
export async function fillRoomWithMembers(resident: Services, roomId: string, members: EventSigner, count: number, prefix = "member", batch = 500): Promise<string[]> {
  const users: string[] = [];
  let done = 0;
  while (done < count) {
    const room = (await loadRoom(resident, roomId))!;
    const state = new Map(room.state);
    let extremities = room.extremities;
    let maxDepth = room.maxDepth;
    const pdus = new Map<string, Pdu>();
    const inputs: { pdu: Pdu }[] = [];
    const lookup = async (id: string) => pdus.get(id) ?? (await resident.rooms.events.get(id))?.pdu;
    for (let i = 0; i < batch && done < count; i++, done++) {
      const userId = `@${prefix}${done}:${members.serverName}`;
      const ctx = { roomId, version: room.version, state, extremities, maxDepth, lookup };
      const built = await buildEvent(resident, ctx, { type: "m.room.member", stateKey: userId, sender: userId, content: { membership: "join", displayname: `Member ${done}` } }, Date.now(), members);
      pdus.set(built.eventId, built.pdu);
      state.set(stateKeyOf("m.room.member", userId), built.eventId);
      extremities = [built.eventId];
      maxDepth = built.pdu.depth;
      inputs.push({ pdu: built.pdu });
      users.push(userId);
    }
    const outcomes = await receiveRemoteEvents(resident, roomId, inputs);
    const bad = outcomes.find((o) => o.status !== "accepted");
    if (bad) throw new Error(`a member's join was not accepted: ${JSON.stringify(bad)}`);
  }
  return users;
}
