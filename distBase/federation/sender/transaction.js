import { effectiveRedactions } from "../../domain/rooms/redactions.js";
import { roomVersionLookup } from "../../domain/rooms/serialize.js";
import { redactEvent } from "../../domain/events/redaction.js";
import { fedPath } from "../client.js";
import { FederationError } from "../errors.js";
export const MAX_PDUS_PER_TRANSACTION = 50;
export const MAX_EDUS_PER_TRANSACTION = 100;
/** Time allowed for a transaction's answer (Synapse's federation client timeout is 60 s). */
const TRANSACTION_TIMEOUT_MS = 60_000;
/** The answer is a map of event id to result: small. */
const MAX_ANSWER_BYTES = 1024 * 1024;
/** The PDUs of queued rows as they are sent (missing events are left out). */
export async function pdusOf(s, rows) {
    const found = await s.rooms.events.getMany(rows.map((r) => r.eventId));
    const events = rows.map((r) => found.get(r.eventId)).filter((e) => e !== undefined);
    const versionOf = roomVersionLookup(s);
    const redacted = await effectiveRedactions(s, events, versionOf);
    const out = [];
    for (const e of events) {
        if (redacted.has(e.eventId))
            out.push(redactEvent(e.pdu, await versionOf(e.roomId)));
        else {
            const { unsigned: _local, ...pdu } = e.pdu;
            out.push(pdu);
        }
    }
    return out;
}
/**
 * Whether a failed request means the destination will never take this transaction: it answered with
 * a 4xx other than 401 (it may not have our keys yet), 408 and 429 (come back later).
 */
function isRefusal(err) {
    return err instanceof FederationError && err.kind === "remote" && err.remoteStatus !== undefined &&
        err.remoteStatus >= 400 && err.remoteStatus < 500 && ![401, 408, 429].includes(err.remoteStatus);
}
export async function sendTransaction(s, destination, txnId, pdus, edus, signal) {
    const body = { origin: s.config.server_name, origin_server_ts: s.clock.now(), pdus, edus };
    let answer;
    try {
        answer = await s.federation.putJson(destination, fedPath `/_matrix/federation/v1/send/${txnId}`, body, { timeoutMs: TRANSACTION_TIMEOUT_MS, maxBytes: MAX_ANSWER_BYTES, signal });
    }
    catch (err) {
        if (isRefusal(err))
            return { kind: "refused", reason: err.message };
        return { kind: "failed", reason: err.message, error: err };
    }
    const results = answer?.pdus;
    if (results && typeof results === "object") {
        for (const [eventId, r] of Object.entries(results).slice(0, MAX_PDUS_PER_TRANSACTION)) {
            const error = r?.error;
            if (typeof error === "string")
                s.log.info({ destination, eventId, error: error.slice(0, 300) }, "the destination did not accept a PDU");
        }
    }
    return { kind: "delivered" };
}
