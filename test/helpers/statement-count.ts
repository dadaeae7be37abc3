// Counts the database statements a server runs, through the same hook the metrics use (the QueryTimer of
// src/storage/timing.ts, behind `enable_metrics: true`): every raw SQL statement (run/all/get) and every
// Prisma operation, inside transactions too; a transaction's own entry is left out (its statements count).
// Used by the GraphQL room list's batching test and bench/graphql-viewer.ts.
import type { Homeserver } from "../../src/main.ts";

export interface StatementCounter {
  readonly count: number;
  /** The statements by "client operation" (e.g. "sql all", "prisma User.findFirst"), for a failure's message. */
  readonly byKind: Record<string, number>;
  stop(): void;
}

export function countStatements(hs: Homeserver): StatementCounter {
  const metrics = hs.metrics;
  if (!metrics) throw new Error("countStatements needs enable_metrics: true");
  const original = metrics.observeQuery;
  const byKind: Record<string, number> = {};
  let n = 0;
  metrics.observeQuery = function (client, operation, seconds) {
    if (operation !== "transaction") {
      n++;
      const k = `${client} ${operation}`;
      byKind[k] = (byKind[k] ?? 0) + 1;
    }
    return original.call(this, client, operation, seconds);
  };
  return {
    get count() {
      return n;
    },
    byKind,
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
