// Whether a room uses a Policy Server, and whether an event carries that server's valid signature. A room
// uses one when its current state holds a valid m.room.policy with an empty state key (a string `via`, an
// object `public_keys` with a string `ed25519`) and the `via` server has a joined user in current state.
// As Synapse 1.163: without a stable event, the unstable `org.matrix.msc4284.policy` (a string
// `public_key`) is read instead; a `via` that is not a server name, or is this server (which never asks
// itself), means none. The signature is the policy server's, key id always `ed25519:policy_server`, over
// the redacted event, checked with the key from state (never fetched). A room without either event costs
// two lookups in the in-memory current state.
// Spec: Server-Server API "Policy Servers" ("Determining if a Policy Server is enabled in a room",
// "Validating Policy Server signatures"); Client-Server API "m.room.policy" (v1.18, MSC4284).
import type { Services } from "../services.ts";
import type { Pdu } from "../events/types.ts";
import { isPlainObject } from "../events/types.ts";
import { redactEvent } from "../events/redaction.ts";
import { signingBytes, verifyBytes } from "../signing.ts";
import { tryParseServerName } from "../ids.ts";
import { stateKeyOf, type StateMap } from "../store/state-groups.ts";
import { joinedServersOfState } from "../federation/room-servers.ts";
import type { RoomVersion } from "./room-versions.ts";

export const POLICY_EVENT_TYPE = "m.room.policy";
/** MSC4284's unstable type, which Synapse 1.163 still reads (its issue #19502). */
export const UNSTABLE_POLICY_EVENT_TYPE = "org.matrix.msc4284.policy";
/** The key id of every policy server signature (spec: "always `ed25519:policy_server`"). */
export const POLICY_SERVER_KEY_ID = "ed25519:policy_server";

const STABLE_KEY = stateKeyOf(POLICY_EVENT_TYPE, "");
const UNSTABLE_KEY = stateKeyOf(UNSTABLE_POLICY_EVENT_TYPE, "");

export interface PolicyServer {
  /** The policy server's name (`via`). */
  via: string;
  /** Its Ed25519 public key from the state event, unpadded base64 (as given: a bad one verifies nothing). */
  publicKey: string;
}

/**
 * Whether `pdu` is the room's policy configuration itself (either type, empty state key): never sent to
 * the policy server, never needing its signature (spec; Synapse exempts the unstable type alike).
 */
export function isPolicyConfigEvent(pdu: Pick<Pdu, "type" | "state_key">): boolean {
  return pdu.state_key === "" && (pdu.type === POLICY_EVENT_TYPE || pdu.type === UNSTABLE_POLICY_EVENT_TYPE);
}

/**
 * Whether the state holds a policy event at all (two map lookups, nothing read): false means the room
 * uses no policy server; true means policyServerOf decides. The send path asks this first.
 */
export function mayUsePolicyServer(state: StateMap): boolean {
  return state.has(STABLE_KEY) || state.has(UNSTABLE_KEY);
}

/** The server and key a policy event's content names, or undefined when it names none validly. */
function configOf(s: Services, type: string, content: unknown): PolicyServer | undefined {
  if (!isPlainObject(content)) return undefined;
  let publicKey: unknown;
  if (type === POLICY_EVENT_TYPE) {
    const keys = content["public_keys"];
    publicKey = isPlainObject(keys) ? keys["ed25519"] : undefined;
  } else publicKey = content["public_key"];
  const via = content["via"];
  if (typeof publicKey !== "string" || typeof via !== "string") return undefined;
  // This server is never its own policy server (as Synapse: it cannot be one).
  if (via === s.config.server_name || !tryParseServerName(via)) return undefined;
  return { via, publicKey };
}

/**
 * The policy server of the room whose current state is `state`, or undefined when it uses none. Reads
 * nothing for a room without a policy event; otherwise the event (cached) and the joined servers of the
 * state (cached per room, room-servers.ts).
 */
export async function policyServerOf(s: Services, roomId: string, state: StateMap): Promise<PolicyServer | undefined> {
  // A stable event present (valid or not) is the one read: the unstable one only stands in for none.
  const eventId = state.get(STABLE_KEY) ?? state.get(UNSTABLE_KEY);
  if (eventId === undefined) return undefined;
  const event = await s.rooms.events.get(eventId);
  if (!event) return undefined;
  const ps = configOf(s, event.pdu.type, event.pdu.content);
  if (!ps) return undefined;
  // The via server needs a joined user in current state (any power level).
  const servers = await joinedServersOfState(s, roomId, state);
  return servers.includes(ps.via) ? ps : undefined;
}

/** The policy server's signature on `pdu`, if it carries one (not checked). */
export function policySignatureOf(pdu: Pdu, ps: PolicyServer): string | undefined {
  const mine = isPlainObject(pdu.signatures) ? pdu.signatures[ps.via] : undefined;
  const sig = isPlainObject(mine) ? mine[POLICY_SERVER_KEY_ID] : undefined;
  return typeof sig === "string" ? sig : undefined;
}

/** Whether `pdu` carries a valid signature of the policy server, over its redacted form, by the key from state. */
export function hasValidPolicySignature(pdu: Pdu, v: RoomVersion, ps: PolicyServer): boolean {
  const sig = policySignatureOf(pdu, ps);
  if (sig === undefined) return false;
  let bytes: Buffer;
  try {
    bytes = signingBytes(redactEvent(pdu, v, { shareTopLevel: true }) as unknown as Record<string, unknown>);
  } catch {
    return false;
  }
  return verifyBytes(bytes, sig, ps.publicKey);
}

/**
 * `pdu` with the policy server's signature `sig` added beside the signatures it has — the via server's
 * own ones kept when it is also the event's origin (spec v1.19's clarification) — in a new object.
 */
export function withPolicySignature<T extends Pdu>(pdu: T, ps: PolicyServer, sig: string): T {
  const signatures = { ...(pdu.signatures ?? {}) };
  signatures[ps.via] = { ...(isPlainObject(signatures[ps.via]) ? signatures[ps.via] : {}), [POLICY_SERVER_KEY_ID]: sig };
  return { ...pdu, signatures };
}
