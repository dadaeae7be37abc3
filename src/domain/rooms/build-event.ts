// Builds a local PDU: prev_events from the forward extremities (at most 20), depth, auth_events chosen by
// the spec's selection rules from current state, the content hash, our server's signature over the
// redacted form, and the event id of the room version. Spec: Server-Server API "PDUs", "Auth events
// selection", "Signing events"; Room Versions "Event IDs".
import type { Services } from "../services.ts";
import type { Pdu } from "../events/types.ts";
import type { SigningKey } from "../signing-key.ts";
import { authTypesForEvent } from "../auth/index.ts";
import { hash } from "node:crypto";
import { referenceHash } from "../events/hashes.ts";
import { redactEvent } from "../events/redaction.ts";
import { checkContentDepth, checkPduSize, LIMITED_FIELDS, MAX_FIELD_BYTES, MAX_PDU_BYTES } from "../events/size.ts";
import { signBytes } from "../signing.ts";
import { base64Unpadded, base64UrlUnpadded, canonicalJson, MAX_SAFE } from "../canonical-json.ts";
import { MatrixError } from "../errors.ts";
import { randomString } from "../ids.ts";
import { stateKeyOf } from "../store/state-groups.ts";
import type { RoomVersion } from "./room-versions.ts";

export interface EventDraft {
  type: string;
  stateKey?: string;
  sender: string;
  content: Record<string, unknown>;
  /** v1–10 redactions put `redacts` at the top level (v11+ keep it in content). */
  redacts?: string;
  /** origin_server_ts other than the clock's (an application service's `ts`: timestamp massaging). */
  originServerTs?: number;
  /** MSC4354: the top-level `msc4354_sticky` of a sticky event. */
  sticky?: { duration_ms: number };
}

export interface BuiltEvent {
  eventId: string;
  pdu: Pdu;
  json: string;
}

/** The room as the builder needs it: version, state to select auth events from, DAG tips and depth. */
export interface BuildContext {
  roomId: string | undefined;
  version: RoomVersion;
  state: ReadonlyMap<string, string>;
  extremities: string[];
  maxDepth: number;
  /** Finds referenced events, including ones built earlier in the same batch (v1–2 reference hashes). */
  lookup?: (eventId: string) => Promise<Pdu | undefined>;
  /**
   * Leaves this server's signature out, to be made when the event first leaves the server (the messages
   * of a room no other server is in: own-signature.ts).
   */
  signLater?: boolean;
}

const MAX_PREV_EVENTS = 20;

/** Who signs a built event: this server by default (another one's key in tests of received events). */
export interface EventSigner {
  serverName: string;
  key: SigningKey;
}

export async function buildEvent(s: Services, ctx: BuildContext, draft: EventDraft, now = s.clock.now(), signer?: EventSigner): Promise<BuiltEvent> {
  signer ??= { serverName: s.config.server_name, key: s.signingKeys[0]! };
  const pdu = await unsignedPdu(s, ctx, draft, now, signer.serverName);
  // v1–2: the id is made up by the server that signs the event.
  if (ctx.version.eventIdFormat === "server-assigned") pdu.event_id = `$${randomString(18)}:${signer.serverName}`;
  return sealEvent(pdu, ctx.version, signer, ctx.signLater === true);
}

/**
 * The PDU of a draft before it is hashed, signed and named: prev_events, auth_events (v1–2 as references
 * with their hashes), depth, and `origin` (v1–10) naming `originServer`. It is also the template a
 * resident server answers make_join / make_leave with, for the joining server to complete and sign.
 */
export async function unsignedPdu(s: Services, ctx: BuildContext, draft: EventDraft, now: number, originServer: string): Promise<Pdu> {
  const v = ctx.version;
  // A room has one create event, its first: another one is a bad request before any auth rule (as Synapse).
  if (draft.type === "m.room.create" && draft.stateKey !== undefined && ctx.extremities.length > 0) {
    throw new MatrixError("M_INVALID_PARAM", "Cannot resend m.room.create event", 400);
  }
  const prevIds = ctx.extremities.slice(-MAX_PREV_EVENTS);
  const authIds = authTypesForEvent(v, draft.type, draft.stateKey, draft.sender, draft.content)
    .map(([t, k]) => ctx.state.get(stateKeyOf(t, k)))
    .filter((id): id is string => id !== undefined);

  // One object literal, the optional fields set after it: a literal that starts with a spread gets a hidden
  // class of its own in V8 (each PDU one more Map, and every reader of PDUs a megamorphic access).
  const pdu: Pdu = {
    sender: draft.sender,
    type: draft.type,
    content: draft.content,
    origin_server_ts: draft.originServerTs ?? now,
    depth: Math.min(ctx.maxDepth + 1, MAX_SAFE),
    prev_events: prevIds,
    auth_events: authIds,
    hashes: { sha256: "" },
    signatures: {},
  };
  if (ctx.roomId !== undefined) pdu.room_id = ctx.roomId;
  if (draft.stateKey !== undefined) pdu.state_key = draft.stateKey;
  if (draft.redacts !== undefined && !v.redactsInContent) pdu.redacts = draft.redacts;
  if (!v.updatedRedactionRules) pdu.origin = originServer;
  if (draft.sticky !== undefined) pdu.msc4354_sticky = draft.sticky;

  if (v.eventIdFormat === "server-assigned") {
    // v1–2: references carry the referenced event's reference hash.
    const lookup = ctx.lookup ?? (async (id: string) => (await s.rooms.events.get(id))?.pdu);
    const refs = async (ids: string[]) => {
      const out: [string, { sha256: string }][] = [];
      for (const id of ids) {
        const e = await lookup(id);
        if (!e) throw new Error(`referenced event ${id} is unknown`);
        out.push([id, { sha256: base64Unpadded(referenceHash(e, v)) }]);
      }
      return out;
    };
    pdu.prev_events = await refs(prevIds);
    pdu.auth_events = await refs(authIds);
  }
  return pdu;
}

