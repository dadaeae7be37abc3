// The full-text index kept after the commit (a durable consumer, declared in src/main.ts): the searchable
// field of each timeline event (index-hooks.ts `searchableText`) goes into event_search in batches, in one
// transaction with the consumer's position — every event indexed exactly once, across restarts and
// SIGKILL — and out of the send's own transaction (one FTS5 / GIN write per batch, not per message).
// Searches wait for it to reach the stream's position (find-events.ts). Spec: "Server Side Search".
import type { DurableConsumer } from "../consumers/durable.ts";
import type { SearchEntry } from "../store/search.ts";
import { inTimeline } from "../store/events.ts";
import { searchableText } from "./index-hooks.ts";

export const SEARCH_INDEXER = "search_index";

export const searchIndexer: DurableConsumer = {
  name: SEARCH_INDEXER,
  // Events committed before the indexer first ran were indexed inside their commit (the earlier scheme).
  startAt: "now",
  batchSize: 500,
  backlog: 5000,
  // Long enough for a busy room's messages to share a batch; a search skips the wait (find-events.ts).
  delayMs: 25,
  async handle(tx, events, s) {
    const candidates = events.filter((e) => e.streamOrdering > 0 && inTimeline(e));
    const texts = new Map<string, SearchEntry>();
    for (const e of candidates) {
      const value = searchableText(e);
      if (value !== undefined) texts.set(e.eventId, { streamOrdering: e.streamOrdering, value });
    }
    if (texts.size === 0) return;
    // A redaction committed before this batch already took the text away (its own commit found nothing
    // to remove from the index then): leave the event out. One committing meanwhile waits for this batch
    // (holdIndex) and then removes what it wrote.
    await s.search.holdIndex(tx);
    for (const id of (await s.rooms.events.redactionsOf([...texts.keys()], tx)).keys()) texts.delete(id);
    await s.search.index(tx, [...texts.values()]);
  },
};
