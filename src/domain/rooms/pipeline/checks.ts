// The checks of an event's authenticity and authority, shared by both planners: the signatures a PDU
// needs (through the key ring), its content hash (a mismatch means the redacted form is used), and the
// authorization rules against its own auth events or against a state map.
// Spec: Server-Server API "Checks performed on receipt of a PDU", "Validating hashes and signatures on
// received events"; Room Versions "Authorization rules".
import type { Services } from "../../services.ts";
import type { Pdu } from "../../events/types.ts";
import { authEventIds, domainOf, isPlainObject } from "../../events/types.ts";
import { checkContentHash, roomIdOf } from "../../events/hashes.ts";
import { redactEvent } from "../../events/redaction.ts";
import { signingBytes, verifyBytes, keyAlgorithm, ED25519 } from "../../signing.ts";
import { authTypesForEvent, checkAuth, checkAuthEventsList, stateMapKey, verifyThirdPartyInviteSigned } from "../../auth/index.ts";
import { MatrixError } from "../../errors.ts";
import { forbid } from "../../auth/context.ts";
import type { StateMap } from "../../store/state-groups.ts";
import { stateKeyOf } from "../../store/state-groups.ts";
import type { RoomVersion } from "../room-versions.ts";
import type { RoomSnapshot } from "../room-cache.ts";

type AuthRoom = Pick<RoomSnapshot, "version" | "createEvent" | "createEventId">;

/** Is the event signed by this server? (Answered for the auth rules' join_authorised_via_users_server.) */
export type SignedBy = (serverName: string) => boolean;

/**
 * The servers whose signatures an event needs: the sender's; in v1–2 also the event id's; from v8 on, for
 * a join naming `join_authorised_via_users_server`, that user's server.
 */
export function requiredSigners(pdu: Pdu, v: RoomVersion): Set<string> {
  const out = new Set<string>();
  const add = (id: unknown) => {
    const d = typeof id === "string" ? domainOf(id) : undefined;
    if (d) out.add(d);
    else throw new MatrixError("M_BAD_JSON", `Cannot tell the server of ${JSON.stringify(id)}`);
  };
  add(pdu.sender);
  if (v.eventIdFormat === "server-assigned") add(pdu.event_id);
  const via = pdu.content["join_authorised_via_users_server"];
  if (v.restricted && pdu.type === "m.room.member" && pdu.content["membership"] === "join" && typeof via === "string") add(via);
  return out;
}

/**
 * Checks the signatures of a received PDU (over its redacted form): each required server has signed it
 * with at least one ed25519 key the key ring knows (valid at the event's origin_server_ts from v5), and
 * every such signature verifies (also for the servers in `alsoRequired`: an invitee's server that
 * countersigned an invite). Returns the servers whose signatures verified; throws M_FORBIDDEN
 * otherwise (the event is then dropped).
 */
export async function checkSignatures(s: Services, pdu: Pdu, v: RoomVersion, alsoRequired: Iterable<string> = []): Promise<Set<string>> {
  const bytes = signingBytes(redactEvent(pdu, v, { shareTopLevel: true }) as unknown as Record<string, unknown>);
  const atTs = v.enforceKeyValidity ? pdu.origin_server_ts : 0;
  const verified = new Set<string>();
  const sigs = isPlainObject(pdu.signatures) ? pdu.signatures : {};
  for (const server of new Set([...requiredSigners(pdu, v), ...alsoRequired])) {
    const mine = isPlainObject(sigs[server]) ? sigs[server] : {};
    let good = 0;
    for (const [keyId, signature] of Object.entries(mine)) {
      if (keyAlgorithm(keyId) !== ED25519 || typeof signature !== "string") continue;
      const key = await s.keyRing.verifyKey(server, keyId, atTs);
      if (!key) continue;
      if (!verifyBytes(bytes, signature, key)) throw new MatrixError("M_FORBIDDEN", `Bad signature from ${server} (${keyId})`, 403);
      good++;
    }
    if (good === 0) throw new MatrixError("M_FORBIDDEN", `No valid signature from ${server}`, 403);
    verified.add(server);
  }
  return verified;
}

/**
 * The content hash check: the event as it continues through the pipeline — itself, or its redacted
 * form when `hashes.sha256` does not match its content.
 */
export function checkHashOrRedact(pdu: Pdu, v: RoomVersion): { pdu: Pdu; redacted: boolean } {
  if (checkContentHash(pdu)) return { pdu, redacted: false };
  return { pdu: redactEvent(pdu, v), redacted: true };
}

/**
 * Authorizes `pdu` against its own auth events (already loaded, in `auth_events` order; a rejected one
 * is named by `isRejected`). Throws an AuthError (M_FORBIDDEN) naming the failed rule.
 */
export function authorizeWithAuthEvents(room: AuthRoom, pdu: Pdu, authEvents: Pdu[], signedBy: SignedBy, isRejected?: (e: Pdu) => boolean): void {
  checkAuthEventsList(pdu, authEvents, room.version, { isRejected });
  const authState = new Map<string, Pdu>();
  for (const e of authEvents) authState.set(stateMapKey(e.type, e.state_key ?? ""), e);
  checkAuth(pdu, authState, room.version, {
    createEvent: room.createEvent,
    createEventId: room.createEventId,
    verifyServerSignature: (_event, serverName) => signedBy(serverName),
    verifyThirdPartyInviteSignature: verifyThirdPartyInviteSigned,
  });
}

/**
 * Authorizes `pdu` against a state map (the state before it, or current state): the auth events the
 * selection rules pick from that state are loaded and the rules run on them. Throws an AuthError.
 */
export async function authorizeWithState(room: AuthRoom, pdu: Pdu, state: StateMap, signedBy: SignedBy, lookup: (ids: string[]) => Promise<Map<string, Pdu>>): Promise<void> {
  const ids = authTypesForEvent(room.version, pdu.type, pdu.state_key, pdu.sender, pdu.content)
    .map(([t, k]) => state.get(stateKeyOf(t, k)))
    .filter((id): id is string => id !== undefined);
  const events = await lookup(ids);
  const authState = new Map<string, Pdu>();
  const roomId = roomIdOf(pdu, room.version);
  for (const id of ids) {
    const e = events.get(id);
    if (!e) continue;
    // A state holding another room's events (one built on prev_events of another room) authorizes
    // nothing: in v12 the create event is not among them to catch it (as Synapse's "prev_state_events
    // of a different room" check; found by the hostile-server catalogue, issue 40).
    if (roomIdOf(e, room.version) !== roomId) forbid("state.room_id", `the state before the event holds ${e.type} of another room`);
    authState.set(stateMapKey(e.type, e.state_key ?? ""), e);
  }
  checkAuth(pdu, authState, room.version, {
    createEvent: room.createEvent,
    createEventId: room.createEventId,
    verifyServerSignature: (_event, serverName) => signedBy(serverName),
    verifyThirdPartyInviteSignature: verifyThirdPartyInviteSigned,
  });
}

/** Authorizes an event this server built against its auth events (found through `lookup`). */
export async function authorizeEvent(
  s: Services,
  room: AuthRoom,
  pdu: Pdu,
  lookup: (id: string) => Promise<Pdu | undefined>,
): Promise<void> {
  const authEvents: Pdu[] = [];
  for (const id of authEventIds(pdu)) {
    const e = await lookup(id);
    if (!e) throw new MatrixError("M_FORBIDDEN", `Event references unknown auth event ${id}`, 403);
    authEvents.push(e);
  }
  // Local events are signed by this server as they are built.
  authorizeWithAuthEvents(room, pdu, authEvents, (server) => server === s.config.server_name);
}
