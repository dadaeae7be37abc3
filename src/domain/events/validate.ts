// Format check of a received PDU against its room version's event format: field types, the v1–2 / v3+
// shapes of ids and references, the v12 create event without room_id, canonical JSON (v6+), depth range,
// reference counts, and the size limits.
// Spec: Room Versions "Event format" (pdu_v1/v3/v4/v6/v11/v12); Server-Server API "Checks performed on
// receipt of a PDU" step 1; Appendices "Canonical JSON".
import { MAX_SAFE, assertCanonicalCompatible } from "../canonical-json.ts";
import { MatrixError } from "../errors.ts";
import { resolveRoomVersion, type RoomVersion } from "../rooms/room-versions.ts";
import { checkPduSize } from "./size.ts";
import { hasNul } from "../text.ts";
import { isPlainObject, type Pdu } from "./types.ts";

export const MAX_PREV_EVENTS = 20;
export const MAX_AUTH_EVENTS = 10;

function bad(msg: string): never {
  throw new MatrixError("M_BAD_JSON", msg);
}

function checkReferences(name: string, value: unknown, v: RoomVersion, max: number): void {
  if (!Array.isArray(value)) bad(`${name} must be an array`);
  if (value.length > max) bad(`${name} has more than ${max} entries`);
  for (const ref of value) {
    if (v.eventIdFormat === "server-assigned") {
      if (!Array.isArray(ref) || ref.length !== 2 || typeof ref[0] !== "string" || !isPlainObject(ref[1])) {
        bad(`${name} entries must be [event_id, {sha256}] pairs in this room version`);
      }
    } else if (typeof ref !== "string" || !ref.startsWith("$")) {
      bad(`${name} entries must be event ids`);
    }
  }
}

/**
 * Room versions 6 and later: M_BAD_JSON (400) when the event holds a value canonical JSON cannot carry — a
 * float, an integer outside ±(2^53−1) — at any depth, in any field (Synapse's words differ, not its code).
 * Also the first check of an event whose other faults earn another errcode (an invite's M_INVALID_PARAM).
 */
export function assertCanonicalForVersion(json: unknown, version: string | RoomVersion): void {
  if (!resolveRoomVersion(version).strictCanonicalJson) return;
  try {
    assertCanonicalCompatible(json);
  } catch (err) {
    bad(`Event is not canonical JSON: ${(err as Error).message}`);
  }
}

/**
 * Returns `json` typed as a PDU if it has this room version's event format; throws M_BAD_JSON (format) or
 * M_TOO_LARGE (size) otherwise. Hashes, signatures and auth rules are checked elsewhere.
 */
export function validatePduFormat(json: unknown, version: string | RoomVersion): Pdu {
  const v = resolveRoomVersion(version);
  if (!isPlainObject(json)) bad("Event must be a JSON object");
  const e = json;
  if (typeof e["type"] !== "string") bad("type must be a string");
  if (typeof e["sender"] !== "string" || !e["sender"].startsWith("@")) bad("sender must be a user id");
  if (!isPlainObject(e["content"])) bad("content must be an object");
  if (typeof e["origin_server_ts"] !== "number" || !Number.isInteger(e["origin_server_ts"])) bad("origin_server_ts must be an integer");
  if (e["state_key"] !== undefined && typeof e["state_key"] !== "string") bad("state_key must be a string");
  // Stored in columns (src/domain/text.ts): no NUL, whatever the room version.
  if (hasNul(e["type"]) || (typeof e["state_key"] === "string" && hasNul(e["state_key"]))) bad("type and state_key may not contain NUL");
  const depth = e["depth"];
  if (typeof depth !== "number" || !Number.isInteger(depth) || depth < 0) bad("depth must be a non-negative integer");
  if (v.strictCanonicalJson && depth > MAX_SAFE) bad("depth is above 2^53-1");
  if (!isPlainObject(e["hashes"]) || typeof e["hashes"]["sha256"] !== "string") bad("hashes.sha256 must be a string");
  const sigs = e["signatures"];
  if (!isPlainObject(sigs) || !Object.values(sigs).every((s) => isPlainObject(s) && Object.values(s).every((x) => typeof x === "string"))) {
    bad("signatures must map server names to key ids to strings");
  }
  if (e["unsigned"] !== undefined && !isPlainObject(e["unsigned"])) bad("unsigned must be an object");

  const isV12Create = v.roomIdIsCreateEventHash && e["type"] === "m.room.create" && e["state_key"] === "";
  if (isV12Create) {
    // The auth rules reject a v12 create event with a room_id; here only the type is checked.
    if (e["room_id"] !== undefined && typeof e["room_id"] !== "string") bad("room_id must be a string");
  } else if (typeof e["room_id"] !== "string" || !e["room_id"].startsWith("!")) {
    bad("room_id must be a room id");
  }

  if (v.eventIdFormat === "server-assigned") {
    if (typeof e["event_id"] !== "string" || !e["event_id"].startsWith("$")) bad("event_id must be an event id in this room version");
  }
  checkReferences("prev_events", e["prev_events"], v, MAX_PREV_EVENTS);
  checkReferences("auth_events", e["auth_events"], v, MAX_AUTH_EVENTS);

  // `redacts` is only type-checked: a redacted v1–10 redaction has lost it legitimately.
  if (e["type"] === "m.room.redaction") {
    const target = v.redactsInContent ? e["content"]["redacts"] : e["redacts"];
    if (target !== undefined && typeof target !== "string") bad("redacts must be an event id");
  }

  assertCanonicalForVersion(e, v);
  checkPduSize(e, { lenientBytes: !v.strictEventByteLimits });
  return e as Pdu;
}
