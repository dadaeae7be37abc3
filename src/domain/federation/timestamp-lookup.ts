// GET /_matrix/federation/v1/timestamp_to_event/{roomId}, both ways. Serving: the event of this server's
// timeline closest to `ts` in `dir` (as the client endpoint orders them), to a server in the room that the
// room's ACL allows; 404 when there is none. Asking: the servers in the room, longest-standing first, until
// one names an event; the answer is untrusted — an event id of the room's format whose timestamp lies in
// the direction asked — and the event itself is fetched and placed as backfilled history (backfill.ts),
// so only an event that passes every check is ever returned.
// Spec: Server-Server API "GET /_matrix/federation/v1/timestamp_to_event/{roomId}".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { StoredEvent } from "../store/events.ts";
import type { RoomSnapshot } from "../rooms/room-cache.ts";
import { isPlainObject } from "../events/types.ts";
import { fedPath } from "../../federation/client.ts";
import { roomForServer } from "./server-visibility.ts";
import { backfillEvent, serversToAsk } from "./backfill.ts";

export type Direction = "b" | "f";

/** Servers asked, one after another. */
const MAX_SERVERS = 5;
const TIMEOUT_MS = 10_000;

export const inDirection = (eventTs: number, ts: number, dir: Direction) => (dir === "f" ? eventTs >= ts : eventTs <= ts);

export async function timestampToEventForServer(s: Services, origin: string, roomId: string, ts: number, dir: Direction): Promise<{ event_id: string; origin_server_ts: number }> {
  await roomForServer(s, roomId, origin, { allowPartialState: true });
  const [found] = await s.rooms.events.byTimestamp(roomId, ts, dir, 1);
  if (!found) throw new MatrixError("M_NOT_FOUND", `Unable to find event from ${ts} in direction ${dir}`, 404);
  return { event_id: found.eventId, origin_server_ts: found.pdu.origin_server_ts };
}

/** The event the other servers in the room find closest to `ts`, placed in our timeline; undefined when none does. */
export async function timestampToEventElsewhere(s: Services, room: RoomSnapshot, ts: number, dir: Direction): Promise<StoredEvent | undefined> {
  const servers = await serversToAsk(s, room);
  for (const server of servers.slice(0, MAX_SERVERS)) {
    let answer: unknown;
    try {
      answer = await s.federation.getJson(server, fedPath`/_matrix/federation/v1/timestamp_to_event/${room.roomId}`, { ts: String(ts), dir }, { timeoutMs: TIMEOUT_MS, maxBytes: 64 * 1024 });
    } catch (err) {
      s.log.info({ server, roomId: room.roomId, err: (err as Error).message }, "a server could not look up an event by timestamp");
      continue;
    }
    const eventId = isPlainObject(answer) ? answer.event_id : undefined;
    if (typeof eventId !== "string" || !eventId.startsWith("$") || eventId.length > 255) continue;
    // The servers that know the event best first: the one that named it.
    const event = await backfillEvent(s, room, [server, ...servers.filter((x) => x !== server)], eventId);
    if (event && inDirection(event.pdu.origin_server_ts, ts, dir)) return event;
  }
  return undefined;
}
