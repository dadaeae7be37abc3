// PDUs a server pushed to us (PUT /send), one room at a time, into the pipeline (receiveRemoteEvents).
// PDUs whose prev_events and auth events are known go in one commit. For one with a gap: the events
// between our forward extremities and it are asked of its origin (/get_missing_events) and placed (the
// oldest of those, if its own prev_events are unknown, with the state after them fetched: fetch-events.ts
// `receivePulled`); missing auth events are fetched (/event_auth). A pushed PDU whose prev_events are still
// missing then is refused, as Synapse refuses it ("Your server isn't divulging details about prev_events
// referenced in this event."): its origin has no excuse not to give them, and the state at an event this
// server lacks is never asked for it — else a PDU that became the room's only tip would make us trust its
// sender's word for the room's state (a sticky event, MSC4354, is kept as an outlier instead:
// sticky/received-outlier.ts). Gap filling runs one at a time per room (a second transaction for
// the room waits and finds the gap filled), bounded by the fetcher's budget; its failures are the PDU's
// error, never the transaction's.
// Spec: Server-Server API "Checks performed on receipt of a PDU", "Backfilling and retrieving missing
// events" ("the receiving server ... SHOULD request the missing events"), "Room State".
import type { Services } from "../services.ts";
import { prevEventIds } from "../events/types.ts";
import { loadRoom, type RoomSnapshot } from "../rooms/room-cache.ts";
import { receiveRemoteEvents, type RemoteOutcome } from "../rooms/receive.ts";
import type { StoredEvent } from "../store/events.ts";
import { RemoteRoomFetcher, type ParsedPdu } from "./fetch-events.ts";
import { fetchMissingEvents } from "./missing-events.ts";
import { authIdsOf } from "./dag-walk.ts";
import { serverInRoom } from "./server-visibility.ts";
import { keepStickyOutlier } from "../sticky/received-outlier.ts";
import { reportRefusal } from "./refusals.ts";

/** A PDU's result in the /send answer: undefined when handled, else why not. */
export type PduResult = string | undefined;

/**
 * What a pipeline outcome says to the sending server. An error only for an event that could not be
 * processed (a bad signature or format, a state that cannot be resolved, prev_events unknown); one the
 * auth rules rejected or soft-failed was processed, and is answered {} like an accepted one (as Synapse:
 * the sender would otherwise retry it or complain).
 */
export function resultOf(o: RemoteOutcome | undefined): PduResult {
  if (!o) return "The event was not processed";
  if (o.status === "dropped") return o.reason;
  if (o.status === "outlier") return "The event's prev_events are unknown";
  return undefined;
}

const inDag = (e: StoredEvent | undefined) => e !== undefined && !e.outlier;

/** The answer for a pushed PDU whose auth events could not be had (Synapse's words). */
export const AUTH_EVENTS_MISSING = "Auth events could not be found";

/** The answer for a pushed PDU whose prev_events its origin would not give (Synapse's words). */
export const PREVS_WITHHELD = "Your server isn't divulging details about prev_events referenced in this event.";

/**
 * Receives the PDUs `origin` pushed for one room (already parsed as events of it), in order. Returns each
 * one's result by event id.
 */
