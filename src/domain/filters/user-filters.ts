// Uploaded filters (spec: Client-Server API "Filtering": POST /user/{userId}/filter, GET
// /user/{userId}/filter/{filterId}) and resolving /sync's `filter` parameter (a filter id or inline JSON).
// Only the owner may upload or read their filters.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { DEFAULT_SYNC_FILTER, parseSyncFilter, type SyncFilter } from "./sync-filter.ts";
import type { LruCache } from "../cache/lru.ts";
import { parseJsonText } from "../json-limits.ts";
import { filterOptions } from "./room-event-filter.ts";

function requireSelf(r: Requester, userId: string, what: string): void {
  if (r.userId !== userId) throw new MatrixError("M_FORBIDDEN", `Cannot ${what} for other users`, 403);
}

export async function createFilter(s: Services, r: Requester, userId: string, body: Record<string, unknown>): Promise<{ filter_id: string }> {
  requireSelf(r, userId, "create filters");
  parseSyncFilter(body);
  return { filter_id: String(await s.filters.add(userId, JSON.stringify(body))) };
}

export async function getFilter(s: Services, r: Requester, userId: string, filterId: string): Promise<Record<string, unknown>> {
  requireSelf(r, userId, "read filters");
  const json = /^\d{1,9}$/.test(filterId) ? await s.filters.get(userId, Number(filterId)) : undefined;
  if (json === undefined) throw new MatrixError("M_NOT_FOUND", "No such filter", 404);
  return JSON.parse(json) as Record<string, unknown>;
}

/** /sync's `filter` parameter: inline JSON when it starts with `{`, else one of the user's filter ids. */
/**
 * Parsed filters by their text (inline JSON) or "user\u0000id" (stored filters never change): a long-polling
 * client sends the same filter with every request. Callers must not mutate the returned filter.
 */
function filterCache(s: Services): LruCache<string, SyncFilter> {
  // Weighed by the key (inline JSON can be kilobytes long) plus the parsed filter.
  return s.caches.get<string, SyncFilter>("sync_filters", 10_000, { weigh: (_f, key) => 1000 + key.length * 4, baseWeight: 16 * 1024 * 1024 });
}

export async function resolveSyncFilter(s: Services, r: Requester, param: string | undefined): Promise<SyncFilter> {
  if (param === undefined) return DEFAULT_SYNC_FILTER;
  const cache = filterCache(s);
  if (param.trimStart().startsWith("{")) {
    const hit = cache.get(param);
    if (hit) return hit;
    const parsed = parseSyncFilter(parseJsonText(param, { what: "filter" }), filterOptions(s));
    cache.set(param, parsed);
    return parsed;
  }
  if (!/^\d{1,9}$/.test(param)) throw new MatrixError("M_INVALID_PARAM", "filter must be a filter ID or a JSON object", 400);
  const key = `${r.userId}\u0000${param}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const json = await s.filters.get(r.userId, Number(param));
  if (json === undefined) throw new MatrixError("M_NOT_FOUND", "No such filter", 404);
  const parsed = parseSyncFilter(JSON.parse(json), filterOptions(s));
  cache.set(key, parsed);
  return parsed;
}
