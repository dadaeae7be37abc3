// Content hash and reference hash of a PDU, event ids derived from the reference hash (v3+), and the
// v12 room id derived from the create event.
// Spec: Server-Server API "Calculating the content hash / reference hash for an event"; Room Versions
// "Event IDs" (v1, v3, v4) and v12 "room IDs"; Appendices "Unpadded Base64".
import { hash } from "node:crypto";
import { base64Unpadded, base64UrlUnpadded, canonicalJson, decodeBase64 } from "../canonical-json.ts";
import { MatrixError } from "../errors.ts";
import { resolveRoomVersion, type RoomVersion } from "../rooms/room-versions.ts";
import { redactEvent } from "./redaction.ts";
import type { Pdu } from "./types.ts";

function sha256(text: string): Buffer {
  return hash("sha256", text, "buffer");
}

function without(obj: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) if (!keys.includes(k)) out[k] = v;
  return out;
}

/** SHA-256 over the canonical JSON of the event without `unsigned`, `signatures` and `hashes`. */
export function contentHash(pdu: Pdu | Record<string, unknown>): Buffer {
  return sha256(canonicalJson(without(pdu, ["unsigned", "signatures", "hashes"])));
}

/** The content hash as it goes in `hashes.sha256` (unpadded standard base64). */
export function computeContentHash(pdu: Pdu | Record<string, unknown>): string {
  return base64Unpadded(contentHash(pdu));
}

/** A copy of `pdu` with `hashes.sha256` set to its content hash (other hash algorithms kept). */
export function withContentHash<T extends Pdu>(pdu: T): T {
  return { ...pdu, hashes: { ...(pdu.hashes ?? {}), sha256: computeContentHash(pdu) } };
}

/** True when `hashes.sha256` is present and equals the event's content hash. */
export function checkContentHash(pdu: Pdu): boolean {
  const claimed = pdu.hashes?.sha256;
  if (typeof claimed !== "string") return false;
  let expected: Buffer;
  try {
    expected = contentHash(pdu);
  } catch {
    return false; // not encodable as canonical JSON
  }
  const got = decodeBase64(claimed);
  return got.length === expected.length && got.equals(expected);
}

/** SHA-256 over the canonical JSON of the redacted event without `signatures` and `unsigned`. */
export function referenceHash(pdu: Pdu, version: string | RoomVersion): Buffer {
  const redacted = redactEvent(pdu, version);
  return sha256(canonicalJson(without(redacted, ["signatures", "unsigned"])));
}

/**
 * The event id of a v3+ event: `$` + its reference hash (standard base64 in v3, URL-safe from v4).
 * Throws for v1–2, whose ids are assigned by the sending server (use `eventIdOf`).
 */
export function computeEventId(pdu: Pdu, version: string | RoomVersion): string {
  const v = resolveRoomVersion(version);
  switch (v.eventIdFormat) {
    case "reference-hash-base64":
      return "$" + base64Unpadded(referenceHash(pdu, v));
    case "reference-hash-base64url":
      return "$" + base64UrlUnpadded(referenceHash(pdu, v));
    case "server-assigned":
      throw new MatrixError("M_INVALID_PARAM", `Room version ${v.id} event ids are not derived from the event`);
  }
}

/** The id of any event: the `event_id` field in v1–2, the reference hash from v3. */
export function eventIdOf(pdu: Pdu, version: string | RoomVersion): string {
  const v = resolveRoomVersion(version);
  if (v.eventIdFormat === "server-assigned") {
    if (typeof pdu.event_id !== "string") throw new MatrixError("M_BAD_JSON", "Event has no event_id");
    return pdu.event_id;
  }
  return computeEventId(pdu, v);
}

/** v12: the room id a create event founds: its event id with the `!` sigil. */
export function roomIdFromCreateEvent(create: Pdu, version: string | RoomVersion): string {
  const v = resolveRoomVersion(version);
  if (!v.roomIdIsCreateEventHash) throw new MatrixError("M_INVALID_PARAM", `Room version ${v.id} room ids are not derived from the create event`);
  return "!" + computeEventId(create, v).slice(1);
}

/**
 * The room an event belongs to: its `room_id`, or for a v12 create event (which has none) the id it
 * founds. Undefined if neither applies.
 */
export function roomIdOf(pdu: Pdu, version: string | RoomVersion): string | undefined {
  if (typeof pdu.room_id === "string") return pdu.room_id;
  const v = resolveRoomVersion(version);
  if (v.roomIdIsCreateEventHash && pdu.type === "m.room.create" && pdu.state_key === "") return roomIdFromCreateEvent(pdu, v);
  return undefined;
}

/** v1–2 reference `[id, {sha256}]` for prev_events/auth_events. */
export function eventReference(pdu: Pdu, version: string | RoomVersion): [string, { sha256: string }] {
  return [eventIdOf(pdu, version), { sha256: base64Unpadded(referenceHash(pdu, version)) }];
}
