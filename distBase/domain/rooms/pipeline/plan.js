import { isStateEvent } from "../../events/types.js";
import { redactsOf } from "../../events/redaction.js";
/** The entries of `after` that differ from `before` (null: gone), for RoomAfter.changes. */
export function stateChanges(before, after) {
    const out = new Map();
    if (before === after)
        return out;
    for (const [k, id] of after)
        if (before.get(k) !== id)
            out.set(k, id);
    for (const k of before.keys())
        if (!after.has(k))
            out.set(k, null);
    return out;
}
/**
 * The redaction step of planning, for events of either planner: the event a planned event would redact.
 * A state-keyed m.room.redaction never redacts anything, nor does an outlier, a rejected or a soft-failed
 * one. Who may redact — the spec's rule, auth/redaction.ts — is then applied by commit() through
 * rooms/redactions.ts `redactionsToRecord`, against the redaction's own auth events: a redaction that
 * fails it is stored but never applied. Indexers read the outcome (CommittedBatch.redactions).
 */
export function redactionTarget(pdu, room, marks) {
    if (pdu.type !== "m.room.redaction" || isStateEvent(pdu))
        return undefined;
    if (marks.outlier || marks.rejectedReason !== null || marks.softFailed)
        return undefined;
    return redactsOf(pdu, room.version);
}
