import { relationOf } from "./parse.js";
export const indexRelations = async (tx, s, { room, events, redactions }) => {
    const rows = [];
    const redacted = [...redactions.values()];
    for (const e of events) {
        if (e.pdu.type === "m.room.redaction")
            continue;
        const rel = relationOf(e.pdu);
        if (!rel)
            continue;
        rows.push({
            eventId: e.eventId,
            relatesToId: rel.eventId,
            relType: rel.relType,
            aggregationKey: rel.key ?? null,
            roomId: room.roomId,
            sender: e.pdu.sender,
            type: e.pdu.type,
            streamOrdering: e.streamOrdering,
            threadId: rel.relType === "m.thread" ? rel.eventId : null,
        });
    }
    if (rows.length > 0) {
        // The thread of a relation to a thread reply (e.g. an edit or reaction in a thread): one read for the batch.
        const needThread = rows.filter((r) => r.threadId === null);
        if (needThread.length > 0) {
            const inBatch = new Map(rows.map((r) => [r.eventId, r]));
            const parents = await s.relations.ofEvents(tx, needThread.map((r) => r.relatesToId).filter((id) => !inBatch.has(id)));
            for (const r of needThread) {
                const parent = inBatch.get(r.relatesToId) ?? parents.get(r.relatesToId);
                if (parent)
                    r.threadId = parent.relType === "m.thread" ? parent.relatesToId : parent.threadId;
            }
        }
        await s.relations.insert(tx, rows);
    }
    if (redacted.length > 0)
        await s.relations.remove(tx, redacted);
};
