import { domainOf, isPlainObject, prevEventIds } from "../events/types.js";
import { stateKeyOf } from "../store/state-groups.js";
import { loadRoom } from "../rooms/room-cache.js";
import { fedPath } from "../../federation/client.js";
import { FederationError } from "../../federation/errors.js";
import { pdusForServer, roomForServer, transactionOf } from "./server-visibility.js";
import { backfillWalk } from "./dag-walk.js";
import { RemoteRoomFetcher } from "./fetch-events.js";
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
export async function backfillForServer(s, origin, roomId, from, limit) {
    const room = await roomForServer(s, roomId, origin, { allowPartialState: true });
    const events = await backfillWalk(s, room, from.slice(0, MAX_FROM), Math.max(0, Math.min(limit, BACKFILL_LIMIT)));
    return transactionOf(s, await pdusForServer(s, origin, room, events));
}
const states = new WeakMap();
function stateOf(s) {
    let st = states.get(s);
    if (!st)
        states.set(s, (st = { running: new Map(), quietUntil: new Map() }));
    return st;
}
/** The prev_events of the room's earliest events that are not in its DAG here: where its history stops. */
async function backwardExtremities(s, roomId) {
    const earliest = await s.rooms.events.earliestInDag(roomId, EARLIEST);
    const prevs = [...new Set(earliest.flatMap((e) => prevEventIds(e.pdu)))];
    if (prevs.length === 0)
        return [];
    const known = await s.rooms.events.getMany(prevs);
    return prevs.filter((id) => {
        const e = known.get(id);
        return !e || e.outlier;
    });
}
/** The other servers with a member joined to the room, longest-standing first (the creator's first). */
async function serversToAsk(s, room) {
    const ids = [...room.state].filter(([k]) => k.startsWith(stateKeyOf("m.room.member", ""))).map(([, id]) => id);
    const members = [...(await s.rooms.events.getMany(ids)).values()].filter((e) => e.pdu.content["membership"] === "join");
    members.sort((a, b) => a.pdu.depth - b.pdu.depth);
    const servers = new Set();
    const creator = domainOf(room.createEvent.sender);
    const joined = new Set(members.map((e) => domainOf(e.pdu.state_key ?? "")));
    if (creator && joined.has(creator))
        servers.add(creator);
    for (const e of members) {
        const d = domainOf(e.pdu.state_key ?? "");
        if (d)
            servers.add(d);
    }
    servers.delete(s.config.server_name);
    return [...servers];
}
/**
 * Fetches older history of a room from a server in it, if this server's history of the room stops before
 * the room's start. Returns how many events entered the timeline (0: nothing more to be had now).
 * Concurrent calls for a room share one fetch; a room that yielded nothing is left alone for a while.
 */
export function backfillRoom(s, roomId) {
    const st = stateOf(s);
    const running = st.running.get(roomId);
    if (running)
        return running;
    if ((st.quietUntil.get(roomId) ?? 0) > Date.now())
        return Promise.resolve(0);
    const work = fetchBackfill(s, roomId)
        .catch((err) => {
        s.log.warn({ err, roomId }, "backfill failed");
        return 0;
    })
        .then((n) => {
        if (n === 0)
            st.quietUntil.set(roomId, Date.now() + RETRY_AFTER_MS);
        else
            st.quietUntil.delete(roomId);
        return n;
    })
        .finally(() => st.running.delete(roomId));
    st.running.set(roomId, work);
    return work;
}
async function fetchBackfill(s, roomId) {
    const room = await loadRoom(s, roomId);
    if (!room)
        return 0;
    const from = await backwardExtremities(s, roomId);
    if (from.length === 0)
        return 0;
    for (const server of (await serversToAsk(s, room)).slice(0, MAX_SERVERS)) {
        const fetcher = new RemoteRoomFetcher(s, room, server);
        try {
            const answer = await fetcher.get(fedPath `/_matrix/federation/v1/backfill/${roomId}`, { v: from.slice(0, MAX_FROM), limit: BACKFILL_LIMIT }, 16 * 1024 * 1024);
            const pdus = isPlainObject(answer) ? answer["pdus"] : undefined;
            if (!Array.isArray(pdus))
                throw new FederationError("invalid_response", server, "no pdus list");
            const outcomes = await fetcher.receivePulled(pdus.slice(0, BACKFILL_LIMIT), { backfill: true });
            const placed = outcomes.filter((o) => o.status === "accepted" || o.status === "soft_failed").length;
            if (placed > 0)
                return placed;
        }
        catch (err) {
            s.log.info({ err, roomId, server }, "backfill from a server failed");
        }
    }
    return 0;
}
