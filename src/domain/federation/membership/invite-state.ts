// `invite_room_state` / `knock_room_state`: the state that describes a room to an invitee's (or
// knocker's) server — built when this server invites a remote user or answers a send_knock (the
// stripped-state types of current state, the create event first, and the inviter's member event, all as
// full PDUs formatted for the room's version: spec v1.16, MSC4311), and checked when a remote server
// invites one of ours: each entry at least a stripped state event, and one sent as a PDU well formed, of
// this room, signed by its sender's server (kept redacted when its content hash fails); the m.room.create event present (as a PDU in room version
// 12, where its hash is the room id; Synapse 1.163 still sends it stripped before). In room version
// 12 a failure is 400 M_INVALID_PARAM, as the spec's PUT /invite says (v1.18, #2284); in versions 1–11 it is logged and the faulty
// entries left out (the spec's migration note: warn rather than error there). Stripped entries other than
// the create event are accepted in every version: Synapse 1.163 sends only the create event as a PDU
// (the spec lets servers "consider their local ecosystems" before refusing). Our clients always get the
// stripped form (sync/providers/events.ts): what came over federation is never passed through.
// Spec: Server-Server API "Inviting to a room" (PUT /invite v1 and v2, changed in v1.16), send_knock's
// knock_room_state; Client-Server API "Stripped state".
import type { Services } from "../../services.ts";
import type { Pdu } from "../../events/types.ts";
import { isPlainObject } from "../../events/types.ts";
import { MatrixError } from "../../errors.ts";
import { checkContentHash, roomIdOf } from "../../events/hashes.ts";
import { validatePduFormat } from "../../events/validate.ts";
import { redactEvent } from "../../events/redaction.ts";
import { stateKeyOf } from "../../store/state-groups.ts";
import { STRIPPED_STATE_TYPES } from "../../rooms/stripped-state.ts";
import { checkSignatures } from "../../rooms/pipeline/checks.ts";
import type { RoomSnapshot } from "../../rooms/room-cache.ts";
import type { RoomVersion } from "../../rooms/room-versions.ts";
import { pdusForServer } from "../server-visibility.ts";

/** Most entries accepted in a received `invite_room_state` (Synapse's default list has 8 types). */
export const MAX_INVITE_STATE = 50;

/**
 * The invite_room_state this server sends with an invite by `inviter` into `room`; without an inviter,
 * the knock_room_state it answers a send_knock with.
 */
export async function inviteRoomState(s: Services, room: RoomSnapshot, inviter?: string): Promise<Pdu[]> {
  const ids = [...STRIPPED_STATE_TYPES.map((t) => stateKeyOf(t, "")), ...(inviter ? [stateKeyOf("m.room.member", inviter)] : [])]
    .map((k) => room.state.get(k))
    .filter((id): id is string => id !== undefined);
  const found = await s.rooms.events.getMany(ids);
  return pdusForServer(s, s.config.server_name, room, ids.map((id) => found.get(id)).filter((e) => e !== undefined), { checkVisibility: false });
}

const refused = (msg: string) => new MatrixError("M_INVALID_PARAM", `invite_room_state: ${msg}`, 400);

/** Looks like a PDU rather than a stripped state event (a stripped one has four keys only). */
function isFullPdu(e: Record<string, unknown>): boolean {
  return "signatures" in e || "hashes" in e || "auth_events" in e;
}

/**
 * One received entry as it is kept (a PDU whose content hash fails is kept redacted, as the spec treats
 * any such event), or what is wrong with it.
 */
async function checkEntry(s: Services, e: unknown, v: RoomVersion, roomId: string): Promise<{ kept: Record<string, unknown> } | { fault: string }> {
  if (!isPlainObject(e)) return { fault: "an entry is not an object" };
  if (typeof e.type !== "string" || typeof e.state_key !== "string" || typeof e.sender !== "string" || !e.sender.startsWith("@") || !isPlainObject(e.content))
    return { fault: "an entry lacks a type, state_key, sender or content" };
  if (!isFullPdu(e)) {
    // Stripped: accepted, but for the create event of room version 12, whose hash is the room id.
    if (v.strictInviteRoomState && e.type === "m.room.create" && e.state_key === "") return { fault: "the m.room.create event is not a PDU" };
    return { kept: e };
  }
  // Sent as a PDU: then it must be one, of this room, signed by its sender's server.
  let pdu: Pdu;
  try {
    pdu = validatePduFormat(e, v);
  } catch (err) {
    return { fault: `an entry is not formatted for room version ${v.id}: ${(err as Error).message}` };
  }
  if (roomIdOf(pdu, v) !== roomId) return { fault: `an entry (${pdu.type}) belongs to another room` };
  try {
    await checkSignatures(s, pdu, v);
  } catch (err) {
    return { fault: `an entry (${pdu.type}) fails its signature check: ${(err as Error).message}` };
  }
  return { kept: checkContentHash(pdu) ? e : (redactEvent(pdu, v) as unknown as Record<string, unknown>) };
}

/**
 * The entries of a received list that pass, at most MAX_INVITE_STATE; each fault goes to `fault`, and a
 * list without the create event too.
 */
async function checkedEntries(s: Services, raw: unknown, v: RoomVersion, roomId: string, fault: (msg: string) => void): Promise<Record<string, unknown>[]> {
  if (raw === undefined || raw === null) raw = [];
  if (!Array.isArray(raw)) {
    fault("must be a list");
    return [];
  }
  const out: Record<string, unknown>[] = [];
  for (const e of raw.slice(0, MAX_INVITE_STATE)) {
    const checked = await checkEntry(s, e, v, roomId);
    if ("kept" in checked) out.push(checked.kept);
    else fault(checked.fault);
  }
  if (!out.some((e) => e.type === "m.room.create" && e.state_key === "")) fault("the m.room.create event is missing");
  return out;
}

/**
 * Checks a received invite_room_state; returns the entries to keep. Room version 12: any fault is
 * 400 M_INVALID_PARAM. Before: faults are logged, faulty entries left out.
 */
export async function checkReceivedInviteState(s: Services, raw: unknown, v: RoomVersion, roomId: string): Promise<Record<string, unknown>[]> {
  const faults: string[] = [];
  const out = await checkedEntries(s, raw, v, roomId, (msg) => {
    if (v.strictInviteRoomState) throw refused(msg);
    faults.push(msg);
  });
  if (faults.length > 0) s.log.warn({ roomId, roomVersion: v.id, faults }, "an invite's invite_room_state fails the spec's validation (kept, as room versions 1–11 allow)");
  return out;
}

/**
 * The entries of a send_knock answer's knock_room_state worth showing our client: those improperly
 * formatted or signed are left out (the spec's SHOULD), as is everything past the first MAX_INVITE_STATE.
 */
export async function keptKnockState(s: Services, raw: unknown, v: RoomVersion, roomId: string): Promise<Record<string, unknown>[]> {
  if (!Array.isArray(raw)) return [];
  return checkedEntries(s, raw, v, roomId, (msg) => s.log.info({ roomId, err: msg }, "leaving out a knock_room_state entry"));
}
