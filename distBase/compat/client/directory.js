import { clientRoute, queryInt, queryString } from "../http.js";
import { createAlias, deleteAlias, getAlias, localAliases } from "../../domain/directory/aliases.js";
import { getDirectoryVisibility, setDirectoryVisibility } from "../../domain/directory/visibility.js";
import { listPublicRooms, publicRoomsBody, requirePublicRoomsAccess } from "../../domain/directory/public-rooms.js";
/** The spec's response: the page without the GraphQL cursors. */
const publicRoomsJson = ({ cursors: _c, ...res }) => res;
export function directoryRoutes(app, s) {
    const alias = "/directory/room/:roomAlias";
    clientRoute(app, s, { method: "PUT", path: alias, auth: "token", op: "createAlias", handler: async (c) => (await createAlias(s, c.requester, c.params.roomAlias, c.body()), {}) });
    clientRoute(app, s, { method: "GET", path: alias, auth: "none", handler: (c) => getAlias(s, c.params.roomAlias) });
    clientRoute(app, s, { method: "DELETE", path: alias, auth: "token", op: "deleteAlias", handler: async (c) => (await deleteAlias(s, c.requester, c.params.roomAlias), {}) });
    clientRoute(app, s, { method: "GET", path: "/rooms/:roomId/aliases", auth: "token", op: "localAliases", handler: (c) => localAliases(s, c.requester, c.params.roomId) });
    const list = "/directory/list/room/:roomId";
    clientRoute(app, s, { method: "GET", path: list, auth: "none", handler: (c) => getDirectoryVisibility(s, c.params.roomId) });
    clientRoute(app, s, { method: "PUT", path: list, auth: "token", op: "setDirectoryVisibility", handler: async (c) => (await setDirectoryVisibility(s, c.requester, c.params.roomId, c.body()), {}) });
    clientRoute(app, s, {
        method: "GET", path: "/publicRooms", auth: "optional",
        handler: async (c) => {
            requirePublicRoomsAccess(s, c.requester); // before the query is read, as for any route needing a token
            return publicRoomsJson(await listPublicRooms(s, c.requester, { limit: queryInt(c, "limit", { min: 0 }), since: queryString(c, "since"), server: queryString(c, "server") }));
        },
    });
    clientRoute(app, s, {
        method: "POST", path: "/publicRooms", auth: "token",
        handler: async (c) => publicRoomsJson(await listPublicRooms(s, c.requester, { ...publicRoomsBody(c.bodyOrEmpty()), server: queryString(c, "server") })),
    });
}
