// What the search capability writes with every event commit (an in-transaction indexer, declared in
// src/main.ts): redacted events out of the full-text index; each room's join rule and history visibility
// for the user directory; and the searchable field of m.room.message (content.body), m.room.name
// (content.name) and m.room.topic (content.topic) of backfilled history (negative positions, which the
// stream's consumers never see). New events are indexed after their commit (index-consumer.ts).
// Spec: Client-Server API "Server Side Search", "User directory".
import type { StoredEvent } from "../store/events.ts";
import type { SearchEntry } from "../store/search.ts";
import type { EventIndexer } from "../rooms/pipeline/commit.ts";
import { isStateEvent } from "../events/types.ts";

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

export const indexSearch: EventIndexer = async (tx, s, { room, events, redactions, backfilled }) => {
  const entries: SearchEntry[] = [];
  const redacted = [...redactions.values()];
  for (const e of events) {
    const text = backfilled ? searchableText(e) : undefined;
    if (text !== undefined) entries.push({ streamOrdering: e.streamOrdering, value: text });
    if (isStateEvent(e.pdu) && e.pdu.state_key === "") {
      const c = e.pdu.content as Record<string, unknown>;
      if (e.pdu.type === "m.room.join_rules")
        await s.userDirectory.setPublicity(tx, room.roomId, "join_rule", typeof c.join_rule === "string" ? c.join_rule : null);
      if (e.pdu.type === "m.room.history_visibility")
        await s.userDirectory.setPublicity(tx, room.roomId, "history_visibility", typeof c.history_visibility === "string" ? c.history_visibility : null);
    }
  }
  if (entries.length > 0) await s.search.index(tx, entries);
  if (redacted.length > 0) await s.search.remove(tx, room.roomId, redacted);
};
