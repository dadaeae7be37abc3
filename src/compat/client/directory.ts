// REST routes of the room directory: aliases (/directory/room/{roomAlias}, /rooms/{roomId}/aliases), a
// room's directory visibility (/directory/list/room/{roomId}) and the published room list (/publicRooms).
// Spec: Client-Server API "Room aliases", "Listing rooms". Each route parses, calls one domain operation.
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { clientRoute, queryInt, queryString, type AuthedCall, type Call } from "../http.ts";
import { createAlias, deleteAlias, getAlias, localAliases } from "../../domain/directory/aliases.ts";
import { getDirectoryVisibility, setDirectoryVisibility } from "../../domain/directory/visibility.ts";
import { listPublicRooms, publicRoomsBody, requirePublicRoomsAccess, type PublicRoomsPage } from "../../domain/directory/public-rooms.ts";

/** The spec's response: the page without the GraphQL cursors. */
const publicRoomsJson = ({ cursors: _c, ...res }: PublicRoomsPage) => res;

export function directoryRoutes(app: FastifyInstance, s: Services): void {
  const alias = "/directory/room/:roomAlias";
  clientRoute<AuthedCall>(app, s, { method: "PUT", path: alias, auth: "token", op: "createAlias", handler: async (c) => (await createAlias(s, c.requester, c.params.roomAlias!, c.body()), {}) });
  clientRoute<Call>(app, s, { method: "GET", path: alias, auth: "none", handler: (c) => getAlias(s, c.params.roomAlias!) });
  clientRoute<AuthedCall>(app, s, { method: "DELETE", path: alias, auth: "token", op: "deleteAlias", handler: async (c) => (await deleteAlias(s, c.requester, c.params.roomAlias!), {}) });
  clientRoute<AuthedCall>(app, s, { method: "GET", path: "/rooms/:roomId/aliases", auth: "token", op: "localAliases", handler: (c) => localAliases(s, c.requester, c.params.roomId!) });

  const list = "/directory/list/room/:roomId";
  clientRoute<Call>(app, s, { method: "GET", path: list, auth: "none", handler: (c) => getDirectoryVisibility(s, c.params.roomId!) });
  clientRoute<AuthedCall>(app, s, { method: "PUT", path: list, auth: "token", op: "setDirectoryVisibility", handler: async (c) => (await setDirectoryVisibility(s, c.requester, c.params.roomId!, c.body()), {}) });

  clientRoute<Call>(app, s, {
    method: "GET", path: "/publicRooms", auth: "optional",
    handler: async (c) => {
      requirePublicRoomsAccess(s, c.requester); // before the query is read, as for any route needing a token
      return publicRoomsJson(await listPublicRooms(s, c.requester, { limit: queryInt(c, "limit", { min: 0 }), since: queryString(c, "since"), server: queryString(c, "server") }));
    },
  });
  clientRoute<AuthedCall>(app, s, {
    method: "POST", path: "/publicRooms", auth: "token",
    handler: async (c) => publicRoomsJson(await listPublicRooms(s, c.requester, { ...publicRoomsBody(c.bodyOrEmpty()), server: queryString(c, "server") })),
  });
}
