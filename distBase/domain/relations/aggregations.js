import { isStateEvent } from "../events/types.js";
import { roomVersionLookup, serializeEvents } from "../rooms/serialize.js";
import { effectiveRedactions } from "../rooms/redactions.js";
import { relationOf } from "./parse.js";
export async function bundleAggregations(s, r, events) {
    const out = new Map();
    const parents = new Map();
    const threadRoots = [];
    for (const e of events) {
        // Events nothing points at (known to the event store for fresh events) need no lookups.
        if (isStateEvent(e.pdu) || e.rejectedReason || !s.rooms.events.mayHaveChildren(e.eventId))
            continue;
        const rel = relationOf(e.pdu);
        if (rel && (rel.relType === "m.annotation" || rel.relType === "m.replace"))
            continue;
        parents.set(e.eventId, e);
        if (rel?.relType !== "m.thread")
            threadRoots.push(e.eventId);
    }
    if (parents.size === 0)
        return out;
    const ids = [...parents.keys()];
    const add = (id, relType, value) => {
        const cur = out.get(id) ?? { "m.relations": {} };
        cur["m.relations"][relType] = value;
        out.set(id, cur);
    };
    // References and edits: one query; the edit events in one read (mostly cached); redactions of the originals.
    const rows = await s.relations.relationsOfTypes(ids, ["m.reference", "m.replace"]);
    const editRows = rows.filter((x) => x.relType === "m.replace");
    const [editEvents, redactions] = editRows.length > 0
        ? await Promise.all([
            s.rooms.events.getMany(editRows.map((x) => x.eventId)),
            effectiveRedactions(s, [...new Set(editRows.map((x) => x.relatesToId))].map((id) => parents.get(id)), roomVersionLookup(s)),
        ])
        : [new Map(), new Map()];
    const references = new Map();
    const latestEdit = new Map();
    for (const row of rows) {
        const parent = parents.get(row.relatesToId);
        if (row.roomId !== parent.roomId)
            continue;
        if (row.relType === "m.reference") {
            references.set(row.relatesToId, [...(references.get(row.relatesToId) ?? []), { event_id: row.eventId }]);
            continue;
        }
        const edit = editEvents.get(row.eventId);
        if (!edit || redactions.has(row.relatesToId))
            continue;
        if (edit.pdu.sender !== parent.pdu.sender || edit.pdu.type !== parent.pdu.type || edit.pdu.state_key !== undefined)
            continue;
        const best = latestEdit.get(row.relatesToId);
        const newer = !best || edit.pdu.origin_server_ts > best.pdu.origin_server_ts || (edit.pdu.origin_server_ts === best.pdu.origin_server_ts && edit.eventId > best.eventId);
        if (newer)
            latestEdit.set(row.relatesToId, edit);
    }
    for (const [id, chunk] of references)
        add(id, "m.reference", { chunk });
    for (const [id, edit] of latestEdit)
        add(id, "m.replace", { event_id: edit.eventId, origin_server_ts: edit.pdu.origin_server_ts, sender: edit.pdu.sender });
    // Threads: the summaries (two queries), who took part (one), the latest replies (one read, then serialized).
    if (threadRoots.length > 0) {
        const summaries = await s.relations.threadSummaries(threadRoots);
        if (summaries.size > 0) {
            const rootsWithReplies = [...summaries.keys()];
            const repliedIn = r ? await s.relations.threadsRepliedIn(r.userId, rootsWithReplies) : new Set();
            const latest = await s.rooms.events.getMany([...summaries.values()].map((x) => x.latestEventId));
            const latestEvents = [...summaries.values()].map((x) => latest.get(x.latestEventId)).filter((e) => e !== undefined);
            const serialized = await serializeEvents(s, r, roomVersionLookup(s), latestEvents);
            const byId = new Map(serialized.map((e) => [e.event_id, e]));
            for (const summary of summaries.values()) {
                const latestEvent = byId.get(summary.latestEventId);
                const root = parents.get(summary.rootId);
                if (!latestEvent || latest.get(summary.latestEventId).roomId !== root.roomId)
                    continue;
                const thread = {
                    latest_event: latestEvent,
                    count: summary.count,
                    current_user_participated: r !== undefined && (root.pdu.sender === r.userId || repliedIn.has(summary.rootId)),
                };
                add(summary.rootId, "m.thread", thread);
            }
        }
    }
    return out;
}
