// Size limits of events: 65,536 bytes for the whole PDU as canonical JSON (signatures included),
// 255 bytes for sender, room_id, state_key, type and event_id, and content nested at most
// MAX_JSON_DEPTH levels (json-limits.ts; the spec sets no depth, its byte limit allows ~32,000 levels).
// Received events of room versions 1–10 are held to 255 code points per field instead (as Synapse).
// Spec: Client-Server API "Size limits"; Appendices "User Identifiers", "Room IDs", "Event IDs".
import { canonicalJson } from "../canonical-json.ts";
import { MatrixError } from "../errors.ts";
import { checkJsonDepth } from "../json-limits.ts";
import type { Pdu } from "./types.ts";

export const MAX_PDU_BYTES = 65_536;
export const MAX_FIELD_BYTES = 255;

/** Fields limited to 255 bytes each (UTF-8). */
export const LIMITED_FIELDS = ["sender", "room_id", "state_key", "type", "event_id"] as const;

/**
 * Size in bytes of the PDU as canonical JSON. Room versions 1–5 allow non-canonical values (floats) that
 * canonical JSON cannot encode; those fall back to plain JSON for the measurement.
 */
export function pduSizeBytes(pdu: Pdu | Record<string, unknown>): number {
  let text: string;
  try {
    text = canonicalJson(pdu);
  } catch {
    text = JSON.stringify(pdu);
  }
  return Buffer.byteLength(text, "utf8");
}

/** Throws M_BAD_JSON when the event's content nests deeper than MAX_JSON_DEPTH. */
export function checkContentDepth(pdu: Pdu | Record<string, unknown>): void {
  checkJsonDepth(pdu.content, "Event content");
}

/** The first limited field over 255 bytes, if any. */
export function overlongField(pdu: Pdu | Record<string, unknown>): string | undefined {
  for (const field of LIMITED_FIELDS) {
    const value = pdu[field];
    if (typeof value === "string" && Buffer.byteLength(value, "utf8") > MAX_FIELD_BYTES) return field;
  }
  return undefined;
}

/**
 * Throws M_TOO_LARGE when the PDU or one of its limited fields is over its limit (M_BAD_JSON: too deep).
 * With `lenientBytes` (received events of room versions 1–10, as Synapse) a field is limited to 255 code
 * points only; one over 255 bytes is then the caller's to reject (`overlongField`).
 */
export function checkPduSize(pdu: Pdu | Record<string, unknown>, opts: { lenientBytes?: boolean } = {}): void {
  checkContentDepth(pdu);
  for (const field of LIMITED_FIELDS) {
    const value = pdu[field];
    if (typeof value !== "string" || Buffer.byteLength(value, "utf8") <= MAX_FIELD_BYTES) continue;
    if (opts.lenientBytes !== true) throw new MatrixError("M_TOO_LARGE", `'${field}' is longer than ${MAX_FIELD_BYTES} bytes`);
    let codePoints = 0;
    for (const _ of value) codePoints++;
    if (codePoints > MAX_FIELD_BYTES) throw new MatrixError("M_TOO_LARGE", `'${field}' is longer than ${MAX_FIELD_BYTES} code points`);
  }
  const size = pduSizeBytes(pdu);
  if (size > MAX_PDU_BYTES) throw new MatrixError("M_TOO_LARGE", `Event is ${size} bytes; the limit is ${MAX_PDU_BYTES}`);
}