export async function ingestPdus(s: Services, origin: string, room: RoomSnapshot, pdus: readonly ParsedPdu[]): Promise<Map<string, PduResult>> {
  const results = new Map<string, PduResult>();
  // Synapse: a server not in the room (no local user joined) ignores what is sent for it.
  if (!(await serverInRoom(s, room, s.config.server_name))) {
    for (const p of pdus) {
      results.set(p.eventId, "This server is not in the room");
      reportRefusal(s, { origin, roomId: room.roomId, eventId: p.eventId, rule: "not_in_room", outcome: "refused" });
    }
    return results;
  }
  const refsOf = (p: ParsedPdu) => [p.eventId, ...prevEventIds(p.pdu), ...authIdsOf(p.pdu, room)];
  let known = await s.rooms.events.getMany(pdus.flatMap(refsOf));
  let batch: ParsedPdu[] = [];
  const inBatch = new Set<string>();
  const flush = async () => {
    if (batch.length === 0) return;
    const outcomes = await receiveRemoteEvents(s, room.roomId, batch.map((p) => ({ pdu: p.pdu })), { origin });
    batch.forEach((p, i) => results.set(p.eventId, resultOf(outcomes[i])));
    batch = [];
    inBatch.clear();
  };
  for (const p of pdus) {
    const complete =
      inDag(known.get(p.eventId)) ||
      (prevEventIds(p.pdu).every((id) => inDag(known.get(id)) || inBatch.has(id)) && authIdsOf(p.pdu, room).every((id) => known.has(id) || inBatch.has(id)));
    if (complete) {
      batch.push(p);
      inBatch.add(p.eventId);
      continue;
    }
    await flush();
    results.set(p.eventId, await s.processState.gapLanes.run(room.roomId, () => fillGapAndReceive(s, origin, room.roomId, p)));
    known = await s.rooms.events.getMany(pdus.flatMap(refsOf));
  }
  await flush();
  return results;
}

/** Receives one pushed PDU whose prev_events or auth events this server lacks, fetching them first. */
async function fillGapAndReceive(s: Services, origin: string, roomId: string, p: ParsedPdu): Promise<PduResult> {
  const room = await loadRoom(s, roomId);
  if (!room) return "Unknown room";
  const prevs = prevEventIds(p.pdu);
  const refs = [p.eventId, ...prevs, ...authIdsOf(p.pdu, room)];
  let stored = await s.rooms.events.getMany(refs);
  if (inDag(stored.get(p.eventId))) return undefined; // another transaction filled this gap meanwhile
  const fetcher = new RemoteRoomFetcher(s, room, origin);
  try {
    const missing = prevs.filter((id) => !inDag(stored.get(id)));
    if (missing.length > 0) {
      // Only events above the oldest this server has are asked for: older history is backfill's.
      const minDepth = (await s.rooms.events.minDepth(roomId)) ?? 0;
      if (p.pdu.depth > minDepth) {
        try {
          const pulled = await fetchMissingEvents(fetcher, p, [...room.extremities, ...prevs.filter((id) => inDag(stored.get(id)))], minDepth);
          await fetcher.receivePulled(pulled, { exclude: new Set([p.eventId]) });
        } catch (err) {
          // The PDU is refused below.
          s.log.info({ err, roomId, eventId: p.eventId, origin }, "get_missing_events failed");
        }
        stored = await s.rooms.events.getMany(refs);
      }
    }
    // Refused (not stored): the state at a missing event is not asked for (see the module comment).
    if (prevs.some((id) => !inDag(stored.get(id)))) {
      // MSC4354: an old sticky event its sender's server still pushes is kept apart from the DAG.
      if (await keepStickyOutlier(s, fetcher, origin, room, p)) return undefined;
      reportRefusal(s, { origin, roomId, eventId: p.eventId, rule: "prev_events_withheld", outcome: "refused", detail: "its prev_events could not be fetched" });
      return PREVS_WITHHELD;
    }
    if (authIdsOf(p.pdu, room).some((id) => !stored.has(id))) {
      await fetcher.tryFetchAuthChain(p.eventId);
      stored = await s.rooms.events.getMany(refs);
      // Not stored (they may exist), as Synapse refuses it: "Auth events could not be found".
      if (authIdsOf(p.pdu, room).some((id) => !stored.has(id))) {
        reportRefusal(s, { origin, roomId, eventId: p.eventId, rule: "auth_events_missing", outcome: "refused", detail: AUTH_EVENTS_MISSING });
        return AUTH_EVENTS_MISSING;
      }
    }
    const [outcome] = await receiveRemoteEvents(s, roomId, [{ pdu: p.pdu }], { origin });
    return resultOf(outcome);
  } catch (err) {
    s.log.info({ err, roomId, eventId: p.eventId, origin }, "cannot fill the gap before a received event");
    return `Cannot fetch the events this event needs from ${origin}: ${(err as Error).message}`;
  }
}
