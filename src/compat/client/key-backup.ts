// REST routes for server-side key backups: backup versions and the keys in them (whole backup, one
// room, one session). The `version` query parameter is required on key routes. Spec: Client-Server API
// "Server-side key backups". Guests may not use them (as Synapse).
import type { FastifyInstance } from "fastify";
import { MatrixError } from "../../domain/errors.ts";
import type { Services } from "../../domain/services.ts";
import { clientRoute, type AuthedCall, type Call } from "../http.ts";
import {
  backupVersionFromBody, createBackupVersion, deleteBackupVersion, deleteRoomKeys, getAllRoomKeys, getBackupVersion, getRoomRoomKeys,
  getSessionRoomKey, putRoomKeys, readKeyData, readRoomsBody, readSessionsBody, updateBackupVersion,
} from "../../domain/e2ee/key-backup.ts";

/** The `version` query parameter, which the key routes require (as Synapse). */
function version(c: Call): string {
  const v = c.query.version;
  const value = Array.isArray(v) ? v[0] : v;
  if (value === undefined || value === "")
    throw new MatrixError("M_MISSING_PARAM", "Missing string query parameter 'version': the backup version must be given", 400);
  return value;
}

export function keyBackupRoutes(app: FastifyInstance, s: Services): void {
  clientRoute<AuthedCall>(app, s, { method: "POST", path: "/room_keys/version", auth: "token", op: "keyBackup", handler: (c) => createBackupVersion(s, c.requester, backupVersionFromBody(c.body())) });
  clientRoute<AuthedCall>(app, s, { method: "GET", path: "/room_keys/version", auth: "token", op: "keyBackup", handler: (c) => getBackupVersion(s, c.requester) });
  clientRoute<AuthedCall>(app, s, { method: "GET", path: "/room_keys/version/:version", auth: "token", op: "keyBackup", handler: (c) => getBackupVersion(s, c.requester, c.params.version!) });
  clientRoute<AuthedCall>(app, s, { method: "PUT", path: "/room_keys/version/:version", auth: "token", op: "keyBackup", handler: (c) => updateBackupVersion(s, c.requester, c.params.version!, backupVersionFromBody(c.body())) });
  clientRoute<AuthedCall>(app, s, { method: "DELETE", path: "/room_keys/version/:version", auth: "token", op: "keyBackup", handler: (c) => deleteBackupVersion(s, c.requester, c.params.version!) });

  clientRoute<AuthedCall>(app, s, { method: "PUT", path: "/room_keys/keys", auth: "token", op: "keyBackup", handler: (c) => putRoomKeys(s, c.requester, version(c), readRoomsBody(c.body())) });
  clientRoute<AuthedCall>(app, s, { method: "GET", path: "/room_keys/keys", auth: "token", op: "keyBackup", handler: (c) => getAllRoomKeys(s, c.requester, version(c)) });
  clientRoute<AuthedCall>(app, s, { method: "DELETE", path: "/room_keys/keys", auth: "token", op: "keyBackup", handler: (c) => deleteRoomKeys(s, c.requester, version(c)) });

  clientRoute<AuthedCall>(app, s, {
    method: "PUT", path: "/room_keys/keys/:roomId", auth: "token", op: "keyBackup",
    handler: (c) => putRoomKeys(s, c.requester, version(c), new Map([[c.params.roomId!, readSessionsBody(c.body())]])),
  });
  clientRoute<AuthedCall>(app, s, { method: "GET", path: "/room_keys/keys/:roomId", auth: "token", op: "keyBackup", handler: (c) => getRoomRoomKeys(s, c.requester, version(c), c.params.roomId!) });
  clientRoute<AuthedCall>(app, s, { method: "DELETE", path: "/room_keys/keys/:roomId", auth: "token", op: "keyBackup", handler: (c) => deleteRoomKeys(s, c.requester, version(c), c.params.roomId!) });

  clientRoute<AuthedCall>(app, s, {
    method: "PUT", path: "/room_keys/keys/:roomId/:sessionId", auth: "token", op: "keyBackup",
    handler: (c) => putRoomKeys(s, c.requester, version(c), new Map([[c.params.roomId!, new Map([[c.params.sessionId!, readKeyData(c.body(), "body")]])]])),
  });
  clientRoute<AuthedCall>(app, s, { method: "GET", path: "/room_keys/keys/:roomId/:sessionId", auth: "token", op: "keyBackup", handler: (c) => getSessionRoomKey(s, c.requester, version(c), c.params.roomId!, c.params.sessionId!) });
  clientRoute<AuthedCall>(app, s, { method: "DELETE", path: "/room_keys/keys/:roomId/:sessionId", auth: "token", op: "keyBackup", handler: (c) => deleteRoomKeys(s, c.requester, version(c), c.params.roomId!, c.params.sessionId!) });
}
