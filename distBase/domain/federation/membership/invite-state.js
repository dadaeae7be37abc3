import { isPlainObject } from "../../events/types.js";
import { MatrixError } from "../../errors.js";
import { roomIdOf } from "../../events/hashes.js";
import { validatePduFormat } from "../../events/validate.js";
import { stateKeyOf } from "../../store/state-groups.js";
import { STRIPPED_STATE_TYPES } from "../../rooms/stripped-state.js";
import { checkSignatures } from "../../rooms/pipeline/checks.js";
import { pdusForServer } from "../server-visibility.js";
/** Most entries accepted in a received `invite_room_state` (Synapse's default list has 8 types). */
export const MAX_INVITE_STATE = 50;
/**
 * The invite_room_state this server sends with an invite by `inviter` into `room`; without an inviter,
 * the knock_room_state it answers a send_knock with.
 */
export async function inviteRoomState(s, room, inviter) {
    const ids = [...STRIPPED_STATE_TYPES.map((t) => stateKeyOf(t, "")), ...(inviter ? [stateKeyOf("m.room.member", inviter)] : [])]
        .map((k) => room.state.get(k))
        .filter((id) => id !== undefined);
    const found = await s.rooms.events.getMany(ids);
    return pdusForServer(s, s.config.server_name, room, ids.map((id) => found.get(id)).filter((e) => e !== undefined), { checkVisibility: false });
}
const invalid = (msg) => new MatrixError("M_INVALID_PARAM", `invite_room_state: ${msg}`, 400);
/** Looks like a PDU rather than a stripped state event (a stripped one has four keys only). */
function isFullPdu(e) {
    return "signatures" in e || "hashes" in e || "auth_events" in e;
}
/** Checks one received stripped-state entry (M_INVALID_PARAM when it fails); returns it. */
async function checkEntry(s, e, v, roomId) {
    if (!isPlainObject(e))
        throw invalid("entries must be objects");
    if (typeof e.type !== "string" || typeof e.state_key !== "string" || typeof e.sender !== "string" || !e.sender.startsWith("@") || !isPlainObject(e.content))
        throw invalid("entries must have a type, state_key, sender and content");
    if (isFullPdu(e)) {
        // Sent as a PDU: then it must be one, of this room, signed by its sender's server.
        let pdu;
        try {
            pdu = validatePduFormat(e, v);
        }
        catch (err) {
            throw invalid(`an entry is not formatted for room version ${v.id}: ${err.message}`);
        }
        if (roomIdOf(pdu, v) !== roomId)
            throw invalid("an entry belongs to another room");
        try {
            await checkSignatures(s, pdu, v);
        }
        catch (err) {
            throw invalid(`an entry fails its signature check: ${err.message}`);
        }
    }
    return e;
}
/** Checks a received invite_room_state; returns its entries (an absent list is an empty one before v12). */
export async function checkReceivedInviteState(s, raw, v, roomId) {
    if (raw === undefined || raw === null)
        raw = [];
    if (!Array.isArray(raw))
        throw invalid("must be a list");
    if (raw.length > MAX_INVITE_STATE)
        throw invalid(`more than ${MAX_INVITE_STATE} entries`);
    const out = [];
    for (const e of raw)
        out.push(await checkEntry(s, e, v, roomId));
    // Room version 12 and later: the create event, as a PDU (its hash is the room id).
    if (v.roomIdIsCreateEventHash) {
        const create = out.find((e) => e.type === "m.room.create" && e.state_key === "");
        if (!create)
            throw invalid("the m.room.create event is missing");
        if (!isFullPdu(create))
            throw invalid("the m.room.create event must be a PDU in this room version");
    }
    return out;
}
/**
 * The entries of a send_knock answer's knock_room_state worth showing our client: those improperly
 * formatted or signed are left out (the spec's SHOULD), as is everything past the first MAX_INVITE_STATE.
 */
export async function keptKnockState(s, raw, v, roomId) {
    if (!Array.isArray(raw))
        return [];
    const out = [];
    for (const e of raw.slice(0, MAX_INVITE_STATE)) {
        try {
            out.push(await checkEntry(s, e, v, roomId));
        }
        catch (err) {
            s.log.info({ roomId, err: err.message }, "leaving out a knock_room_state entry");
        }
    }
    return out;
}
