import { MatrixError } from "../errors.js";
import { eventIdOf, roomIdOf } from "../events/hashes.js";
import { isPlainObject } from "../events/types.js";
import { getRoomVersion } from "./room-versions.js";
import { loadRoom } from "./room-cache.js";
import { RemotePlanner } from "./pipeline/plan-remote.js";
import { commit } from "./pipeline/commit.js";
import { stateKeyOf } from "../store/state-groups.js";
import { isPartialState } from "../federation/partial-state/flag.js";
/** A room first known from its create event: the empty room it founds, and its rooms row. */
function roomFromCreate(s, roomId, inputs) {
    const index = inputs.findIndex((i) => isPlainObject(i.pdu) && i.pdu["type"] === "m.room.create" && i.pdu["state_key"] === "");
    if (index < 0)
        throw new MatrixError("M_NOT_FOUND", `Unknown room ${roomId} and no create event to start it from`, 404);
    const create = inputs[index].pdu;
    const versionId = isPlainObject(create.content) && typeof create.content["room_version"] === "string" ? create.content["room_version"] : "1";
    const version = getRoomVersion(versionId);
    if (!version)
        throw new MatrixError("M_UNSUPPORTED_ROOM_VERSION", `Room version ${versionId} is not supported`, 400);
    let createEventId;
    try {
        createEventId = eventIdOf(create, version);
        if (roomIdOf(create, version) !== roomId)
            throw new Error("the create event founds another room");
    }
    catch (err) {
        throw new MatrixError("M_BAD_JSON", `Bad create event: ${err.message}`, 400);
    }
    const room = { roomId, version, state: new Map(), stateGroup: undefined, extremities: [], maxDepth: 0, createEvent: create, createEventId };
    const row = { roomId, roomVersion: version.id, creator: String(create.sender), isPublic: false };
    // The row may exist already, holding only an out-of-band membership (an invite received over federation).
    return { room, index, alsoWrite: (tx) => s.rooms.store.upsertRoom(tx, row, s.clock.now()) };
}
const STORED_OK = new Set(["accepted", "duplicate"]);
/**
 * Checks, places and stores remote events of one room, all in one commit. Returns each input's outcome:
 * accepted, soft_failed, outlier and rejected events are stored; dropped and duplicate ones are not.
 * With `backfill`, the events are older history (see RemotePlannerOptions).
 */
export function receiveRemoteEvents(s, roomId, inputs, opts = {}) {
    return s.rooms.lanes.run(roomId, async () => {
        const known = await loadRoom(s, roomId);
        const fresh = known ? undefined : roomFromCreate(s, roomId, inputs);
        // A room joined with partial state is checked as such (plan-remote.ts `partialState`).
        const partialState = opts.partialState ?? (known !== undefined && (await isPartialState(s, roomId)));
        const planner = new RemotePlanner(s, known ?? fresh.room, { ...opts, partialState });
        const outcomes = await planner.addAll(inputs);
        // A new room exists only once its create event is accepted, or stored and part of the room's state.
        if (fresh) {
            const status = outcomes[fresh.index]?.status;
            const founded = status === "accepted" || (status === "outlier" && planner.currentState.get(stateKeyOf("m.room.create", "")) === fresh.room.createEventId);
            if (!founded)
                return outcomes;
        }
        if (opts.mustAccept?.some((i) => !STORED_OK.has(outcomes[i].status)))
            return outcomes;
        const extra = opts.alsoWrite;
        const plan = planner.plan(extra
            ? async (tx) => {
                await fresh?.alsoWrite(tx);
                await extra(tx, plan);
            }
            : fresh?.alsoWrite);
        if (plan)
            await commit(s, plan);
        return outcomes;
    });
}
