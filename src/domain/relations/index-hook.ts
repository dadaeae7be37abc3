// The relations index, kept inside the event commit (an in-transaction indexer, declared in src/main.ts):
// each timeline event with a valid m.relates_to becomes a row of event_relations, with the thread it
// belongs to (the root of an m.thread relation, or the thread of the event it relates to); a redaction
// that takes effect removes the redacted event's row so redacted relations drop out of /relations,
// /threads and the aggregations. Spec: Client-Server API "Forming relationships between events",
// "Threading", "Redactions".
import type { EventIndexer } from "../rooms/pipeline/commit.ts";
import type { RelationRow } from "../store/relations.ts";
import type { StoredEvent } from "../store/events.ts";
import type { Services } from "../services.ts";
import type { SqlExecutor } from "../../storage/sql.ts";
import { relationOf } from "./parse.ts";

/** The relation rows of timeline events (their threads found, one read for all). */
export async function relationsOfEvents(tx: SqlExecutor, s: Services, roomId: string, events: readonly StoredEvent[]): Promise<RelationRow[]> {
  const rows: RelationRow[] = [];
  for (const e of events) {
    if (e.pdu.type === "m.room.redaction") continue;
    const rel = relationOf(e.pdu);
    if (!rel) continue;
    rows.push({
      eventId: e.eventId,
      relatesToId: rel.eventId,
      relType: rel.relType,
      aggregationKey: rel.key ?? null,
      roomId,
      sender: e.pdu.sender,
      type: e.pdu.type,
      streamOrdering: e.streamOrdering,
      threadId: rel.relType === "m.thread" ? rel.eventId : null,
    });
  }
  // The thread of a relation to a thread reply (e.g. an edit or reaction in a thread): one read for the batch.
  const needThread = rows.filter((r) => r.threadId === null);
  if (needThread.length > 0) {
    const inBatch = new Map(rows.map((r) => [r.eventId, r]));
    const parents = await s.relations.ofEvents(tx, needThread.map((r) => r.relatesToId).filter((id) => !inBatch.has(id)));
    for (const r of needThread) {
      const parent = inBatch.get(r.relatesToId) ?? parents.get(r.relatesToId);
      if (parent) r.threadId = parent.relType === "m.thread" ? parent.relatesToId : parent.threadId;
    }
  }
  return rows;
}

export const indexRelations: EventIndexer = async (tx, s, { room, events, redactions }) => {
  const rows = await relationsOfEvents(tx, s, room.roomId, events);
  if (rows.length > 0) await s.relations.insert(tx, rows);
  const redacted = [...redactions.values()];
  if (redacted.length > 0) await s.relations.remove(tx, redacted);
};
