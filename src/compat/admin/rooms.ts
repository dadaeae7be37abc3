// REST routes of the room admin API (Synapse admin API "Rooms", "Edit Room Membership", "Server Version"):
// room list, details, members, state, messages; block; delete (v2) and its status; joining a local user to a room; the server's version.
// Served at /_impl/admin and /_synapse/admin; admins only.
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { adminRoute, queryBool, queryInt, queryString, type AuthedCall } from "../http.ts";
import { listRooms, roomDetails, roomMembers, roomMessages, roomState } from "../../domain/admin/rooms.ts";
import { deletionStatus, deletionsOfRoom, getRoomBlock, setRoomBlock, startRoomDeletion } from "../../domain/admin/room-deletion.ts";
import { messagesQuery } from "../client/rooms.ts";
import { adminJoin } from "../../domain/admin/join.ts";
import { serverVersion } from "../../domain/admin/server-version.ts";

export function roomAdminRoutes(app: FastifyInstance, s: Services): void {
  adminRoute<AuthedCall>(app, s, {
    method: "GET", path: "/rooms", auth: "token", op: "admin",
    handler: (c) =>
      listRooms(s, c.requester, {
        from: queryInt(c, "from"),
        limit: queryInt(c, "limit"),
        orderBy: queryString(c, "order_by"),
        dir: queryString(c, "dir"),
        searchTerm: queryString(c, "search_term"),
        publicRooms: queryBool(c, "public_rooms"),
        emptyRooms: queryBool(c, "empty_rooms"),
      }),
  });

  adminRoute<AuthedCall>(app, s, {
    method: "GET", path: "/rooms/:roomId", auth: "token", op: "admin",
    handler: (c) => roomDetails(s, c.requester, c.params.roomId!),
  });

  adminRoute<AuthedCall>(app, s, {
    method: "GET", path: "/rooms/:roomId/members", auth: "token", op: "admin",
    handler: (c) => roomMembers(s, c.requester, c.params.roomId!),
  });

  adminRoute<AuthedCall>(app, s, {
    method: "GET", path: "/rooms/:roomId/state", auth: "token", op: "admin",
    handler: (c) => roomState(s, c.requester, c.params.roomId!, queryString(c, "type")),
  });

  adminRoute<AuthedCall>(app, s, {
    method: "GET", path: "/rooms/:roomId/messages", auth: "token", op: "admin",
    handler: (c) => roomMessages(s, c.requester, c.params.roomId!, messagesQuery(s, c)),
  });

  adminRoute<AuthedCall>(app, s, {
    method: "GET", path: "/rooms/:roomId/block", auth: "token", op: "admin",
    handler: (c) => getRoomBlock(s, c.requester, c.params.roomId!),
  });

  adminRoute<AuthedCall>(app, s, {
    method: "PUT", path: "/rooms/:roomId/block", auth: "token", op: "admin",
    handler: (c) => setRoomBlock(s, c.requester, c.params.roomId!, c.body()),
  });

  adminRoute<AuthedCall>(app, s, {
    method: "DELETE", path: "/rooms/:roomId", version: "v2", auth: "token", op: "admin",
    handler: (c) => startRoomDeletion(s, c.requester, c.params.roomId!, c.bodyOrEmpty()),
  });

  adminRoute<AuthedCall>(app, s, {
    method: "GET", path: "/rooms/:roomId/delete_status", version: "v2", auth: "token", op: "admin",
    handler: (c) => deletionsOfRoom(s, c.requester, c.params.roomId!),
  });

  adminRoute<AuthedCall>(app, s, {
    method: "GET", path: "/rooms/delete_status/:deleteId", version: "v2", auth: "token", op: "admin",
    handler: (c) => deletionStatus(s, c.requester, c.params.deleteId!),
  });

  adminRoute<AuthedCall>(app, s, {
    method: "POST", path: "/join/:roomIdOrAlias", auth: "token", op: "admin",
    handler: (c) => adminJoin(s, c.requester, c.params.roomIdOrAlias!, c.body()),
  });

  adminRoute<AuthedCall>(app, s, {
    method: "GET", path: "/server_version", auth: "token", op: "admin",
    handler: (c) => serverVersion(c.requester),
  });
}
