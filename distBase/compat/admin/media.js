import { adminRoute, queryInt, queryString } from "../http.js";
import { deleteOneMedia, deleteUserMedia, listRoomMedia, listUserMedia, protectMedia, purgeRemoteMediaCache, quarantineMedia, quarantineRoomMedia, quarantineUserMedia, } from "../../domain/admin/media.js";
const page = (c) => ({ from: queryInt(c, "from"), limit: queryInt(c, "limit"), dir: queryString(c, "dir") });
export function mediaAdminRoutes(app, s) {
    const admin = (method, path, handler) => adminRoute(app, s, { method, path, auth: "token", op: "admin", handler });
    admin("GET", "/room/:roomId/media", (c) => listRoomMedia(s, c.requester, c.params.roomId));
    admin("POST", "/room/:roomId/media/quarantine", (c) => quarantineRoomMedia(s, c.requester, c.params.roomId));
    admin("POST", "/quarantine_media/:roomId", (c) => quarantineRoomMedia(s, c.requester, c.params.roomId));
    admin("POST", "/user/:userId/media/quarantine", (c) => quarantineUserMedia(s, c.requester, c.params.userId));
    admin("POST", "/media/quarantine/:serverName/:mediaId", (c) => quarantineMedia(s, c.requester, c.params.serverName, c.params.mediaId, true));
    admin("POST", "/media/unquarantine/:serverName/:mediaId", (c) => quarantineMedia(s, c.requester, c.params.serverName, c.params.mediaId, false));
    admin("POST", "/media/protect/:mediaId", (c) => protectMedia(s, c.requester, c.params.mediaId, true));
    admin("POST", "/media/unprotect/:mediaId", (c) => protectMedia(s, c.requester, c.params.mediaId, false));
    admin("DELETE", "/media/:serverName/:mediaId", (c) => deleteOneMedia(s, c.requester, c.params.serverName, c.params.mediaId));
    admin("GET", "/users/:userId/media", (c) => listUserMedia(s, c.requester, c.params.userId, page(c)));
    admin("DELETE", "/users/:userId/media", (c) => deleteUserMedia(s, c.requester, c.params.userId, page(c)));
    admin("POST", "/purge_media_cache", (c) => purgeRemoteMediaCache(s, c.requester, queryInt(c, "before_ts", { min: 0 })));
}
