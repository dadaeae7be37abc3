import { MatrixError } from "../../domain/errors.js";
import { clientRoute } from "../http.js";
import { createBackupVersion, deleteBackupVersion, deleteRoomKeys, getAllRoomKeys, getBackupVersion, getRoomRoomKeys, getSessionRoomKey, putRoomKeys, readKeyData, readRoomsBody, readSessionsBody, updateBackupVersion, } from "../../domain/e2ee/key-backup.js";
/** The `version` query parameter, which the key routes require (as Synapse). */
function version(c) {
    const v = c.query.version;
    const value = Array.isArray(v) ? v[0] : v;
    if (value === undefined || value === "")
        throw new MatrixError("M_MISSING_PARAM", "Missing string query parameter 'version': the backup version must be given", 400);
    return value;
}
export function keyBackupRoutes(app, s) {
    clientRoute(app, s, { method: "POST", path: "/room_keys/version", auth: "token", op: "keyBackup", handler: (c) => createBackupVersion(s, c.requester, c.body()) });
    clientRoute(app, s, { method: "GET", path: "/room_keys/version", auth: "token", op: "keyBackup", handler: (c) => getBackupVersion(s, c.requester) });
    clientRoute(app, s, { method: "GET", path: "/room_keys/version/:version", auth: "token", op: "keyBackup", handler: (c) => getBackupVersion(s, c.requester, c.params.version) });
    clientRoute(app, s, { method: "PUT", path: "/room_keys/version/:version", auth: "token", op: "keyBackup", handler: (c) => updateBackupVersion(s, c.requester, c.params.version, c.body()) });
    clientRoute(app, s, { method: "DELETE", path: "/room_keys/version/:version", auth: "token", op: "keyBackup", handler: (c) => deleteBackupVersion(s, c.requester, c.params.version) });
    clientRoute(app, s, { method: "PUT", path: "/room_keys/keys", auth: "token", op: "keyBackup", handler: (c) => putRoomKeys(s, c.requester, version(c), readRoomsBody(c.body())) });
    clientRoute(app, s, { method: "GET", path: "/room_keys/keys", auth: "token", op: "keyBackup", handler: (c) => getAllRoomKeys(s, c.requester, version(c)) });
    clientRoute(app, s, { method: "DELETE", path: "/room_keys/keys", auth: "token", op: "keyBackup", handler: (c) => deleteRoomKeys(s, c.requester, version(c)) });
    clientRoute(app, s, {
        method: "PUT", path: "/room_keys/keys/:roomId", auth: "token", op: "keyBackup",
        handler: (c) => putRoomKeys(s, c.requester, version(c), new Map([[c.params.roomId, readSessionsBody(c.body())]])),
    });
    clientRoute(app, s, { method: "GET", path: "/room_keys/keys/:roomId", auth: "token", op: "keyBackup", handler: (c) => getRoomRoomKeys(s, c.requester, version(c), c.params.roomId) });
    clientRoute(app, s, { method: "DELETE", path: "/room_keys/keys/:roomId", auth: "token", op: "keyBackup", handler: (c) => deleteRoomKeys(s, c.requester, version(c), c.params.roomId) });
    clientRoute(app, s, {
        method: "PUT", path: "/room_keys/keys/:roomId/:sessionId", auth: "token", op: "keyBackup",
        handler: (c) => putRoomKeys(s, c.requester, version(c), new Map([[c.params.roomId, new Map([[c.params.sessionId, readKeyData(c.body(), "body")]])]])),
    });
    clientRoute(app, s, { method: "GET", path: "/room_keys/keys/:roomId/:sessionId", auth: "token", op: "keyBackup", handler: (c) => getSessionRoomKey(s, c.requester, version(c), c.params.roomId, c.params.sessionId) });
    clientRoute(app, s, { method: "DELETE", path: "/room_keys/keys/:roomId/:sessionId", auth: "token", op: "keyBackup", handler: (c) => deleteRoomKeys(s, c.requester, version(c), c.params.roomId, c.params.sessionId) });
}
