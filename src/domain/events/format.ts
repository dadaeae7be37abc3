// The client serialization of a PDU (ClientEvent): the fields clients see, `unsigned` built by the server
// (age, transaction_id, prev_content, redacted_because and Synapse's redacted_by, membership), and
// `redacts` offered both at the top level and in content whatever the room version. Federation-only
// fields never reach clients.
// Spec: Client-Server API "Room Event Format" (ClientEvent), "Redactions"; Room Version 11 "Moving the
// redacts property"; m.room.redaction.
import { resolveRoomVersion, type RoomVersion } from "../rooms/room-versions.ts";
import { eventIdOf, roomIdOf } from "./hashes.ts";
import { redactContent, redactsOf } from "./redaction.ts";
import { cloneJson, type Pdu } from "./types.ts";
import { exceedsJsonDepth, MAX_JSON_DEPTH } from "../json-limits.ts";

export interface ClientEvent {
  event_id: string;
  type: string;
  content: Record<string, unknown>;
  sender: string;
  origin_server_ts: number;
  room_id?: string;
  state_key?: string;
  redacts?: string;
  /** MSC4354: the sticky event's `msc4354_sticky` (only with experimental_features.msc4354_enabled). */
  msc4354_sticky?: unknown;
  unsigned?: ClientUnsigned;
}

export interface ClientUnsigned {
  age?: number;
  transaction_id?: string;
  prev_content?: Record<string, unknown>;
  redacted_because?: ClientEvent | Record<string, unknown>;
  membership?: string;
  [key: string]: unknown;
}

export interface ClientEventOptions {
  roomVersion: string | RoomVersion;
  /** The event's id when the caller knows it (v3+ ids are otherwise hashed again). */
  eventId?: string;
  /** The room id for a v12 create event when the caller knows it (otherwise derived). */
  roomId?: string;
  /** Leave out room_id (sync's timeline format). Default false. */
  omitRoomId?: boolean;
  /** Current time in ms; when given, `unsigned.age` = now − (ageTs ?? origin_server_ts), never below 0. */
  now?: number;
  /** When this server received the event (defaults to origin_server_ts for the age). */
  ageTs?: number;
  /** Only for the device that sent the event. */
  transactionId?: string;
  /** The content of the state event this one replaced (state events only). */
  prevContent?: Record<string, unknown>;
  /** Sender of the replaced state event, and its id, as Synapse adds them (state events only). */
  prevSender?: string;
  replacesState?: string;
  /** The redaction that redacted this event (already client-formatted). Pass the redacted PDU. */
  redactedBecause?: ClientEvent | Record<string, unknown>;
  /** The requesting user's membership at the time of the event. */
  membership?: string;
  /** Any other unsigned fields the caller adds (e.g. m.relations). */
  extraUnsigned?: Record<string, unknown>;
  /**
   * Share the PDU's content object instead of copying it (the caller serializes the result at once and
   * never mutates it: /sync, where every member's response carries the same events). Default false.
   */
  shareContent?: boolean;
  /** MSC4354: the PDU's `msc4354_sticky`, served at the top level (the caller decides whether to). */
  sticky?: unknown;
}

/** Depth checks of content objects already made (stored events' content is shared and never mutated). */
const tooDeep = new WeakMap<object, boolean>();

/**
 * The content clients are served. Content nested deeper than MAX_JSON_DEPTH (stored before the bound
 * was enforced, or sent by a server that does not keep it) is served as if the event were redacted —
 * what the room version's redaction rules keep, or nothing if that is still too deep — so one event can
 * never break a room's history for its readers, over any face. Other content is returned as is.
 */
export function servableContent(type: string, content: Record<string, unknown>, version: string | RoomVersion): Record<string, unknown> {
  let deep = tooDeep.get(content);
  if (deep === undefined) tooDeep.set(content, (deep = exceedsJsonDepth(content, MAX_JSON_DEPTH)));
  if (!deep) return content;
  const kept = redactContent(type, content, version);
  return exceedsJsonDepth(kept, MAX_JSON_DEPTH) ? {} : kept;
}

/** Serializes a PDU for clients. No hashes, signatures, auth_events, prev_events, depth or origin. */
export function toClientEvent(pdu: Pdu, opts: ClientEventOptions): ClientEvent {
  const v = resolveRoomVersion(opts.roomVersion);
  const eventId = opts.eventId ?? eventIdOf(pdu, v);
  const stored = pdu.content ?? {};
  const content = servableContent(pdu.type, stored, v);
  const out: ClientEvent = {
    event_id: eventId,
    type: pdu.type,
    // Redactions get `redacts` mirrored into content below: always a copy then.
    content: content !== stored || (opts.shareContent && pdu.type !== "m.room.redaction") ? content : cloneJson(content),
    sender: pdu.sender,
    origin_server_ts: pdu.origin_server_ts,
  };
  if (!opts.omitRoomId) {
    const roomId =
      pdu.room_id ?? opts.roomId ?? (v.roomIdIsCreateEventHash && pdu.type === "m.room.create" ? "!" + eventId.slice(1) : roomIdOf(pdu, v));
    if (roomId !== undefined) out.room_id = roomId;
  }
  const isState = typeof pdu.state_key === "string";
  if (isState) out.state_key = pdu.state_key;

  if (pdu.type === "m.room.redaction") {
    const target = redactsOf(pdu, v);
    if (target !== undefined) {
      out.redacts = target; // top level: native in v1–10, mirrored for older clients in v11+
      if (typeof out.content["redacts"] !== "string") out.content["redacts"] = target; // mirrored for newer clients in v1–10
    }
  }

  if (opts.sticky !== undefined) out.msc4354_sticky = opts.sticky;

  // Object.assign, not `{ ...extra }`: V8 gives a literal that starts with a spread a hidden class of its own.
  const unsigned: ClientUnsigned = Object.assign({}, opts.extraUnsigned);
  if (opts.now !== undefined) unsigned.age = Math.max(0, opts.now - (opts.ageTs ?? pdu.origin_server_ts));
  if (opts.transactionId !== undefined) unsigned.transaction_id = opts.transactionId;
  if (isState && opts.prevContent !== undefined) unsigned.prev_content = cloneJson(servableContent(pdu.type, opts.prevContent, v));
  if (isState && opts.prevSender !== undefined) unsigned["prev_sender"] = opts.prevSender;
  if (isState && opts.replacesState !== undefined) unsigned["replaces_state"] = opts.replacesState;
  if (opts.redactedBecause !== undefined) {
    unsigned.redacted_because = opts.redactedBecause;
    // Synapse names the redaction beside it (not in the spec; clients and tests read it).
    const by = opts.redactedBecause.event_id;
    if (typeof by === "string") unsigned["redacted_by"] = by;
  }
  if (opts.membership !== undefined) unsigned.membership = opts.membership;
  if (Object.keys(unsigned).length > 0) out.unsigned = unsigned;
  return out;
}
