import { prevEventIds } from "../events/types.js";
import { loadRoom } from "../rooms/room-cache.js";
import { KeyedLanes } from "../rooms/lanes.js";
import { receiveRemoteEvents } from "../rooms/receive.js";
import { RemoteRoomFetcher } from "./fetch-events.js";
import { fetchMissingEvents } from "./missing-events.js";
import { authIdsOf } from "./dag-walk.js";
import { serverInRoom } from "./server-visibility.js";
const gapLanes = new WeakMap();
function lanesOf(s) {
    let l = gapLanes.get(s);
    if (!l)
        gapLanes.set(s, (l = new KeyedLanes()));
    return l;
}
/** What a pipeline outcome says to the sending server. */
export function resultOf(o) {
    if (!o)
        return "The event was not processed";
    if (o.status === "rejected" || o.status === "dropped")
        return o.reason;
    if (o.status === "outlier")
        return "The event's prev_events are unknown";
    return undefined;
}
const inDag = (e) => e !== undefined && !e.outlier;
/**
 * Receives the PDUs `origin` pushed for one room (already parsed as events of it), in order. Returns each
 * one's result by event id.
 */
export async function ingestPdus(s, origin, room, pdus) {
    const results = new Map();
    // Synapse: a server not in the room (no local user joined) ignores what is sent for it.
    if (!(await serverInRoom(s, room, s.config.server_name))) {
        for (const p of pdus)
            results.set(p.eventId, "This server is not in the room");
        return results;
    }
    const refsOf = (p) => [p.eventId, ...prevEventIds(p.pdu), ...authIdsOf(p.pdu, room)];
    let known = await s.rooms.events.getMany(pdus.flatMap(refsOf));
    let batch = [];
    const inBatch = new Set();
    const flush = async () => {
        if (batch.length === 0)
            return;
        const outcomes = await receiveRemoteEvents(s, room.roomId, batch.map((p) => ({ pdu: p.pdu })));
        batch.forEach((p, i) => results.set(p.eventId, resultOf(outcomes[i])));
        batch = [];
        inBatch.clear();
    };
    for (const p of pdus) {
        const complete = inDag(known.get(p.eventId)) ||
            (prevEventIds(p.pdu).every((id) => inDag(known.get(id)) || inBatch.has(id)) && authIdsOf(p.pdu, room).every((id) => known.has(id) || inBatch.has(id)));
        if (complete) {
            batch.push(p);
            inBatch.add(p.eventId);
            continue;
        }
        await flush();
        results.set(p.eventId, await lanesOf(s).run(room.roomId, () => fillGapAndReceive(s, origin, room.roomId, p)));
        known = await s.rooms.events.getMany(pdus.flatMap(refsOf));
    }
    await flush();
    return results;
}
/** Receives one pushed PDU whose prev_events or auth events this server lacks, fetching them first. */
async function fillGapAndReceive(s, origin, roomId, p) {
    const room = await loadRoom(s, roomId);
    if (!room)
        return "Unknown room";
    const prevs = prevEventIds(p.pdu);
    const refs = [p.eventId, ...prevs, ...authIdsOf(p.pdu, room)];
    let stored = await s.rooms.events.getMany(refs);
    if (inDag(stored.get(p.eventId)))
        return undefined; // another transaction filled this gap meanwhile
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
                }
                catch (err) {
                    // The state fallback below still applies.
                    s.log.info({ err, roomId, eventId: p.eventId, origin }, "get_missing_events failed");
                }
                stored = await s.rooms.events.getMany(refs);
            }
        }
        if (authIdsOf(p.pdu, room).some((id) => !stored.has(id))) {
            await fetcher.fetchAuthChain(p.eventId);
            stored = await s.rooms.events.getMany(refs);
        }
        const prevStates = new Map();
        for (const prev of prevs)
            if (!inDag(stored.get(prev)))
                prevStates.set(prev, await fetcher.stateAfter(prev));
        const [outcome] = await receiveRemoteEvents(s, roomId, [prevStates.size > 0 ? { pdu: p.pdu, prevStates } : { pdu: p.pdu }]);
        return resultOf(outcome);
    }
    catch (err) {
        s.log.info({ err, roomId, eventId: p.eventId, origin }, "cannot fill the gap before a received event");
        return `Cannot fetch the events this event needs from ${origin}: ${err.message}`;
    }
}