/** An Ed25519 signature in unpadded base64 is 86 characters. */
const SIGNATURE_PLACEHOLDER = "A".repeat(86);

/** `signer`'s signature of an event, in unpadded base64: over its redacted form, canonical. */
export function eventSignature(pdu: Pdu, v: RoomVersion, signer: EventSigner): string {
  return base64Unpadded(signBytes(signedBytesOf(pdu, v), signer.key.privateKey));
}

/** The bytes a server signs (and, from v3, the reference hash covers): the redacted event, canonical. */
function signedBytesOf(pdu: Pdu, v: RoomVersion): Buffer {
  const { signatures: _rs, unsigned: _ru, ...redacted } = redactEvent(pdu, v, { shareTopLevel: true });
  return Buffer.from(canonicalJson(redacted));
}

/**
 * Adds `signer`'s signature to an event signed by others (an invite this server countersigns, a
 * restricted join it authorises), keeping theirs. Returns the event with the new signatures.
 */
export function addSignature<T extends Pdu>(pdu: T, v: RoomVersion, signer: EventSigner): T {
  const signature = eventSignature(pdu, v, signer);
  const signatures = { ...(pdu.signatures ?? {}), [signer.serverName]: { ...(pdu.signatures?.[signer.serverName] ?? {}), [signer.key.keyId]: signature } };
  return { ...pdu, signatures };
}

/**
 * Hashes, signs and names a PDU (its `unsigned` left out; v1–2: its `event_id` already set). The signature and the reference hash (the v3+ event id) are both
 * defined over the same bytes — the canonical JSON of the redacted event without `signatures` and
 * `unsigned` — so they are encoded once. The whole-PDU size limit is measured exactly only when the
 * event is near it. `signLater`: no signature (`signatures` left empty), made when the event first
 * leaves the server (own-signature.ts); neither the hashes nor the event id cover it.
 */
export function sealEvent(pdu: Pdu, v: RoomVersion, signer: EventSigner, signLater = false): BuiltEvent {
  const serverName = signer.serverName;
  checkContentDepth(pdu);
  const { unsigned: _u, signatures: _s, hashes: _h, ...hashable } = pdu;
  const contentJson = canonicalJson(hashable);
  pdu.hashes = { sha256: base64Unpadded(hash("sha256", contentJson, "buffer")) };
  const signedBytes = signedBytesOf(pdu, v);
  const key = signer.key;
  // Signed later: the size limit is still measured with a signature's worth of characters in place.
  pdu.signatures = { [serverName]: { [key.keyId]: signLater ? SIGNATURE_PLACEHOLDER : base64Unpadded(signBytes(signedBytes, key.privateKey)) } };
  if (Buffer.byteLength(contentJson) > MAX_PDU_BYTES - 1024) checkPduSize(pdu);
  else checkFieldSizes(pdu);
  if (signLater) pdu.signatures = {};
  let eventId: string;
  if (v.eventIdFormat === "server-assigned") eventId = pdu.event_id!;
  else {
    const digest = hash("sha256", signedBytes, "buffer");
    eventId = "$" + (v.eventIdFormat === "reference-hash-base64" ? base64Unpadded(digest) : base64UrlUnpadded(digest));
  }
  return { eventId, pdu, json: JSON.stringify(pdu) };
}

function checkFieldSizes(pdu: Pdu): void {
  for (const field of LIMITED_FIELDS) {
    const value = pdu[field];
    if (typeof value === "string" && Buffer.byteLength(value, "utf8") > MAX_FIELD_BYTES)
      throw new MatrixError("M_TOO_LARGE", `'${field}' is longer than ${MAX_FIELD_BYTES} bytes`);
  }
}
