import { adminRoute, queryBool, queryInt, queryString } from "../http.js";
import { listRooms, roomDetails, roomMembers, roomMessages, roomState } from "../../domain/admin/rooms.js";
import { deletionStatus, deletionsOfRoom, getRoomBlock, setRoomBlock, startRoomDeletion } from "../../domain/admin/room-deletion.js";
import { messagesQuery } from "../client/rooms.js";
import { adminJoin } from "../../domain/admin/join.js";
import { serverVersion } from "../../domain/admin/server-version.js";
export function roomAdminRoutes(app, s) {
    adminRoute(app, s, {
        method: "GET", path: "/rooms", auth: "token", op: "admin",
        handler: (c) => listRooms(s, c.requester, {
            from: queryInt(c, "from"),
            limit: queryInt(c, "limit"),
            orderBy: queryString(c, "order_by"),
            dir: queryString(c, "dir"),
            searchTerm: queryString(c, "search_term"),
            publicRooms: queryBool(c, "public_rooms"),
            emptyRooms: queryBool(c, "empty_rooms"),
        }),
    });
    adminRoute(app, s, {
        method: "GET", path: "/rooms/:roomId", auth: "token", op: "admin",
        handler: (c) => roomDetails(s, c.requester, c.params.roomId),
    });
    adminRoute(app, s, {
        method: "GET", path: "/rooms/:roomId/members", auth: "token", op: "admin",
        handler: (c) => roomMembers(s, c.requester, c.params.roomId),
    });
    adminRoute(app, s, {
        method: "GET", path: "/rooms/:roomId/state", auth: "token", op: "admin",
        handler: (c) => roomState(s, c.requester, c.params.roomId, queryString(c, "type")),
    });
    adminRoute(app, s, {
        method: "GET", path: "/rooms/:roomId/messages", auth: "token", op: "admin",
        handler: (c) => roomMessages(s, c.requester, c.params.roomId, messagesQuery(c)),
    });
    adminRoute(app, s, {
        method: "GET", path: "/rooms/:roomId/block", auth: "token", op: "admin",
        handler: (c) => getRoomBlock(s, c.requester, c.params.roomId),
    });
    adminRoute(app, s, {
        method: "PUT", path: "/rooms/:roomId/block", auth: "token", op: "admin",
        handler: (c) => setRoomBlock(s, c.requester, c.params.roomId, c.body()),
    });
    adminRoute(app, s, {
        method: "DELETE", path: "/rooms/:roomId", version: "v2", auth: "token", op: "admin",
        handler: (c) => startRoomDeletion(s, c.requester, c.params.roomId, c.bodyOrEmpty()),
    });
    adminRoute(app, s, {
        method: "GET", path: "/rooms/:roomId/delete_status", version: "v2", auth: "token", op: "admin",
        handler: (c) => deletionsOfRoom(s, c.requester, c.params.roomId),
    });
    adminRoute(app, s, {
        method: "GET", path: "/rooms/delete_status/:deleteId", version: "v2", auth: "token", op: "admin",
        handler: (c) => deletionStatus(s, c.requester, c.params.deleteId),
    });
    adminRoute(app, s, {
        method: "POST", path: "/join/:roomIdOrAlias", auth: "token", op: "admin",
        handler: (c) => adminJoin(s, c.requester, c.params.roomIdOrAlias, c.body()),
    });
    adminRoute(app, s, {
        method: "GET", path: "/server_version", auth: "token", op: "admin",
        handler: (c) => serverVersion(c.requester),
    });
}
