// A member event pushed (PUT /send) for a room whose state this server does not hold, about one of our
// users whose membership there is out of band (an invite received, a knock made through another server):
// the end of it — a knock refused or a ban, an invite withdrawn (a leave or ban by its inviter, citing it). It cannot be
// placed in a room graph this server lacks, so once its format, content hash and signatures check out it
// is kept out of band like the invite or knock it answers, and the user's /sync shows them out of the room.
// Anything else for such a room is ignored, as before. Spec: Server-Server API "Knocking Rooms",
// "Inviting to a room", "Checks performed on receipt of a PDU" (format, hashes, signatures).
import type { Services } from "../../services.ts";
import type { Pdu } from "../../events/types.ts";
import { authEventIds, domainOf, isPlainObject } from "../../events/types.ts";
import { checkContentHash, eventIdOf } from "../../events/hashes.ts";
import { validatePduFormat } from "../../events/validate.ts";
import { getRoomVersion } from "../../rooms/room-versions.ts";
import { checkSignatures } from "../../rooms/pipeline/checks.ts";
import { commitOutOfBandMembership } from "../../rooms/pipeline/out-of-band.ts";

export interface OutOfBandUpdate {
  eventId: string;
  /** Why it was not kept; undefined when it was. */
  error?: string;
}

/**
 * Takes `json` (a PDU `origin` sent for `roomId`, a room with no state here) when it ends an out-of-band
 * invite or knock of a local user; undefined when it is not such an event (the caller ignores it).
 */
export async function receiveOutOfBandUpdate(s: Services, origin: string, roomId: string, json: unknown): Promise<OutOfBandUpdate | undefined> {
  if (!isPlainObject(json) || json.type !== "m.room.member" || typeof json.state_key !== "string" || !isPlainObject(json.content)) return undefined;
  const membership = json.content.membership;
  if (membership !== "leave" && membership !== "ban") return undefined;
  if (domainOf(json.state_key) !== s.config.server_name) return undefined;
  const row = await s.rooms.store.membership(roomId, json.state_key);
  if (row?.membership !== "invite" && row?.membership !== "knock") return undefined;
  const version = getRoomVersion((await s.rooms.store.getRoom(roomId))?.roomVersion ?? "");
  if (!version) return undefined;
  let pdu: Pdu;
  let eventId: string;
  try {
    pdu = validatePduFormat(json, version);
    eventId = eventIdOf(pdu, version);
  } catch {
    return undefined;
  }
  if (domainOf(pdu.sender) !== origin) return { eventId, error: "The sender is not a user of the origin server" };
  // An invite is withdrawn only by its inviter, citing it (as Synapse: who else may, only the room's
  // state would tell, which this server does not hold). Anything else is ignored: the invite stands.
  if (row.membership === "invite" && (pdu.sender !== row.sender || !authEventIds(pdu).includes(row.eventId))) return undefined;
  if (!checkContentHash(pdu)) return { eventId, error: "The event's content hash does not match its content" };
  try {
    await checkSignatures(s, pdu, version);
  } catch (err) {
    return { eventId, error: `Signature check failed: ${(err as Error).message}` };
  }
  const { unsigned: _u, ...stored } = pdu;
  await commitOutOfBandMembership(s, { roomId, version, eventId, pdu: stored as Pdu });
  return { eventId };
}
