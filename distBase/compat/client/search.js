import { clientRoute, queryString } from "../http.js";
import { parseDirectoryRequest, searchUserDirectory } from "../../domain/user-directory/search-users.js";
import { parseSearchRequest, searchRoomEvents } from "../../domain/search/search.js";
export function searchRoutes(app, s) {
    clientRoute(app, s, {
        method: "POST", path: "/user_directory/search", auth: "token", op: "searchUserDirectory",
        handler: (c) => {
            const { term, limit } = parseDirectoryRequest(c.body());
            return searchUserDirectory(s, c.requester, term, limit);
        },
    });
    clientRoute(app, s, {
        method: "POST", path: "/search", auth: "token", op: "searchRoomEvents",
        handler: async (c) => {
            const criteria = parseSearchRequest(c.body());
            const nextBatch = queryString(c, "next_batch");
            return { search_categories: criteria ? { room_events: await searchRoomEvents(s, c.requester, criteria, nextBatch) } : {} };
        },
    });
}
