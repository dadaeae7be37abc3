// What an operator sees of the remote events this server refuses: one log line per event — the origin,
// the room, the event id, the rule that refused it and the detail — and a count per rule (process state,
// exposed as weft_federation_rejected_events_total{reason}). Every refusal of a received event passes
// here: the pipeline's outcomes (receiveRemoteEvents: dropped for format, room, signature or an
// unresolvable state; rejected by the auth events or the state before; soft-failed by current state,
// the policy server or a cross-room redaction; accepted only redacted for a bad content hash) and the
// PDUs the /send ingest refuses before the pipeline (prev_events withheld, auth events missing, the
// room's server ACL, a room this server is not in).
// Spec: Server-Server API "Checks performed on receipt of a PDU", "Rejection", "Soft failure".
import type { Services } from "../services.ts";

/** Why a received event did not take effect (a Prometheus label: a fixed set). */
export type RefusalRule =
  | "format"
  | "wrong_room"
  | "signature"
  | "content_hash"
  | "auth_events"
  | "state_before"
  | "current_state"
  | "policy_server"
  | "redaction_elsewhere"
  | "unresolvable_state"
  | "prev_events_withheld"
  | "auth_events_missing"
  | "server_acl"
  | "not_in_room";

export interface Refusal {
  origin: string;
  roomId: string;
  eventId?: string;
  rule: RefusalRule;
  /** What the event did (rejected, soft_failed, dropped, redacted, refused). */
  outcome: string;
  detail?: string;
}

/** Logs one refused event and counts it by rule. */
export function reportRefusal(s: Services, r: Refusal): void {
  const counts = s.processState.refusedEvents;
  counts.set(r.rule, (counts.get(r.rule) ?? 0) + 1);
  s.log.info({ origin: r.origin, roomId: r.roomId, eventId: r.eventId, rule: r.rule, outcome: r.outcome, detail: r.detail }, `federation: ${r.outcome} event from ${r.origin} (${r.rule})`);
}
