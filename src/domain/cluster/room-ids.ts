// Room ids this process writes: with several events writers a new room is sharded by its id (cluster/
// topology.ts), so the process that creates a room (createRoom, an upgrade's replacement) picks an id it
// writes itself — random ids drawn until one falls in its share; in room versions whose id is the create
// event's hash (v12+), the create event is built again a millisecond later until its id does. With one
// writer (or on a process that writes no events: createRoom's requests are forwarded to a writer) the
// first draw is taken. Spec: Client-Server API "Room ids" (opaque), room version 12 (ids from hashes).
import { randomString } from "../ids.ts";
import type { Services } from "../services.ts";

/** Draws enough for any share: with n writers a draw misses with probability (n-1)/n. */
const MAX_DRAWS = 1000;

/** A new opaque room id (room versions 1–11) that this process writes. */
export function newOwnRoomId(s: Services): string {
  for (let i = 0; ; i++) {
    const id = `!${randomString(18)}:${s.config.server_name}`;
    if (s.topology.writesRoom(id) || !s.topology.isWriter("events") || i >= MAX_DRAWS) return id;
  }
}

/**
 * The first of build(0), build(1), ... whose room id this process writes (room ids from create-event
 * hashes): `offset` is added to the create event's origin_server_ts.
 */
export async function ownCreateEvent<T>(s: Services, build: (offsetMs: number) => Promise<T>, roomIdOf: (built: T) => string): Promise<T> {
  for (let i = 0; ; i++) {
    const built = await build(i);
    if (s.topology.writesRoom(roomIdOf(built)) || !s.topology.isWriter("events") || i >= MAX_DRAWS) return built;
  }
}
