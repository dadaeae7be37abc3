// Server-side aggregation of child events into `unsigned.m.relations` (an unsignedHook, per batch of
// events being serialized): m.thread (latest_event in client format, count, current_user_participated),
// m.reference (chunk of event ids) and m.replace (the latest valid edit: same sender, same type, no state
// key; never for a redacted original). Annotations are not bundled, and the original content is kept as
// sent. State events, edits and annotations get no aggregations; thread replies get no thread summary.
// A fixed number of queries per batch, whatever its size. Spec: Client-Server API "Aggregations of child
// events", "Server-side aggregation of m.thread relationships", "Server-side aggregation of m.replace".
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { StoredEvent } from "../store/events.ts";
import { isStateEvent } from "../events/types.ts";
import { roomVersionLookup, serializeEvents } from "../rooms/serialize.ts";
import { effectiveRedactions } from "../rooms/redactions.ts";
import { relationOf } from "./parse.ts";

export interface ThreadAggregation {
  latest_event: Record<string, unknown>;
  count: number;
  current_user_participated: boolean;
}

export async function bundleAggregations(s: Services, r: Requester | undefined, events: StoredEvent[]): Promise<Map<string, Record<string, unknown>>> {
  const out = new Map<string, Record<string, unknown>>();
  const parents = new Map<string, StoredEvent>();
  const threadRoots: string[] = [];
  for (const e of events) {
    // Events nothing points at (known to the event store for fresh events) need no lookups.
    if (isStateEvent(e.pdu) || e.rejectedReason || !s.rooms.events.mayHaveChildren(e.eventId)) continue;
    const rel = relationOf(e.pdu);
    if (rel && (rel.relType === "m.annotation" || rel.relType === "m.replace")) continue;
    parents.set(e.eventId, e);
    if (rel?.relType !== "m.thread") threadRoots.push(e.eventId);
  }
  if (parents.size === 0) return out;
  const ids = [...parents.keys()];
  const add = (id: string, relType: string, value: unknown) => {
    const cur = out.get(id) ?? { "m.relations": {} };
    (cur["m.relations"] as Record<string, unknown>)[relType] = value;
    out.set(id, cur);
  };

  // References and edits: one query; the edit events in one read (mostly cached); redactions of the originals.
  const rows = await s.relations.relationsOfTypes(ids, ["m.reference", "m.replace"]);
  const editRows = rows.filter((x) => x.relType === "m.replace");
  const [editEvents, redactions] = editRows.length > 0
    ? await Promise.all([
        s.rooms.events.getMany(editRows.map((x) => x.eventId)),
        effectiveRedactions(s, [...new Set(editRows.map((x) => x.relatesToId))].map((id) => parents.get(id)!), roomVersionLookup(s)),
      ])
    : [new Map<string, StoredEvent>(), new Map<string, StoredEvent>()];
  const references = new Map<string, { event_id: string }[]>();
  const latestEdit = new Map<string, StoredEvent>();
  for (const row of rows) {
    const parent = parents.get(row.relatesToId)!;
    if (row.roomId !== parent.roomId) continue;
    if (row.relType === "m.reference") {
      references.set(row.relatesToId, [...(references.get(row.relatesToId) ?? []), { event_id: row.eventId }]);
      continue;
    }
    const edit = editEvents.get(row.eventId);
    if (!edit || redactions.has(row.relatesToId)) continue;
    if (edit.pdu.sender !== parent.pdu.sender || edit.pdu.type !== parent.pdu.type || edit.pdu.state_key !== undefined) continue;
    const best = latestEdit.get(row.relatesToId);
    const newer = !best || edit.pdu.origin_server_ts > best.pdu.origin_server_ts || (edit.pdu.origin_server_ts === best.pdu.origin_server_ts && edit.eventId > best.eventId);
    if (newer) latestEdit.set(row.relatesToId, edit);
  }
  for (const [id, chunk] of references) add(id, "m.reference", { chunk });
  for (const [id, edit] of latestEdit) add(id, "m.replace", { event_id: edit.eventId, origin_server_ts: edit.pdu.origin_server_ts, sender: edit.pdu.sender });

  // Threads: the summaries (two queries), who took part (one), the latest replies (one read, then serialized).
  if (threadRoots.length > 0) {
    const summaries = await s.relations.threadSummaries(threadRoots);
    if (summaries.size > 0) {
      const rootsWithReplies = [...summaries.keys()];
      const repliedIn = r ? await s.relations.threadsRepliedIn(r.userId, rootsWithReplies) : new Set<string>();
      const latest = await s.rooms.events.getMany([...summaries.values()].map((x) => x.latestEventId));
      const latestEvents = [...summaries.values()].map((x) => latest.get(x.latestEventId)).filter((e): e is StoredEvent => e !== undefined);
      const serialized = await serializeEvents(s, r, roomVersionLookup(s), latestEvents);
      const byId = new Map(serialized.map((e) => [e.event_id, e]));
      for (const summary of summaries.values()) {
        const latestEvent = byId.get(summary.latestEventId);
        const root = parents.get(summary.rootId)!;
        if (!latestEvent || latest.get(summary.latestEventId)!.roomId !== root.roomId) continue;
        const thread: ThreadAggregation = {
          latest_event: latestEvent as unknown as Record<string, unknown>,
          count: summary.count,
          current_user_participated: r !== undefined && (root.pdu.sender === r.userId || repliedIn.has(summary.rootId)),
        };
        add(summary.rootId, "m.thread", thread);
      }
    }
  }
  return out;
}
