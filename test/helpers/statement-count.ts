// Counts the database statements one HTTP request runs, through the same hook the metrics use (the
// QueryTimer of src/storage/timing.ts, behind `enable_metrics: true`): every raw SQL statement
// (run/all/get) and every Prisma operation, inside transactions too (a transaction's own entry is left
// out: its statements count). Each statement is put to the request whose async chain ran it (the request
// context carried with `log_request_context: true`), so the server's background work is not counted;
// reads and writes apart (a read-only query's writes are its session's bookkeeping, e.g. last seen).
// Used by the GraphQL room list's batching test.
import type { Homeserver } from "../../src/main.ts";
import { currentRequest } from "../../src/observability/request-context.ts";

export interface RequestStatements {
  reads: number;
  writes: number;
  /** By "client operation" (e.g. "sql all", "prisma User.findFirst"), for a failure's message. */
  byKind: Record<string, number>;
}

/** A Prisma operation that only reads (findFirst, findMany, count, aggregate, groupBy, $queryRaw). */
const PRISMA_READ = /\.(find\w*|count|aggregate|groupBy)$|^\$queryRaw/;

export function countStatements(hs: Homeserver): { of(requestId: string): RequestStatements; stop(): void } {
  const metrics = hs.metrics;
  if (!metrics) throw new Error("countStatements needs enable_metrics: true");
  const original = metrics.observeQuery;
  const perRequest = new Map<string, RequestStatements>();
  metrics.observeQuery = function (client, operation, seconds) {
    const id = currentRequest()?.id;
    if (id !== undefined && operation !== "transaction") {
      let c = perRequest.get(id);
      if (!c) perRequest.set(id, (c = { reads: 0, writes: 0, byKind: {} }));
      const read = client === "sql" ? operation !== "run" : PRISMA_READ.test(operation);
      if (read) c.reads++;
      else c.writes++;
      const k = `${client} ${operation}`;
      c.byKind[k] = (c.byKind[k] ?? 0) + 1;
    }
    return original.call(this, client, operation, seconds);
  };
  return {
    of: (requestId) => perRequest.get(requestId) ?? { reads: 0, writes: 0, byKind: {} },
    stop() {
      metrics.observeQuery = original;
    },
  };
}

/** What a room list shows of each room: name, avatar, last event, unread counts, member count. */
export const ROOM_LIST_QUERY = `query RoomList($first: Int!) { viewer { rooms(first: $first) {
  edges { cursor node {
    roomId name avatarUrl avatar: avatarHttpUrl(size: 48) joinedMemberCount invitedMemberCount
    unreadCounts { total { notifications highlights } }
    timeline(last: 1) { edges { cursor node { eventId type sender originServerTs content } } pageInfo { hasPreviousPage } }
  } }
  pageInfo { hasNextPage endCursor }
} } }`;

/** More of each room, as a room's header and member list show it: aliases, state of one type, the first members. */
export const ROOM_DETAILS_QUERY = `query RoomDetails($first: Int!) { viewer { rooms(first: $first) {
  edges { node {
    roomId canonicalAlias aliases topic
    state(type: "m.room.avatar") { eventId content }
    members(first: 5) { edges { cursor node { userId displayName membership } } pageInfo { hasNextPage } }
  } }
} } }`;
