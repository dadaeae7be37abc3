// The Policy Server's say on an event, in the room's current state: a local event is sent only with the
// policy server's valid signature (added to it, so the stored PDU and every server it reaches carry it),
// else the client's request is refused — the policy server's own error verbatim, 403 M_FORBIDDEN for a
// missing or bad signature, 500 M_UNKNOWN when it cannot be reached (the answers of Synapse 1.163,
// message.py); a received event without a valid one is asked about, and if it still has none it is not
// recommended: the remote planner soft-fails it (stored, never live, never built upon; not redacted), as
// Synapse's federation_base.py does. The room's m.room.policy itself is never asked about.
// Spec: Server-Server API "Validating Policy Server signatures", "Asking for a Policy Server signature
// on an event", "Soft failure" (v1.18, MSC4284).
import type { Services } from "../services.ts";
import type { Pdu } from "../events/types.ts";
import type { StateMap } from "../store/state-groups.ts";
import { MatrixError } from "../errors.ts";
import type { BuiltEvent } from "./build-event.ts";
import type { RoomVersion } from "./room-versions.ts";
import { hasValidPolicySignature, isPolicyConfigEvent, policyServerOf, withPolicySignature } from "./policy-server.ts";
import { askPolicyServer } from "../federation/policy-sign.ts";

interface RoomAt {
  roomId: string;
  version: RoomVersion;
  /** Current state (as the plan has it so far). */
  state: StateMap;
}

/**
 * A local event, signed by the room's policy server if the room uses one (a new BuiltEvent: same id, its
 * JSON with the signature), or the client's request refused with nothing stored. The policy server is
 * asked once: a signature it has just made has no rotated key to be retried for.
 */
export async function signLocalEvent(s: Services, room: RoomAt, built: BuiltEvent): Promise<BuiltEvent> {
  if (isPolicyConfigEvent(built.pdu)) return built;
  const ps = await policyServerOf(s, room.roomId, room.state);
  if (!ps || hasValidPolicySignature(built.pdu, room.version, ps)) return built;
  const answer = await askPolicyServer(s, ps, built.pdu);
  switch (answer.kind) {
    case "refused":
      throw answer.error;
    case "failed":
      // Synapse lets the failed request through as an internal error: 500 M_UNKNOWN.
      throw new MatrixError("M_UNKNOWN", `Could not get a signature from the room's policy server ${ps.via}`, 500);
    case "unsigned":
      if (answer.empty) throw new MatrixError("M_FORBIDDEN", "This event has been rejected as probable spam by the policy server", 403);
      break;
    case "signed": {
      const pdu = withPolicySignature(built.pdu, ps, answer.signature);
      if (hasValidPolicySignature(pdu, room.version, ps)) return { eventId: built.eventId, pdu, json: JSON.stringify(pdu) };
      s.log.warn({ via: ps.via, eventId: built.eventId }, "the room's policy server signed an event with another key than the room names");
    }
  }
  throw new MatrixError("M_FORBIDDEN", "This message has been rejected as probable spam", 403);
}

/**
 * A received event (its signatures and content hash checked): whether the room's policy server
 * recommends it — it needs none, carries its valid signature, or gets one now (then in the returned PDU,
 * to be stored with it). Never throws: an unreachable policy server means not recommended (as Synapse).
 */
export async function checkReceivedEvent(s: Services, room: RoomAt, pdu: Pdu): Promise<{ pdu: Pdu; recommended: boolean }> {
  if (isPolicyConfigEvent(pdu)) return { pdu, recommended: true };
  const ps = await policyServerOf(s, room.roomId, room.state);
  if (!ps || hasValidPolicySignature(pdu, room.version, ps)) return { pdu, recommended: true };
  // Missing or invalid (the key may have rotated since it was signed): asked for a new one.
  const answer = await askPolicyServer(s, ps, pdu);
  if (answer.kind === "signed") {
    const signed = withPolicySignature(pdu, ps, answer.signature);
    if (hasValidPolicySignature(signed, room.version, ps)) return { pdu: signed, recommended: true };
  }
  s.log.info({ via: ps.via, outcome: answer.kind }, "a received event is not recommended by the room's policy server: soft-failed");
  return { pdu, recommended: false };
}
