import { isPlainObject } from "../../events/types.js";
import { eventIdOf } from "../../events/hashes.js";
import { fedPath } from "../../../federation/client.js";
import { FederationError } from "../../../federation/errors.js";
import { stateKeyOf } from "../../store/state-groups.js";
import { receiveRemoteEvents } from "../../rooms/receive.js";
import { loadRoom } from "../../rooms/room-cache.js";
import { writeMemberships } from "../../rooms/pipeline/commit.js";
import { clearPartialState, partialStateOf, partialStateRooms } from "./flag.js";
import { recheckSinceJoin, writeRecheck } from "./recheck.js";
const STATE_MAX_BYTES = 200 * 1024 * 1024;
const STATE_TIMEOUT_MS = 180_000;
const MAX_STATE_EVENTS = 200_000;
const RETRY_MIN_MS = 1_000;
const RETRY_MAX_MS = 5 * 60_000;
const perServices = new WeakMap();
function running(s) {
    let r = perServices.get(s);
    if (!r)
        perServices.set(s, (r = { rooms: new Set(), stopped: false }));
    return r;
}
const bad = (server, msg) => new FederationError("invalid_response", server, msg);
/** The entries of the full state at the join that current state lacks, as the resident's /state gives them. */
async function fetchFullState(s, server, ps) {
    const room = await loadRoom(s, ps.roomId);
    if (!room)
        throw new Error("the room is gone");
    const answer = await s.federation.getJson(server, fedPath `/_matrix/federation/v1/state/${ps.roomId}`, { event_id: ps.joinEventId }, { maxBytes: STATE_MAX_BYTES, timeoutMs: STATE_TIMEOUT_MS });
    if (!isPlainObject(answer) || !Array.isArray(answer.pdus) || !Array.isArray(answer.auth_chain))
        throw bad(server, "/state answered no pdus and auth chain");
    if (answer.pdus.length + answer.auth_chain.length > MAX_STATE_EVENTS)
        throw bad(server, "/state answered too many events");
    const state = new Map();
    for (const e of answer.pdus) {
        if (!isPlainObject(e) || typeof e.type !== "string" || typeof e.state_key !== "string")
            throw bad(server, "/state answered an entry that is not a state event");
        try {
            state.set(stateKeyOf(e.type, e.state_key), eventIdOf(e, room.version));
        }
        catch {
            throw bad(server, "/state answered an event without an id");
        }
    }
    if (!state.has(stateKeyOf("m.room.create", "")))
        throw bad(server, "/state answered a state without a create event");
    return { pdus: answer.pdus, chain: answer.auth_chain, state };
}
/**
 * Completes current state and the state groups with `fill` (the entries of the full state at the join
 * already stored, e.g. fetched earlier as auth events), then checks again the events placed while the
 * state was partial (recheck.ts) and clears the flag in the commit that stores the outcome.
 */
async function completeAndRecheck(s, ps, fill) {
    const roomId = ps.roomId;
    await s.rooms.lanes.run(roomId, async () => {
        let room = await loadRoom(s, roomId);
        if (!room)
            return;
        const stored = await s.rooms.events.getMany([...fill.values()]);
        const changes = new Map();
        for (const [k, id] of fill) {
            const e = stored.get(id);
            if (!room.state.has(k) && e && e.rejectedReason === null)
                changes.set(k, id);
        }
        if (changes.size > 0) {
            await s.storage.sql.transaction(async (tx) => {
                await s.rooms.store.changeCurrentState(tx, roomId, changes);
                await writeMemberships(s, tx, roomId, changes, new Map());
                await s.rooms.stateGroups.completeSnapshots(tx, roomId, changes);
                tx.onSettled?.(() => s.rooms.cache.delete(roomId));
            });
            room = await loadRoom(s, roomId);
            if (!room)
                return;
        }
        const plan = await recheckSinceJoin(s, room, ps.joinEventId, fill);
        await s.storage.sql.transaction(async (tx) => {
            await writeRecheck(s, tx, roomId, plan);
            await clearPartialState(s, tx, roomId);
            tx.onSettled?.(() => s.rooms.cache.delete(roomId));
        });
        const rejected = plan.changed.filter((c) => c.rejectedReason !== null);
        if (rejected.length > 0)
            s.log.warn({ roomId, rejected: rejected.map((c) => c.event.eventId) }, "partial-state room: events received while partial are not authorised by the full state; rejected");
    });
}
/** One attempt through `server`: fetched, checked, committed. */
async function resyncThrough(s, server, ps) {
    const { pdus, chain, state } = await fetchFullState(s, server, ps);
    await receiveRemoteEvents(s, ps.roomId, [...chain, ...pdus].map((pdu) => ({ pdu, outlier: true })), {
        fillState: state,
        alsoWrite: async (tx, plan) => {
            const added = new Map();
            for (const [k, id] of plan.after.changes)
                if (id !== null && !plan.room.state.has(k))
                    added.set(k, id);
            await s.rooms.stateGroups.completeSnapshots(tx, ps.roomId, added);
        },
    });
    await completeAndRecheck(s, ps, state);
}
/** Resyncs one room until its state is complete (or the server stops). */
async function resyncRoom(s, roomId) {
    const r = running(s);
    let delay = RETRY_MIN_MS;
    while (!r.stopped) {
        const ps = await partialStateOf(s, roomId);
        if (!ps)
            return;
        for (const server of ps.servers) {
            if (r.stopped)
                return;
            try {
                await resyncThrough(s, server, ps);
                s.log.info({ roomId, server }, "partial-state room: full state fetched");
                return;
            }
            catch (err) {
                s.log.warn({ roomId, server, err: err.message }, "partial-state room: could not fetch the full state through this server");
            }
        }
        await new Promise((resolve) => setTimeout(resolve, delay).unref?.());
        delay = Math.min(delay * 2, RETRY_MAX_MS);
    }
}
/** Starts the resync of a room joined with partial state (once per room at a time). */
export function resyncInBackground(s, roomId) {
    const r = running(s);
    if (r.stopped || r.rooms.has(roomId))
        return;
    r.rooms.add(roomId);
    void resyncRoom(s, roomId)
        .catch((err) => s.log.error({ roomId, err }, "partial-state resync failed"))
        .finally(() => r.rooms.delete(roomId));
}
/** Background task: rooms still partial after a restart are resumed. */
export const resumePartialStateRooms = (s) => {
    const r = running(s);
    r.stopped = false;
    void partialStateRooms(s)
        .then((rooms) => {
        for (const ps of rooms)
            resyncInBackground(s, ps.roomId);
    })
        .catch((err) => s.log.error({ err }, "could not read the partial-state rooms"));
    return () => {
        r.stopped = true;
    };
};
