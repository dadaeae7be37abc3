// What the search capability writes with every event commit (an in-transaction indexer, declared in
// src/main.ts): redacted events out of the full-text index; each room's join rule and history visibility
// for the user directory (from the changes of current state); and the searchable field of m.room.message (content.body), m.room.name
// (content.name) and m.room.topic (content.topic) of backfilled history (negative positions, which the
// stream's consumers never see). New events are indexed after their commit (index-consumer.ts).
// Spec: Client-Server API "Server Side Search", "User directory".
import type { StoredEvent } from "../store/events.ts";
import type { SearchEntry } from "../store/search.ts";
import type { EventIndexer } from "../rooms/pipeline/commit.ts";

/** The search keys of the spec and the event type each belongs to. */
export const SEARCH_KEYS = { "content.body": "m.room.message", "content.name": "m.room.name", "content.topic": "m.room.topic" } as const;
export type SearchKey = keyof typeof SEARCH_KEYS;

/** The text an event contributes to the index, if any. */
export function searchableText(e: StoredEvent): string | undefined {
  const { pdu } = e;
  const content = pdu.content as Record<string, unknown>;
  let value: unknown;
  if (pdu.type === "m.room.message") value = content.body;
  else if ((pdu.type === "m.room.name" || pdu.type === "m.room.topic") && pdu.state_key === "") value = pdu.type === "m.room.name" ? content.name : content.topic;
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}

const PUBLICITY = { "m.room.join_rules\u0000": ["join_rule", "join_rule"], "m.room.history_visibility\u0000": ["history_visibility", "history_visibility"] } as const;

export const indexSearch: EventIndexer = async (tx, s, { room, events, stored, redactions, backfilled, stateChanges }) => {
  const entries: SearchEntry[] = [];
  const redacted = [...redactions.values()];
  for (const e of events) {
    const text = backfilled ? searchableText(e) : undefined;
    if (text !== undefined) entries.push({ streamOrdering: e.streamOrdering, value: text });
  }
  // The room's join rule and history visibility as current state has them (from a timeline event, or
  // from the state a remote join or a partial-state resync brought).
  for (const [key, [field, contentKey]] of Object.entries(PUBLICITY)) {
    if (!stateChanges.has(key)) continue;
    const id = stateChanges.get(key);
    const pdu = id ? (stored.find((e) => e.eventId === id)?.pdu ?? (await s.rooms.events.get(id))?.pdu) : undefined;
    const v = pdu?.content[contentKey];
    await s.userDirectory.setPublicity(tx, room.roomId, field, typeof v === "string" ? v : null);
  }
  if (entries.length > 0) await s.search.index(tx, entries);
  if (redacted.length > 0) await s.search.remove(tx, room.roomId, redacted);
};
