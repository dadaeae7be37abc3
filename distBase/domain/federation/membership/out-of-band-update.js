import { domainOf, isPlainObject } from "../../events/types.js";
import { checkContentHash, eventIdOf } from "../../events/hashes.js";
import { validatePduFormat } from "../../events/validate.js";
import { getRoomVersion } from "../../rooms/room-versions.js";
import { checkSignatures } from "../../rooms/pipeline/checks.js";
import { commitOutOfBandMembership } from "../../rooms/pipeline/out-of-band.js";
/**
 * Takes `json` (a PDU `origin` sent for `roomId`, a room with no state here) when it ends an out-of-band
 * invite or knock of a local user; undefined when it is not such an event (the caller ignores it).
 */
export async function receiveOutOfBandUpdate(s, origin, roomId, json) {
    if (!isPlainObject(json) || json.type !== "m.room.member" || typeof json.state_key !== "string" || !isPlainObject(json.content))
        return undefined;
    const membership = json.content.membership;
    if (membership !== "leave" && membership !== "ban")
        return undefined;
    if (domainOf(json.state_key) !== s.config.server_name)
        return undefined;
    const row = await s.rooms.store.membership(roomId, json.state_key);
    if (row?.membership !== "invite" && row?.membership !== "knock")
        return undefined;
    const version = getRoomVersion((await s.rooms.store.getRoom(roomId))?.roomVersion ?? "");
    if (!version)
        return undefined;
    let pdu;
    let eventId;
    try {
        pdu = validatePduFormat(json, version);
        eventId = eventIdOf(pdu, version);
    }
    catch {
        return undefined;
    }
    if (domainOf(pdu.sender) !== origin)
        return { eventId, error: "The sender is not a user of the origin server" };
    if (!checkContentHash(pdu))
        return { eventId, error: "The event's content hash does not match its content" };
    try {
        await checkSignatures(s, pdu, version);
    }
    catch (err) {
        return { eventId, error: `Signature check failed: ${err.message}` };
    }
    const { unsigned: _u, ...stored } = pdu;
    await commitOutOfBandMembership(s, { roomId, version, eventId, pdu: stored });
    return { eventId };
}
