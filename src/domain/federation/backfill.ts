// GET /_matrix/federation/v1/backfill/{roomId}, both ways. Serving: the given events and those before
// them (dag-walk.ts), at most `limit` (100 at most, as Synapse), each as the requesting server may see it.
// Fetching: when a local reader reaches the start of what this server has of a room (/messages), the
// prev_events of its earliest events that it lacks are asked of a server in the room; the answer is
// placed like other pulled events (fetch-events.ts) as backfilled history: stream positions below every
// other (commit.ts), so /messages returns it in order after what it had, and /sync never does.
// Outliers among the answer (state and auth events learnt with a join) are promoted into the timeline.
// Gaps in the middle of the timeline (left by the state fallback of ingest.ts) are not backfilled. One
// event by id can be backfilled too (what /timestamp_to_event finds on another server).
// Spec: Server-Server API "Backfilling and retrieving missing events".
import type { Services } from "../services.ts";
import { domainOf, isPlainObject, prevEventIds, type Pdu } from "../events/types.ts";
import type { StoredEvent } from "../store/events.ts";
import { stateKeyOf } from "../store/state-groups.ts";
import { loadRoom, type RoomSnapshot } from "../rooms/room-cache.ts";
import { fedPath } from "../../federation/client.ts";
import { FederationError } from "../../federation/errors.ts";
import { pdusForServer, roomForServer, transactionOf } from "./server-visibility.ts";
import { backfillWalk } from "./dag-walk.ts";
import { RemoteRoomFetcher } from "./fetch-events.ts";

/** Most events served per request (Synapse's cap) and asked for when fetching. */
export const BACKFILL_LIMIT = 100;
/** Most `v` ids accepted when serving, and sent when fetching. */
const MAX_FROM = 50;
/** Earliest events of a room looked at for missing prev_events. */
const EARLIEST = 20;
/** Servers asked, one after another, before giving up for now. */
const MAX_SERVERS = 3;
/** After a backfill that brought nothing, the room is not asked about again for this long. */
const RETRY_AFTER_MS = 30_000;

/** Serves /backfill to `origin` (404 unknown room, 403 when it has no member in it). */
export async function backfillForServer(s: Services, origin: string, roomId: string, from: string[], limit: number): Promise<{ origin: string; origin_server_ts: number; pdus: Pdu[] }> {
  const room = await roomForServer(s, roomId, origin, { allowPartialState: true });
  const events = await backfillWalk(s, room, from.slice(0, MAX_FROM), Math.max(0, Math.min(limit, BACKFILL_LIMIT)));
  return transactionOf(s, await pdusForServer(s, origin, room, events));
}

/** The prev_events of the room's earliest events that are not in its DAG here: where its history stops. */
async function backwardExtremities(s: Services, roomId: string): Promise<string[]> {
  const earliest = await s.rooms.events.earliestInDag(roomId, EARLIEST);
  const prevs = [...new Set(earliest.flatMap((e) => prevEventIds(e.pdu)))];
  if (prevs.length === 0) return [];
  const known = await s.rooms.events.getMany(prevs);
  return prevs.filter((id) => {
    const e = known.get(id);
    return !e || e.outlier;
  });
}

/** The other servers with a member joined to the room, longest-standing first (the creator's first). */
export async function serversToAsk(s: Services, room: RoomSnapshot): Promise<string[]> {
  const ids = [...room.state].filter(([k]) => k.startsWith(stateKeyOf("m.room.member", ""))).map(([, id]) => id);
  const members = [...(await s.rooms.events.getMany(ids)).values()].filter((e: StoredEvent) => e.pdu.content["membership"] === "join");
  members.sort((a, b) => a.pdu.depth - b.pdu.depth);
  const servers = new Set<string>();
  const creator = domainOf(room.createEvent.sender);
  const joined = new Set(members.map((e) => domainOf(e.pdu.state_key ?? "")));
  if (creator && joined.has(creator)) servers.add(creator);
  for (const e of members) {
    const d = domainOf(e.pdu.state_key ?? "");
    if (d) servers.add(d);
  }
  servers.delete(s.config.server_name);
  return [...servers];
}

/**
 * Fetches older history of a room from a server in it, if this server's history of the room stops before
 * the room's start. Returns how many events entered the timeline (0: nothing more to be had now).
 * Concurrent calls for a room share one fetch; a room that yielded nothing is left alone for a while.
 */
export function backfillRoom(s: Services, roomId: string): Promise<number> {
  const st = s.processState.backfills;
  const running = st.running.get(roomId);
  if (running) return running;
  if ((st.quietUntil.get(roomId) ?? 0) > Date.now()) return Promise.resolve(0);
  const work = fetchBackfill(s, roomId)
    .catch((err: unknown) => {
      s.log.warn({ err, roomId }, "backfill failed");
      return 0;
    })
    .then((n) => {
      if (n === 0) st.quietUntil.set(roomId, Date.now() + RETRY_AFTER_MS);
      else st.quietUntil.delete(roomId);
      return n;
    })
    .finally(() => st.running.delete(roomId));
  st.running.set(roomId, work);
  return work;
}

async function fetchBackfill(s: Services, roomId: string): Promise<number> {
  const room = await loadRoom(s, roomId);
  if (!room) return 0;
  const from = await backwardExtremities(s, roomId);
  if (from.length === 0) return 0;
  for (const server of (await serversToAsk(s, room)).slice(0, MAX_SERVERS)) {
    const fetcher = new RemoteRoomFetcher(s, room, server);
    try {
      const answer = await fetcher.get(fedPath`/_matrix/federation/v1/backfill/${roomId}`, { v: from.slice(0, MAX_FROM), limit: BACKFILL_LIMIT }, 16 * 1024 * 1024);
      const pdus = isPlainObject(answer) ? answer["pdus"] : undefined;
      if (!Array.isArray(pdus)) throw new FederationError("invalid_response", server, "no pdus list");
      const outcomes = await fetcher.receivePulled(pdus.slice(0, BACKFILL_LIMIT), { backfill: true });
      const placed = outcomes.filter((o) => o.status === "accepted" || o.status === "soft_failed").length;
      if (placed > 0) return placed;
    } catch (err) {
      s.log.info({ err, roomId, server }, "backfill from a server failed");
    }
  }
  return 0;
}

/**
 * One event of the room by id (GET /event from the first of `servers` that gives it), placed as
 * backfilled history like a /backfill answer (its gap before it fetched as for any pulled event; an
 * outlier held already is promoted). Returns it as stored in the timeline, or undefined when no server
 * gave it or it did not pass the pipeline's checks (Synapse's backfill_event_id).
 */
export async function backfillEvent(s: Services, room: RoomSnapshot, servers: readonly string[], eventId: string): Promise<StoredEvent | undefined> {
  const inTimeline = (e: StoredEvent | undefined) => (e && e.roomId === room.roomId && !e.outlier && e.rejectedReason === null && !e.softFailed ? e : undefined);
  const held = await s.rooms.events.get(eventId);
  if (held && !held.outlier) return inTimeline(held);
  for (const server of servers.slice(0, MAX_SERVERS)) {
    const fetcher = new RemoteRoomFetcher(s, room, server);
    try {
      const [got] = await fetcher.events([eventId]);
      if (!got) continue;
      await fetcher.receivePulled([got.pdu], { backfill: true });
      const placed = await s.rooms.events.get(eventId);
      if (placed && !placed.outlier) return inTimeline(placed);
    } catch (err) {
      s.log.info({ err, roomId: room.roomId, eventId, server }, "could not backfill an event from a server");
    }
  }
  return undefined;
}
