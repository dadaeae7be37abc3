import { stateBeforeEvent } from "../rooms/state-before.js";
import { MatrixError } from "../errors.js";
import { pdusForServer, roomForServer, transactionOf } from "./server-visibility.js";
import { authChainOf } from "./dag-walk.js";
const eventNotFound = () => new MatrixError("M_NOT_FOUND", "Event not found", 404);
/** A stored, not rejected event of the room, or 404. */
async function eventInRoom(s, room, eventId) {
    const e = await s.rooms.events.get(eventId);
    if (!e || e.roomId !== room.roomId || e.rejectedReason !== null)
        throw eventNotFound();
    return e;
}
/** GET /event/{eventId}: one event, as the origin may have it (redacted when it may not see it). */
export async function eventForServer(s, origin, eventId) {
    const e = await s.rooms.events.get(eventId);
    if (!e || e.rejectedReason !== null)
        throw eventNotFound();
    const room = await roomForServer(s, e.roomId, origin);
    return transactionOf(s, await pdusForServer(s, origin, room, [e]));
}
/** GET /event_auth/{roomId}/{eventId}: the auth chain of that one event (not the room's whole state). */
export async function eventAuthForServer(s, origin, roomId, eventId) {
    const room = await roomForServer(s, roomId, origin);
    const e = await eventInRoom(s, room, eventId);
    return { auth_chain: await pdusForServer(s, origin, room, await authChainOf(s, room, [e]), { checkVisibility: false }) };
}
/** The state before `e` (404 for an outlier: its state is not known here). */
async function stateBefore(s, e) {
    if (e.stateGroup === null)
        throw new MatrixError("M_NOT_FOUND", `State not known at event ${e.eventId}`, 404);
    return stateBeforeEvent(e, await s.rooms.stateGroups.get(e.stateGroup));
}
/** The state before `eventId` and its auth chain, as stored events (what /state and /state_ids answer). */
async function stateAt(s, origin, roomId, eventId) {
    const room = await roomForServer(s, roomId, origin);
    const e = await eventInRoom(s, room, eventId);
    const ids = [...(await stateBefore(s, e)).values()];
    const found = await s.rooms.events.getMany(ids);
    const state = ids.map((id) => found.get(id)).filter((x) => x !== undefined);
    return { room, state, authChain: await authChainOf(s, room, state) };
}
/** GET /state_ids/{roomId}?event_id=: the ids of the state before the event and of its auth chain. */
export async function stateIdsForServer(s, origin, roomId, eventId) {
    const { state, authChain } = await stateAt(s, origin, roomId, eventId);
    return { pdu_ids: state.map((e) => e.eventId), auth_chain_ids: authChain.filter((e) => e.rejectedReason === null).map((e) => e.eventId) };
}
/** GET /state/{roomId}?event_id=: the state before the event and its auth chain, as PDUs. */
export async function stateForServer(s, origin, roomId, eventId) {
    const { room, state, authChain } = await stateAt(s, origin, roomId, eventId);
    return {
        pdus: await pdusForServer(s, origin, room, state, { checkVisibility: false }),
        auth_chain: await pdusForServer(s, origin, room, authChain, { checkVisibility: false }),
    };
}
