// REST routes for finding things: the user directory and server-side full-text search of room events.
// Spec: Client-Server API "User directory" (POST /user_directory/search), "Server Side Search" (POST /search).
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { clientRoute, queryString, type AuthedCall } from "../http.ts";
import { parseDirectoryRequest, searchUserDirectory } from "../../domain/user-directory/search-users.ts";
import { parseSearchRequest, searchRoomEvents } from "../../domain/search/search.ts";
import { filterOptions } from "../../domain/filters/room-event-filter.ts";

export function searchRoutes(app: FastifyInstance, s: Services): void {
  clientRoute<AuthedCall>(app, s, {
    method: "POST", path: "/user_directory/search", auth: "token", op: "searchUserDirectory",
    handler: (c) => {
      const { term, limit } = parseDirectoryRequest(c.body());
      return searchUserDirectory(s, c.requester, term, limit);
    },
  });
  clientRoute<AuthedCall>(app, s, {
    method: "POST", path: "/search", auth: "token", op: "searchRoomEvents",
    handler: async (c) => {
      const criteria = parseSearchRequest(c.body(), filterOptions(s));
      const nextBatch = queryString(c, "next_batch");
      return { search_categories: criteria ? { room_events: await searchRoomEvents(s, c.requester, criteria, nextBatch) } : {} };
    },
  });
}
