// One federation transaction: PUT /_matrix/federation/v1/send/{txnId} to a destination with up to 50
// PDUs (read from the events table, in queue order; redacted as served when a redaction took effect
// since) and up to 100 EDUs, and what its answer means for the queue: delivered, refused (the
// destination answered but will never take these: they are dropped, as Synapse does), or failed (no
// usable answer: keep them and back off). Per-PDU errors in the answer are the receiver's verdicts on
// the events, logged and not retried. Spec: Server-Server API "Transactions", PUT /send/{txnId}.
import type { Services } from "../../domain/services.ts";
import type { Pdu } from "../../domain/events/types.ts";
import { effectiveRedactions } from "../../domain/rooms/redactions.ts";
import { roomVersionLookup } from "../../domain/rooms/serialize.ts";
import { redactEvent } from "../../domain/events/redaction.ts";
import { signOwnEvents } from "../../domain/rooms/own-signature.ts";
import { fedPath } from "../client.ts";
import { FederationError } from "../errors.ts";
import type { Edu } from "./edu-buffer.ts";
import type { QueuedPdu } from "./store.ts";

export const MAX_PDUS_PER_TRANSACTION = 50;
export const MAX_EDUS_PER_TRANSACTION = 100;
/** Time allowed for a transaction's answer (Synapse's federation client timeout is 60 s). */
const TRANSACTION_TIMEOUT_MS = 60_000;
/** The answer is a map of event id to result: small. */
const MAX_ANSWER_BYTES = 1024 * 1024;

export type TransactionOutcome =
  | { kind: "delivered" }
  | { kind: "refused"; reason: string }
  | { kind: "failed"; reason: string; error: unknown };

/** The PDUs of queued rows as they are sent (missing events are left out). */
export async function pdusOf(s: Services, rows: readonly QueuedPdu[]): Promise<Pdu[]> {
  const found = await s.rooms.events.getMany(rows.map((r) => r.eventId));
  const events = rows.map((r) => found.get(r.eventId)).filter((e) => e !== undefined);
  const versionOf = roomVersionLookup(s);
  const redacted = await effectiveRedactions(s, events, versionOf);
  await signOwnEvents(s, events, versionOf);
  const out: Pdu[] = [];
  for (const e of events) {
    if (redacted.has(e.eventId)) out.push(redactEvent(e.pdu, await versionOf(e.roomId)));
    else {
      const { unsigned: _local, ...pdu } = e.pdu;
      out.push(pdu as Pdu);
    }
  }
  return out;
}

/**
 * Whether a failed request means the destination will never take this transaction: it answered with
 * a 4xx other than 401 (it may not have our keys yet), 408 and 429 (come back later).
 */
function isRefusal(err: unknown): err is FederationError {
  return err instanceof FederationError && err.kind === "remote" && err.remoteStatus !== undefined &&
    err.remoteStatus >= 400 && err.remoteStatus < 500 && ![401, 408, 429].includes(err.remoteStatus);
}

export async function sendTransaction(
  s: Services,
  destination: string,
  txnId: string,
  pdus: readonly Pdu[],
  edus: readonly Edu[],
  signal: AbortSignal,
): Promise<TransactionOutcome> {
  const body = { origin: s.config.server_name, origin_server_ts: s.clock.now(), pdus, edus };
  let answer: unknown;
  try {
    answer = await s.federation.putJson(destination, fedPath`/_matrix/federation/v1/send/${txnId}`, body, { timeoutMs: TRANSACTION_TIMEOUT_MS, maxBytes: MAX_ANSWER_BYTES, signal });
  } catch (err) {
    if (isRefusal(err)) return { kind: "refused", reason: err.message };
    return { kind: "failed", reason: (err as Error).message, error: err };
  }
  const results = (answer as { pdus?: unknown } | null)?.pdus;
  if (results && typeof results === "object") {
    for (const [eventId, r] of Object.entries(results as Record<string, unknown>).slice(0, MAX_PDUS_PER_TRANSACTION)) {
      const error = (r as { error?: unknown } | null)?.error;
      if (typeof error === "string") s.log.info({ destination, eventId, error: error.slice(0, 300) }, "the destination did not accept a PDU");
    }
  }
  return { kind: "delivered" };
}
